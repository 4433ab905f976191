"""Generation: fit real documents into exact whole-prompt token budgets and write the benchmark files."""
