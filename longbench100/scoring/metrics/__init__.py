"""Metrics: per-sample scores of predictions (classic metrics, parsers, ranking, sections, label match)."""
