"""Lexical retrieval over a source's own documents (hard negatives for the HELMET retrieval tasks)."""
