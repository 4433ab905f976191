"""No-model shortcut baselines: does every task need its context? (``longbench100 baselines``, docs/baselines.md)."""
