"""Grade answers with an LLM judge on any OpenAI-compatible chat endpoint, caching every reply on disk.

Identical prompts are sent once; cached replies are never re-requested. Calls use temperature 0 and
the shared :class:`~longbench100.llm.client.LLMClient` (bounded concurrency, retries with backoff
on 429, 5xx and timeouts). A prompt whose request failed for good, whose reply was cut off at the
reply budget (``finish_reason`` ``"length"``), or whose reply holds no valid verdict, grades as
``None`` (ungraded), never 0. Only replies with a valid verdict are cached, so such prompts are
asked again on the next run (for instance with a larger ``--judge-max-tokens``).

HELMET summaries (``summary_judge_helmet``) take several calls: the key points of each reference
(extracted once, kept in a :class:`KeyPointStore` for the data fingerprint), then a precision and a
recall call per summary, combined by :func:`judge_helmet.summary_verdict`.
"""

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from longbench100.catalog.judge_styles import SUMMARY_HELMET
from longbench100.core.progress import progress_bar
from longbench100.judge.cache import JudgeCache
from longbench100.judge.helmet import summary_calls, summary_verdict
from longbench100.judge.key_points import KeyPointStore
from longbench100.judge.parse import weighted_section_parts
from longbench100.judge.prompts import (
    KEY_POINTS,
    SECTION_JUDGE,
    JudgePrompt,
    key_points_prompt,
    output_sentences,
    recall_prompt,
)
from longbench100.judge.verdict import Verdict, judge_verdict, verdict_parts, weighted_verdict
from longbench100.llm.options import JudgeConfig

TOKEN_ENCODING = "cl100k_base"
RATING_ALTERNATIVES = 5
"""Alternatives per token asked for with a section rating (``top_logprobs``), to weight the 1-5 ratings."""


@dataclass(frozen=True)
class JudgePlan:
    """What grading a list of prompts will cost: distinct prompts, cache hits, calls and their prompt tokens."""

    unique_prompts: int
    cache_hits: int
    calls: int
    prompt_tokens: int
    key_point_calls: int = 0
    """Of ``calls``: key-point extractions (HELMET summaries), whose recall calls are counted with estimated tokens."""


@dataclass
class JudgeStats:
    """What one grading run did: cache hits, calls sent, calls that failed (by reason), invalid and cut-off replies."""

    cache_hits: int = 0
    calls: int = 0
    failed: Counter = field(default_factory=Counter)
    invalid_replies: int = 0
    truncated_replies: int = 0
    second_asks: int = 0
    """Replies cut off with nothing usable that were asked again with the loop penalty."""
    second_ask_labels: int = 0
    """Of :attr:`second_asks`: those whose second reply was usable."""
    section_ratings: Counter = field(default_factory=Counter)
    """Section verdicts by how their 1-5 ratings were read: ``probability-weighted`` (logprobs) or ``plain``."""

    def to_json(self) -> dict:
        """A plain dict for results.json."""
        return {
            "cache_hits": self.cache_hits,
            "calls": self.calls,
            "failed_calls": sum(self.failed.values()),
            "failed_by_reason": dict(self.failed),
            "invalid_replies": self.invalid_replies,
            "truncated_replies": self.truncated_replies,
            **(
                {"second_asks": self.second_asks, "usable_second_replies": self.second_ask_labels}
                if self.second_asks
                else {}
            ),
            **({"section_ratings": dict(self.section_ratings)} if self.section_ratings else {}),
        }


def count_tokens(texts: list[str]) -> int:
    """Total tokens of ``texts`` in tiktoken's cl100k_base (bundled ranks, no network), the usual judge-cost yardstick."""
    from longbench100.text.tokenization import load_tokenizer

    return sum(load_tokenizer(TOKEN_ENCODING).count_batch(texts))


class Judge:
    """A judge model plus its reply cache."""

    def __init__(
        self,
        config: JudgeConfig,
        cache: JudgeCache | None = None,
        *,
        data_fingerprint: str | None = None,
        role: str = "judge",
    ) -> None:
        self.config = config
        self.role = role  # what the progress line calls the model: judge, annotator, evaluator
        self.cache = cache or JudgeCache(
            config.model, base_url=config.base_url, max_tokens=config.max_tokens
        )
        self.key_points = KeyPointStore(
            config.model,
            base_url=config.base_url,
            max_tokens=config.max_tokens,
            data_fingerprint=data_fingerprint,
        )
        """The key points of reference summaries (HELMET summaries), kept for the data of ``data_fingerprint``."""
        self.stats = JudgeStats()
        self.verdicts: dict[str, Verdict] = {}
        """Every verdict of this judge's runs, by prompt text (read by the per-sample log)."""
        self.weighted: dict[str, dict] = {}
        """Probability-weighted section ratings by prompt text, where the judge's server sent logprobs."""
        self.cut_off: set[str] = set()
        """Prompts whose reply (sent or cached) was cut off at the reply budget (kept only where the rubric reads what it holds)."""
        self.second_ask_failures: dict[str, str] = {}
        """Prompts whose second ask (:attr:`JudgeConfig.loop_penalty`) failed for good, with the reason."""

    def describe(self) -> dict:
        """The judge's settings and this run's statistics, for results.json and manifests."""
        config = self.config
        return {
            "model": config.model,
            "base_url": config.base_url,
            "max_tokens": config.max_tokens,
            "temperature": 0.0,
            **self.stats.to_json(),
        }

    def _uncached(self, prompts: list[JudgePrompt]) -> tuple[list[str], dict[str, str]]:
        """Split the distinct prompt texts into those to send and the cached replies of the others."""
        cached: dict[str, str] = {}
        to_send: list[str] = []
        for text in dict.fromkeys(prompt.text for prompt in prompts):
            entry = self.cache.get(text)
            if (
                entry is None
                or entry.get("frequency_penalty", self.config.loop_penalty)
                != self.config.loop_penalty
            ):
                to_send.append(
                    text
                )  # (a reply a second ask got with another penalty is not what this run would get)
            else:
                cached[text] = entry["text"]
                if isinstance(entry.get("weighted"), dict):
                    self.weighted[text] = entry["weighted"]
                if entry.get("finish_reason") == "length":
                    self.cut_off.add(text)
        return to_send, cached

    def _known_key_points(self, reference: str) -> list[str] | None:
        """The key points of ``reference`` known without a call: stored, or in a cached extraction reply."""
        stored = self.key_points.get(reference)
        if stored is not None:
            return stored
        prompt = key_points_prompt(reference)
        entry = self.cache.get(prompt.text)
        parts = None if entry is None else verdict_parts(prompt, entry["text"])
        return None if parts is None else parts["key_points"]

    def _planned_calls(
        self, prompts: list[JudgePrompt]
    ) -> tuple[list[JudgePrompt], list[JudgePrompt]]:
        """The calls grading ``prompts`` makes, and the recall calls of HELMET summaries whose key points are not
        extracted yet, rendered with the reference's sentences in place of its key points (for a token estimate)."""
        calls = [prompt for prompt in prompts if prompt.metric != SUMMARY_HELMET]
        estimated = []
        helmet = [prompt for prompt in prompts if prompt.metric == SUMMARY_HELMET]
        known = {
            reference: self._known_key_points(reference)
            for reference in dict.fromkeys(p.reference for p in helmet)
        }
        calls += [
            key_points_prompt(reference) for reference, points in known.items() if points is None
        ]
        for prompt in helmet:
            calls += summary_calls(prompt, known[prompt.reference])
            if known[prompt.reference] is None:
                estimated.append(recall_prompt(output_sentences(prompt.reference), prompt.summary))
        return calls, estimated

    def needs_calls(self, prompts: list[JudgePrompt]) -> bool:
        """Whether grading ``prompts`` has to ask the judge at all (some reply or key point list is not cached)."""
        calls, estimated = self._planned_calls(prompts)
        return bool(estimated) or bool(self._uncached(calls)[0])

    def plan(self, prompts: list[JudgePrompt]) -> JudgePlan:
        """Count the calls (after cache hits) and prompt tokens that grading ``prompts`` needs; sends nothing.

        Key-point extractions count as calls; the recall calls that wait for them count with an estimate
        of their tokens (see :meth:`_planned_calls`).
        """
        calls, estimated = self._planned_calls(prompts)
        to_send, cached = self._uncached(calls)
        sending = set(to_send)
        extractions = sum(prompt.text in sending for prompt in calls if prompt.metric == KEY_POINTS)
        estimated_texts = list(dict.fromkeys(prompt.text for prompt in estimated))
        sent = to_send + estimated_texts
        return JudgePlan(
            len(sent) + len(cached), len(cached), len(sent), count_tokens(sent), extractions
        )

    def grade(self, prompts: list[JudgePrompt], *, progress: bool = True) -> list[float | None]:
        """Grade every prompt (0-1, or ``None`` when ungraded), asking the judge only for uncached ones.

        HELMET summary prompts first get the key points of their references (stored, else extracted
        by the judge and stored), then their precision and recall calls go out with the other prompts.
        Each prompt's :class:`Verdict` (reply, reason, sub-scores) is kept in :attr:`verdicts`.
        """
        verdicts = self._judge(prompts, progress)
        scores = []
        for prompt in prompts:
            verdict = verdicts[prompt.text]
            reason = verdict.reason or ""
            if reason.startswith("truncated reply"):
                self.stats.truncated_replies += 1
            elif reason.startswith("invalid reply"):
                self.stats.invalid_replies += 1
            self.verdicts[prompt.text] = verdict
            scores.append(verdict.score)
        return scores

    def _judge(self, prompts: list[JudgePrompt], progress: bool) -> dict[str, Verdict]:
        """The verdict of every prompt by text, HELMET summaries combined from their calls."""
        helmet = [prompt for prompt in prompts if prompt.metric == SUMMARY_HELMET]
        key_points = self._key_points(
            list(dict.fromkeys(prompt.reference for prompt in helmet)), progress
        )
        calls = [prompt for prompt in prompts if prompt.metric != SUMMARY_HELMET]
        for prompt in helmet:
            points = key_points[prompt.reference]
            calls += summary_calls(prompt, None if isinstance(points, Verdict) else points)
        asked = self._ask(calls, progress)
        combined = {
            prompt.text: summary_verdict(prompt, key_points[prompt.reference], asked)
            for prompt in helmet
        }
        return {**asked, **combined}

    def _key_points(self, references: list[str], progress: bool) -> dict[str, list[str] | Verdict]:
        """The key points of each reference: stored, else extracted by the judge (and stored); the ungraded
        verdict of the extraction where it gave none."""
        found: dict[str, list[str] | Verdict] = {}
        missing: dict[str, JudgePrompt] = {}
        for reference in references:
            stored = self.key_points.get(reference)
            if stored is None:
                missing[reference] = key_points_prompt(reference)
            else:
                found[reference] = stored
        asked = self._ask(list(missing.values()), progress) if missing else {}
        for reference, prompt in missing.items():
            verdict = asked[prompt.text]
            if verdict.parts is None:
                found[reference] = verdict
            else:
                key_points = verdict.parts["key_points"]
                found[reference] = key_points
                self.key_points.put(reference, key_points)
        return found

    def _ask(self, prompts: list[JudgePrompt], progress: bool) -> dict[str, Verdict]:
        """The verdict of every distinct prompt text: cached replies are read, the others are sent."""
        to_send, replies = self._uncached(prompts)
        self.stats.cache_hits += len(replies)
        first: dict[str, JudgePrompt] = {}
        for prompt in prompts:
            first.setdefault(prompt.text, prompt)
        truncated: set[str] = set()
        failures: dict[str, str] = {}
        if to_send:
            sent, truncated, failures = asyncio.run(
                self._request_all([first[text] for text in to_send], progress)
            )
            replies.update(sent)
        self.cut_off |= truncated
        truncated = self.cut_off
        verdicts = {
            text: judge_verdict(prompt, replies.get(text), failures.get(text), text in truncated)
            for text, prompt in first.items()
        }
        for text, reason in self.second_ask_failures.items():
            if text in verdicts and verdicts[text].parts is None:
                verdicts[text] = Verdict(
                    None,
                    verdicts[text].reply,
                    f"{verdicts[text].reason}; second ask failed ({reason})",
                )
        for text, prompt in first.items():
            if prompt.metric == SECTION_JUDGE and verdicts[text].score is not None:
                verdicts[text] = weighted_verdict(verdicts[text], self.weighted.get(text))
                self.stats.section_ratings[
                    "probability-weighted" if text in self.weighted else "plain"
                ] += 1
        return verdicts

    async def _request_all(
        self, prompts: list[JudgePrompt], progress: bool
    ) -> tuple[dict[str, str], set[str], dict[str, str]]:
        """Send every prompt (bounded concurrency); return the replies that arrived, the prompts whose reply
        was cut off at ``max_tokens``, and the failure reason of each prompt whose request failed for good.
        Only complete replies with a valid verdict are cached."""
        # the HTTP client loads only when a judge is asked (grading also serves runs without one)
        from longbench100.llm.client import LLMClient, error_reason

        config = self.config
        client = LLMClient.from_settings(config)
        replies: dict[str, str] = {}
        truncated: set[str] = set()
        failures: dict[str, str] = {}

        async def one(prompt: JudgePrompt) -> None:
            text = prompt.text
            rated = prompt.metric == SECTION_JUDGE
            result = await client.complete(
                text,
                max_tokens=config.max_tokens,
                temperature=0.0,
                top_logprobs=RATING_ALTERNATIVES if rated else None,
            )
            self.stats.calls += 1
            if result.text is None:
                failures[text] = error_reason(result.error or "unknown")
                self.stats.failed[failures[text]] += 1
                return
            reply = result.text
            cut_off = result.finish_reason == "length"
            penalty = 0.0
            usable = judge_verdict(prompt, reply, None, cut_off).parts is not None
            if cut_off and config.loop_penalty and not usable:
                second = await client.complete(
                    text,
                    max_tokens=config.max_tokens,
                    temperature=0.0,
                    top_logprobs=RATING_ALTERNATIVES if rated else None,
                    frequency_penalty=config.loop_penalty,
                )
                self.stats.calls += 1
                self.stats.second_asks += 1
                if second.text is None:
                    self.second_ask_failures[text] = error_reason(second.error or "unknown")
                    self.stats.failed[self.second_ask_failures[text]] += 1
                else:
                    result, reply, penalty = second, second.text, config.loop_penalty
                    cut_off = result.finish_reason == "length"
                    usable = judge_verdict(prompt, reply, None, cut_off).parts is not None
            replies[text] = reply
            if cut_off:
                truncated.add(text)
            if not usable:
                return
            self.stats.second_ask_labels += bool(penalty)
            weighted = (
                weighted_section_parts(reply, result.logprobs)
                if rated and result.logprobs
                else None
            )
            if weighted:
                self.weighted[text] = weighted
            self.cache.put(
                text,
                reply,
                finish_reason=result.finish_reason,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                **({"cut_off_kept": True} if cut_off else {}),
                **({"frequency_penalty": penalty} if penalty else {}),
                **({"weighted": weighted} if weighted else {}),
            )

        try:
            with progress_bar(len(prompts), self.role, "call", progress) as bar:
                for finished in asyncio.as_completed([one(prompt) for prompt in prompts]):
                    await finished
                    bar.update()
        finally:
            await client.aclose()
        return replies, truncated, failures
