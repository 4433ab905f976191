"""Running longbench100 data where evaluations already run: lm-evaluation-harness tasks, Inspect tasks,
and reading their outputs back as predictions."""
