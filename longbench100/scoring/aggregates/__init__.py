"""Aggregates: means, Base Ability, LongScore, depth and suite summaries over per-sample scores."""
