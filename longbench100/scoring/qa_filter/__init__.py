"""The QA filter: drop QA items a model answers without the context (closed-book)."""
