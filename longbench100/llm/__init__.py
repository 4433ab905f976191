"""LLM access: the OpenAI-compatible client and the options that say where an endpoint is."""
