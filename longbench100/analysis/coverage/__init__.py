"""Information coverage: the share of each sample's gold that a model's reply covers (docs/coverage.md)."""
