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

from ..analysis.coverage_rubric import COVERAGE_METRIC, coverage_parts, coverage_score
from ..llm_client import LLMClient, error_reason
from .judge_cache import JudgeCache
from .judge_parse import qa_parts, qa_score, summary_parts, summary_score
from .judge_prompts import JudgePrompt

TOKEN_ENCODING = "cl100k_base"


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
    """Total tokens of ``texts`` in tiktoken's cl100k_base (bundled ranks, no network), the usual judge-cost yardstick."""
    from ..tokenization import load_tokenizer

    return sum(load_tokenizer(TOKEN_ENCODING).count_batch(texts))


@dataclass(frozen=True)
class Verdict:
    """What the judge made of one prompt: the score (``None``: ungraded), the raw reply, why it is ungraded
    (``"invalid reply"``, ``"truncated reply"``, ``"request failed (HTTP 503)"``) and the rubric's sub-scores."""

    score: float | None
    reply: str | None
    reason: str | None = None
    parts: dict | None = None


def verdict_parts(prompt: JudgePrompt, reply: str) -> dict | None:
    """The sub-scores of a judge reply under the prompt's rubric, or ``None`` when it holds no valid verdict."""
    if prompt.metric == "qa_judge":
        return qa_parts(reply)
    if prompt.metric == COVERAGE_METRIC:
        return coverage_parts(reply)
    return summary_parts(reply, prompt.n_sentences)


def verdict_score(prompt: JudgePrompt, parts: dict) -> float:
    """The score of valid sub-scores (from :func:`verdict_parts`) under the prompt's rubric."""
    if prompt.metric == "qa_judge":
        return qa_score(parts)
    if prompt.metric == COVERAGE_METRIC:
        return coverage_score(parts)
    return summary_score(parts)


def _verdict(prompt: JudgePrompt, reply: str | None, failure: str | None, truncated: bool) -> Verdict:
    """Judge one reply: a failed request, a cut-off reply or an unparsable one is ungraded, with its reason."""
    if reply is None:
        return Verdict(None, None, f"request failed ({failure or 'unknown'})")
    if truncated:
        return Verdict(None, reply, "truncated reply")
    parts = verdict_parts(prompt, reply)
    if parts is None:
        return Verdict(None, reply, "invalid reply")
    return Verdict(verdict_score(prompt, parts), reply, parts=parts)


class Judge:
    """A judge model plus its reply cache."""

    def __init__(self, config: JudgeConfig, cache: JudgeCache | None = None) -> None:
        self.config = config
        self.cache = cache or JudgeCache(config.model, base_url=config.base_url, max_tokens=config.max_tokens)
        self.stats = JudgeStats()
        self.verdicts: dict[str, Verdict] = {}
        """Every verdict of this judge's runs, by prompt text (read by the per-sample log)."""

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

    def needs_calls(self, prompts: list[JudgePrompt]) -> bool:
        """Whether grading ``prompts`` has to ask the judge at all (some reply is not cached)."""
        return bool(self._uncached(prompts)[0])

    def plan(self, prompts: list[JudgePrompt]) -> JudgePlan:
        """Count the calls (after cache hits) and prompt tokens that grading ``prompts`` needs; sends nothing."""
        to_send, cached = self._uncached(prompts)
        return JudgePlan(len(to_send) + len(cached), len(cached), len(to_send), count_tokens(to_send))

    def grade(self, prompts: list[JudgePrompt], *, progress: bool = True) -> list[float | None]:
        """Grade every prompt (0-1, or ``None`` when ungraded), asking the judge only for uncached ones.

        Each prompt's :class:`Verdict` (reply, reason, sub-scores) is kept in :attr:`verdicts`.
        """
        to_send, replies = self._uncached(prompts)
        self.stats.cache_hits += len(replies)
        truncated: set[str] = set()
        failures: dict[str, str] = {}
        if to_send:
            first = {}
            for prompt in prompts:
                first.setdefault(prompt.text, prompt)
            sent, truncated, failures = asyncio.run(self._request_all([first[text] for text in to_send], progress))
            replies.update(sent)
        scores = []
        for prompt in prompts:
            verdict = _verdict(prompt, replies.get(prompt.text), failures.get(prompt.text), prompt.text in truncated)
            if verdict.reason == "truncated reply":
                self.stats.truncated_replies += 1
            elif verdict.reason == "invalid reply":
                self.stats.invalid_replies += 1
            self.verdicts[prompt.text] = verdict
            scores.append(verdict.score)
        return scores

    async def _request_all(
        self, prompts: list[JudgePrompt], progress: bool
    ) -> tuple[dict[str, str], set[str], dict[str, str]]:
        """Send every prompt (bounded concurrency); return the replies that arrived, the prompts whose reply
        was cut off at ``max_tokens``, and the failure reason of each prompt whose request failed for good.
        Only complete replies with a valid verdict are cached."""
        config = self.config
        client = LLMClient.from_settings(config)
        replies: dict[str, str] = {}
        truncated: set[str] = set()
        failures: dict[str, str] = {}

        async def one(prompt: JudgePrompt) -> None:
            text = prompt.text
            result = await client.complete(text, max_tokens=config.max_tokens, temperature=0.0)
            self.stats.calls += 1
            if result.text is None:
                failures[text] = error_reason(result.error or "unknown")
                self.stats.failed[failures[text]] += 1
                return
            replies[text] = result.text
            if result.finish_reason == "length":
                truncated.add(text)
                return
            if verdict_parts(prompt, result.text) is None:
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
        return replies, truncated, failures
