"""kv_retrieval: 100-LongBench's key lookup, and the key-value record mechanism its variant shares.

The paper's generator (``generate_dataset_kv_retrieval`` in uservan/100-LongBench
``utils/data_utils.py``) draws four UUIDs k0-k3, puts the three chained records k0 -> k1, k1 -> k2
and k2 -> k3 at random places between the passages and asks one lookup: the value of k0 (k1).
Ours asks the same one lookup over the same three-record chain, among decoy chains of the very same
shape (three records over four new UUIDs), so that the records' shape does not give the answer
away: a chain's last value (the one value never used as a key) is never the answer, and the answer's
place, the value of a chain's first record, is shared by nine chains or more; only the record whose
key the question names tells which.
:class:`KeyValueRecords` is what this task and ``kv_retrieval_chain`` share.
"""

from __future__ import annotations

import itertools
import random
import uuid
from typing import ClassVar

from longbench100.fitting.fit import BuildContext, fit_prompt
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng, distinct_draws

from .base import Candidate, Sample, TaskBuilder, depth_of

CHAIN_RECORDS = 3
"""Records in the paper's chain: k0 -> k1 -> k2 -> k3."""

DECOY_CHAINS = 8
"""Decoy chains of kv_retrieval at any length: with nine chains, naming a chain start's value
blindly is right one time in nine, within ten points of chance (one value in 27)."""

DECOY_CHAINS_PER_16K = 1
"""Further decoy chains per 16k tokens of budget, so that longer prompts hold more records."""


def new_uuid(rng: random.Random) -> str:
    """A random version-4 UUID drawn from ``rng``."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def fresh_chain(rng: random.Random, size: int, taken: set[str]) -> list[str]:
    """``size`` new UUIDs, none in ``taken`` (each is added to it)."""
    chain: list[str] = []
    while len(chain) < size:
        value = new_uuid(rng)
        if value not in taken:
            taken.add(value)
            chain.append(value)
    return chain


def record_pieces(ctx: BuildContext, chain: list[str], first_hop: int | None) -> list[Piece]:
    """One record piece per link of ``chain``; ``first_hop`` numbers the asked links (None: not
    asked)."""
    return [
        Piece(
            "record",
            f"{key} {value}",
            ctx.tokenizer.count(f"{key} {value}"),
            None,
            {
                "key": key,
                "value": value,
                "hop": first_hop + index if first_hop is not None else None,
            },
        )
        for index, (key, value) in enumerate(itertools.pairwise(chain))
    ]


class KeyValueRecords(TaskBuilder):
    """Key-value records hidden between whole distractors and a cut-off filler; one row's asked
    chain is the same at every length. Subclasses set ``lookups`` and say which records a prompt
    holds (:meth:`records`)."""

    lookups: ClassVar[int]

    def records(
        self, ctx: BuildContext, row: int, rng: random.Random
    ) -> tuple[list[str], list[Piece]]:
        """The row's asked chain (the asked key first, the answer ``lookups`` links on) and every
        record piece of the prompt, the asked ones numbered by hop."""
        raise NotImplementedError

    def question(self, start_key: str) -> str:
        """The question recorded with the sample."""
        raise NotImplementedError

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: the records inserted among whole distractors and a cut-off filler."""
        chain, records = self.records(ctx, row, rng)

        def render(pieces: list[Piece]) -> str:
            return self.render(pieces, start_key=chain[0], hops=self.lookups)

        fitted = fit_prompt(ctx, rng, render, [], self.noisy_pool, records=records)
        if fitted is None:
            return None
        positions = {
            piece.fields["hop"]: index
            for index, piece in enumerate(fitted.pieces)
            if piece.role == "record" and piece.fields["hop"] is not None
        }
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "chain": chain,
            "lookups": self.lookups,
            "records": sum(piece.role == "record" for piece in fitted.pieces),
            "record_depths": [
                depth_of(fitted.pieces, positions[hop], fitted.per_passage)
                for hop in sorted(positions)
            ],
            "depth": depth_of(fitted.pieces, positions[1], fitted.per_passage),
        }
        return Sample(fitted, [chain[self.lookups]], self.question(chain[0]), gold)


class KvRetrieval(KeyValueRecords):
    """The paper's three records k0 -> k1 -> k2 -> k3 among decoy chains of the same shape, all at
    random places; the model must give the value of k0."""

    name = "kv_retrieval"
    lookups = 1

    def records(
        self, ctx: BuildContext, row: int, rng: random.Random
    ) -> tuple[list[str], list[Piece]]:
        """The row's chain (the same at every length) and ``8 + budget // 16k`` decoy chains."""
        row_rng = derive_rng(ctx.seed, self.name, "row", row)
        chain = distinct_draws(CHAIN_RECORDS + 1, lambda: new_uuid(row_rng))
        pieces = record_pieces(ctx, chain, 1)
        taken = set(chain)
        for _ in range(DECOY_CHAINS + DECOY_CHAINS_PER_16K * (ctx.budget // 16384)):
            pieces += record_pieces(ctx, fresh_chain(rng, CHAIN_RECORDS + 1, taken), None)
        return chain, pieces

    def question(self, start_key: str) -> str:
        """What is the value of the asked key."""
        return f"What is the value of the key {start_key}?"
