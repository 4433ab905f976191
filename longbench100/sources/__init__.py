"""Sources: the registry of upstream datasets, where they are read from, cleaning, records, token counts."""
