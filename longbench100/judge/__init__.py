"""Judge: rubric models that grade answers and label chunks (prompts, parsing, verdicts, cache, cost)."""
