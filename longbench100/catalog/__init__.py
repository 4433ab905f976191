"""Catalog: what the project declares (task info, suites, shortcut limits, judge styles, entities)."""
