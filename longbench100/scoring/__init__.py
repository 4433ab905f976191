"""Scoring: metrics, the QA filter, Base Ability and LongScore aggregates."""
