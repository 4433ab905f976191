"""Analyses over generated data and predictions: Dolce focus categories, information coverage, prompt parts."""
