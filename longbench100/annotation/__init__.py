"""Chunk annotations by a model (ETHIC's construction): per chunk of a long document, a short summary or the
names it mentions, asked of any OpenAI-compatible server, cached, and handed to the one-document tasks."""
