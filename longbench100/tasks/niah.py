"""The RULER needle-in-a-haystack family: one mechanism, eight tasks that differ only in their :class:`NeedleSpec`.

A needle is the sentence "One of the special magic <kind> for <key> is: <value>." The row's needles
(keys, values, depths) come from the row's own RNG, so row ``r`` asks the same thing at the same
depth at every length; only the haystack around them depends on the length. Needles are placed at
the unit boundary nearest their target depth in characters; the recorded ``depth`` / ``depths``
are measured in tokens (the tokens before the needle over the context's tokens).
"""

from __future__ import annotations

import itertools
import random
import uuid
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Sequence

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.rng import derive_rng, distinct_draws
from longbench100.fitting.spans import embedded_spans
from longbench100.sources.drawn_pool import DrawnPool
from longbench100.sources.near_duplicates import DistinctInPrompt
from longbench100.sources.records import Document, Item, draws_little_of
from longbench100.text.tokenization import Tokenizer

from .base import Candidate, Sample, TaskBuilder
from .essay_units import keep_drawn, prepare_drawn, prepare_pool
from .haystack import (
    Haystack,
    essay,
    essay_tokens,
    fit_haystack,
    pass_order,
    repeated,
    row_depth,
)
from .words import distinct_word_keys, key_words, word_key

# Our own plain sentences, repeated to make a "noise" haystack.
NOISE = (
    "The river runs slowly past the old mill.",
    "A light wind moves through the tall grass.",
    "The market opens early on most days.",
    "Birds gather on the roof before the rain.",
    "The road turns left after the stone bridge.",
)
NEEDLE = "One of the special magic {kind} for {key} is: {value}."


@dataclass(frozen=True)
class NeedleSpec:
    """What makes one niah task: its haystack, key and value kinds, and how many needles it asks about."""

    haystack: str  # "noise" | "essay" | "needle"
    key_kind: str  # "words" | "uuid"
    value_kind: str  # "number" | "uuid"
    values_per_key: int = 1  # niah_multivalue: 4
    queried_keys: int = 1  # niah_multiquery: 4
    distractor_needles: int = (
        0  # niah_multikey_1: needles with other keys, placed like the gold ones
    )


def make_value(kind: str, rng: random.Random) -> str:
    """A 7-digit number or a UUID from ``rng``."""
    if kind == "number":
        return str(rng.randint(1_000_000, 9_999_999))
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def make_key(kind: str, rng: random.Random) -> str:
    """An adjective-noun key or a UUID from ``rng``."""
    return word_key(rng) if kind == "words" else make_value("uuid", rng)


def needle_text(spec: NeedleSpec, key: str, value: str) -> str:
    """The needle sentence for ``key`` and ``value``."""
    return NEEDLE.format(
        kind="numbers" if spec.value_kind == "number" else "uuids", key=key, value=value
    )


@dataclass(frozen=True)
class RowNeedles:
    """The row's needles: gold (asked about) and distractor ones, each with its target depth."""

    keys: list[str]  # the queried keys
    values: list[str]  # every gold value, key by key
    gold: list[tuple[float, str]]  # (depth, needle sentence) of the gold needles
    distractors: list[tuple[float, str]]


def row_needles(spec: NeedleSpec, task: str, seed: int, row: int) -> RowNeedles:
    """The needles of row ``row``: the same at every length. The first gold needle sits at the row's
    depth (``row_depth``: drawn within the row's stratum); the other needles at depths drawn from
    the row's RNG."""
    rng = derive_rng(seed, task, "row", row)
    keys = distinct_draws(
        spec.queried_keys + spec.distractor_needles, lambda: make_key(spec.key_kind, rng)
    )
    gold: list[tuple[float, str]] = []
    values: list[str] = []
    for key in keys[: spec.queried_keys]:
        for _ in range(spec.values_per_key):
            value = make_value(spec.value_kind, rng)
            while value in values:
                value = make_value(spec.value_kind, rng)
            values.append(value)
            depth = row_depth(seed, task, row) if not gold else round(rng.random(), 4)
            gold.append((depth, needle_text(spec, key, value)))
    distractors = [
        (round(rng.random(), 4), needle_text(spec, key, make_value(spec.value_kind, rng)))
        for key in keys[spec.queried_keys :]
    ]
    return RowNeedles(keys[: spec.queried_keys], values, gold, distractors)


def key_phrase(keys: list[str]) -> str:
    """``a``, ``a and b``, ``a, b, c and d``."""
    return keys[0] if len(keys) == 1 else f"{', '.join(keys[:-1])} and {keys[-1]}"


class NeedleTask(TaskBuilder):
    """A niah task: subclasses set ``name`` and ``spec``; everything else is shared."""

    spec: ClassVar[NeedleSpec]
    required_roles: ClassVar[tuple[str, ...]] = ()
    reads_drawn_counts_only: ClassVar[bool] = True  # an essay reads the documents it places
    _splits_when_drawn = False  # set by :meth:`prepare`: rows split and count what they draw
    _drawn: DrawnPool | None = None  # an essay's pool, cleaned as drawn (:meth:`padding_pool`)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.spec.haystack == "essay":
            cls.required_roles = ("noisy",)
            cls.drawn_roles = ("noisy",)

    def padding_pool(self) -> list[Document]:
        """An essay's pool: its padding sources' documents as their rows give them, each cleaned
        when a row first draws it (:class:`DrawnPool`); a corpus that holds them only cleaned (made
        in memory) gives them as they are. Near-copies are kept out of each prompt as it is drawn
        (:func:`essay`), not out of the pool."""
        if self.spec.haystack != "essay":
            return super().padding_pool()
        drawn = self.corpus.drawn_with_role(self.name, "noisy")
        if not drawn:
            return self.corpus.documents_of(self.corpus.sources_with_role(self.name, "noisy"))
        self._drawn = self.corpus.drawn_pool(drawn)
        return self._drawn.documents

    def prepare(
        self, tokenizer: Tokenizer, prompt_tokens: int, drawn: Sequence[tuple[Item, int]]
    ) -> None:
        """An essay haystack's pool split into sentences and its pieces counted, once (cached on
        disk), unless the run draws little of it (:func:`prepare_pool`: as the corpus estimated
        for the run's rows, or where it did not, for this task's); the word-key lists read, once
        (before the workers fork, not in each)."""
        if self.spec.haystack == "essay":
            self._splits_when_drawn = self._prepare_essay(tokenizer, essay_tokens(prompt_tokens))
        if self.spec.key_kind == "words":
            key_words()

    def _prepare_essay(self, tokenizer: Tokenizer, tokens_drawn: int) -> bool:
        """Prepare the essay pool (:func:`prepare_pool`); whether rows split and count what they
        draw. A pool cleaned when drawn is cleaned whole first where the rows draw much of it."""
        if self._drawn is None:
            lazy = self.corpus.draws_little
            if lazy is None:
                lazy = draws_little_of(tokens_drawn, self.noisy_pool)
            return not prepare_pool(self.noisy_pool, tokenizer, lazy) and lazy
        lazy = draws_little_of(tokens_drawn, self._drawn.raw)
        read = self._drawn.read_documents() if lazy else _counted_ahead(self.noisy_pool)
        if not lazy:  # here, in one pass, not in each worker that builds rows
            self._drawn.relate_cleaned()
        return not prepare_pool(read, tokenizer, lazy, self._drawn.key) and lazy

    def read_ahead(self, rows: Sequence[tuple[int, random.Random]]) -> None:
        """For an essay whose pool is cleaned when drawn: clean and count what each row's first
        pass reads at least (:meth:`DrawnPool.read_ahead`), so that the near-copies among them
        are worked out in one pass, not one document at a time."""
        if self.spec.haystack != "essay" or self._drawn is None:
            return
        size = len(self._drawn.raw)
        self._drawn.read_ahead(
            (pass_order(size, rng), essay_tokens(budget)) for budget, rng in rows
        )

    def rows_in_this_process(self) -> bool:
        """Whether rows split and count the essay documents they draw (a pool the run draws little
        of, not cached whole): only this process's rows leave them for :meth:`finish` to keep, and
        rows in several processes would each split and count them again."""
        return self._splits_when_drawn

    def finish(self, tokenizer: Tokenizer) -> None:
        """Keep what the rows split and counted of an essay pool they drew little of (:func:`keep_drawn`)."""
        if self.spec.haystack != "essay":
            return
        if self._drawn is None:
            keep_drawn(self.noisy_pool, tokenizer)
            return
        keep_drawn(self._drawn.read_documents(), tokenizer, self._drawn.key)
        self._drawn.keep()

    def haystack(self, ctx: BuildContext, needles: RowNeedles, rng: random.Random) -> Haystack:
        """Units enough to fill the budget: repeated noise sentences, real prose, or distractor needles."""
        if self.spec.haystack == "noise":
            return self._noise(ctx.budget)
        if self.spec.haystack == "essay":
            guard = self._drawn.prompt_guard if self._drawn is not None else DistinctInPrompt
            haystack = essay(self.noisy_pool, rng, essay_tokens(ctx.budget), guard)
            prepare_drawn(haystack.placed, ctx.tokenizer)
            return haystack
        limit = (
            ctx.budget // 10
        )  # needles are longer than 10 tokens, so this is more than the budget holds
        if self.spec.key_kind == "words":
            keys = distinct_word_keys(rng, limit, set(needles.keys))
        else:
            keys = [
                make_key("uuid", rng) for _ in range(limit)
            ]  # 122 random bits: no repeats in practice
        return repeated(
            (needle_text(self.spec, key, make_value(self.spec.value_kind, rng)) for key in keys),
            len(keys),
        )

    @cached_property
    def _noise_haystacks(self) -> dict[int, Haystack]:
        """Noise haystacks made so far, by budget."""
        return {}

    def _noise(self, budget: int) -> Haystack:
        """The repeated noise sentences for ``budget``: the same for every row, so built (and indexed) once per length."""
        if budget not in self._noise_haystacks:
            self._noise_haystacks[budget] = repeated(itertools.cycle(NOISE), budget, shared=True)
        return self._noise_haystacks[budget]

    def variables(self, needles: RowNeedles) -> dict:
        """Template variables besides the context."""
        many = len(needles.values) > 1
        what = (
            ("numbers" if many else "number")
            if self.spec.value_kind == "number"
            else ("UUIDs" if many else "UUID")
        )
        return {
            "what": what,
            "kind": "numbers" if self.spec.value_kind == "number" else "UUIDs",
            "many": many,
            "keys": key_phrase(needles.keys),
        }

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: the row's needles in a haystack cut to the largest size that fits the budget."""
        needles = row_needles(self.spec, self.name, ctx.seed, row)
        haystack = self.haystack(ctx, needles, rng)
        placed = needles.gold + needles.distractors
        variables = self.variables(needles)

        fit = fit_haystack(
            ctx,
            haystack,
            placed,
            lambda context: self.templates.render(self.name, {"context": context, **variables}),
            pieces=haystack.provenance_pieces,
        )
        if fit is None:
            return None
        gold_depths = fit.depths[: len(needles.gold)]
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "haystack": self.spec.haystack,
            "pool_passes": haystack.passes
            if self.spec.haystack == "essay"
            else None,  # > 1: the pool was too small, documents repeat
            "keys": needles.keys,
            "needles": [text for _, text in needles.gold],
            "distractor_needles": [text for _, text in needles.distractors],
            "target_depth": needles.gold[0][0],
            "depth": gold_depths[0],
            "depths": gold_depths,
            "spans": embedded_spans(
                fit.fitted.prompt,
                fit.context,
                sorted(
                    (offset, offset + len(text))
                    for offset, (_, text) in zip(fit.offsets, needles.gold)
                ),
                fit.context_at,
            ),
        }
        question = f"What {'are all the' if variables['many'] else 'is the'} special magic {variables['what']} for {variables['keys']}?"
        return Sample(fit.fitted, list(needles.values), question, gold)


def _counted_ahead(pool: list[Document]) -> list[Document]:
    """The documents of a pool cleaned when drawn that hold text, every one cleaned and counted
    now (rows that draw much of a pool read it all; counted here, before any worker forks, each is
    counted once, and its placed text reuses its pieces' counts)."""
    documents = [document for document in pool if document.text]
    for document in documents:
        document.tokens  # noqa: B018 - read to count it now
    return documents


def needle_task(name: str, spec: NeedleSpec) -> type[NeedleTask]:
    """A :class:`NeedleTask` subclass named ``name`` with ``spec``."""
    return type(
        name.title().replace("_", ""),
        (NeedleTask,),
        {"name": name, "spec": spec, "__doc__": f"RULER's {name}."},
    )


NIAH_TASKS: tuple[type[NeedleTask], ...] = (
    needle_task("niah_single_1", NeedleSpec("noise", "words", "number")),
    needle_task("niah_single_2", NeedleSpec("essay", "words", "number")),
    needle_task("niah_single_3", NeedleSpec("essay", "words", "uuid")),
    needle_task("niah_multikey_1", NeedleSpec("essay", "words", "number", distractor_needles=3)),
    needle_task("niah_multikey_2", NeedleSpec("needle", "words", "number")),
    needle_task("niah_multikey_3", NeedleSpec("needle", "uuid", "uuid")),
    needle_task("niah_multivalue", NeedleSpec("essay", "words", "number", values_per_key=4)),
    needle_task("niah_multiquery", NeedleSpec("essay", "words", "number", queried_keys=4)),
)
