"""The ``report`` output: load results.json files, render the markdown tables and the PNG plots."""
