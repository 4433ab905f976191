"""Folders: the data-folder layout and records, the output guard, locks and writability checks."""
