"""The values ``score``'s metric options choose from, apart from the scoring machinery using them.

``score --help`` and ``filter --help`` build their options from these names, so they start without
loading the metrics, the judge's HTTP client or worker processes.
"""

METRIC_MODES = ("auto", "classic", "judge")
"""``--metric``: auto (the LLM judge when one is set, else classic metrics), classic or judge."""

ROUGE_VARIANTS = ("longbench", "longbench-library", "rouge-score")
"""``--rouge-variant``: the ROUGE-L implementations of :mod:`.classic`."""
DEFAULT_ROUGE_VARIANT = "longbench"
