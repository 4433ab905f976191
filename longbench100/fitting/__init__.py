"""Fitting: a prompt at an exact token budget (fit, packing, pieces, spans, seeded RNG, templates)."""
