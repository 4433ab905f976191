"""kv_retrieval: three chained UUID key-value records hidden between distractor passages."""

from __future__ import annotations

import random
import uuid

from ..generate.fitting import BuildContext, fit_prompt
from ..generate.pieces import Piece
from ..generate.rng import derive_rng, distinct_draws
from .base import Sample, TaskBuilder, depth_of

HOPS = 3


def chain_for_row(seed: int, row: int) -> list[str]:
    """The row's UUID chain ``[k1, v1, v2, v3]``: the same at every length, drawn from the row's RNG."""
    rng = derive_rng(seed, "kv_retrieval", "row", row)
    return distinct_draws(HOPS + 1, lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)))


class KvRetrieval(TaskBuilder):
    """Records k1->v1, v1->v2, v2->v3 at random positions; the model must follow the chain from k1 to v3."""

    name = "kv_retrieval"

    def build(self, ctx: BuildContext, row: int, candidate: None, rng: random.Random) -> Sample | None:
        """One sample: the row's chain inserted among whole distractors and a cut-off filler."""
        chain = chain_for_row(ctx.seed, row)
        records = [
            Piece("record", f"{key} {value}", ctx.tokenizer.count(f"{key} {value}"), None, {"key": key, "value": value, "hop": hop})
            for hop, (key, value) in enumerate(zip(chain, chain[1:]), start=1)
        ]

        def render(pieces: list[Piece]) -> str:
            return self.render(pieces, start_key=chain[0], hops=HOPS)

        fitted = fit_prompt(ctx, rng, render, [], self.noisy_pool, records=records)
        if fitted is None:
            return None
        positions = {piece.fields["hop"]: index for index, piece in enumerate(fitted.pieces) if piece.role == "record"}
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "chain": chain,
            "record_depths": [depth_of(fitted.pieces, positions[hop], fitted.per_passage) for hop in sorted(positions)],
            "depth": depth_of(fitted.pieces, positions[1], fitted.per_passage),
        }
        question = f"Follow the records from key {chain[0]} for {HOPS} lookups; what is the final value?"
        return Sample(fitted, [chain[-1]], question, gold)
