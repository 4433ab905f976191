"""What a user sets about an LLM judge (or annotator): model, server, key variable and limits.

Kept apart from the judge's machinery (:mod:`longbench100.judge.setup`, :mod:`longbench100.judge.grader`, which load the HTTP client),
so commands that only carry these options, like ``generate`` without an annotator, start without it.
"""

import os
from dataclasses import dataclass

OPENAI_BASE_URL = "https://api.openai.com/v1"
ANNOTATOR_MAX_TOKENS = 400
"""The annotator's default reply budget (``generate --annotator-max-tokens``): a summary of five sentences or a list of names."""
ANNOTATOR_LOOP_PENALTY = 1.0
"""The annotator's default loop penalty (``generate --annotator-loop-penalty``): on the replies of SmolLM2-135M
that repeated themselves to the budget, 1.0 gave a usable label for all 128, 0.5 for 127 (docs/benchmarks.md)."""


@dataclass(frozen=True)
class JudgeOptions:
    """The judge settings a user gives: model (``None``: no judge), server, key variable and limits."""

    model: str | None = None
    base_url: str = OPENAI_BASE_URL
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    max_tokens: int = 1024
    loop_penalty: float = 0.0
    """The frequency penalty of a second ask after a reply that ran to the budget with nothing usable (0: none)."""

    @classmethod
    def for_annotator(
        cls,
        model: str | None,
        base_url: str = OPENAI_BASE_URL,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        max_tokens: int = ANNOTATOR_MAX_TOKENS,
        loop_penalty: float = ANNOTATOR_LOOP_PENALTY,
    ) -> "JudgeOptions":
        """An annotator's settings, with ``generate``'s defaults: a judge's, with a shorter reply budget
        (:data:`ANNOTATOR_MAX_TOKENS`) and the second ask for replies that loop to it (frequency penalty
        :data:`ANNOTATOR_LOOP_PENALTY`; 0 turns it off)."""
        return cls(model, base_url, api_key_env, concurrency, max_tokens, loop_penalty)

    def config(self) -> "JudgeConfig":
        """The judge's connection settings, with the key read from :attr:`api_key_env`."""
        if not self.model:
            raise ValueError("no judge model")
        api_key = os.environ.get(self.api_key_env) or None
        return JudgeConfig(
            self.model,
            self.base_url,
            api_key,
            concurrency=self.concurrency,
            max_tokens=self.max_tokens,
            loop_penalty=self.loop_penalty,
        )


@dataclass(frozen=True)
class JudgeConfig:
    """Where and how to reach the judge model."""

    model: str
    base_url: str
    api_key: str | None = None
    concurrency: int = 8
    max_tokens: int = 1024
    timeout_s: float = 300.0
    max_retries: int = 6
    backoff_base_s: float = 1.0
    loop_penalty: float = 0.0
    """Where not 0: a reply cut off at ``max_tokens`` that holds nothing usable (a small model repeating itself to
    the budget) is asked once more, still greedy, with this OpenAI ``frequency_penalty``."""
