"""kv_retrieval: a chain of UUID key-value records hidden between distractor passages, among decoy chains.

The asked chain k1 -> v1 -> v2 -> v3 sits inside a longer chain (a few records lead into k1 and a few
lead on from v3), and decoy chains of three to six records, more of them the longer the prompt, are
scattered too. So the answer is neither the end of a chain (the one value never used as a key) nor
three hops from a chain's start: only following the records from the asked key finds it.
(100-LongBench inserts the three records alone; docs/suites.md says why we differ.)
"""

from __future__ import annotations

import random
import uuid

from longbench100.fitting.fit import BuildContext, fit_prompt
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng, distinct_draws
from .base import Candidate, Sample, TaskBuilder, depth_of

HOPS = 3
LEAD_IN = (0, 2)  # records leading into the asked key: between these many
LEAD_ON = (1, 3)  # records leading on from the answer: between these many (at least one, so the answer is no chain end)
DECOY_RECORDS = (3, 6)  # records per decoy chain
DECOY_CHAINS_PER_8K = 1  # decoy chains: 2, plus one per 8k tokens of budget


def extended_chain(seed: int, row: int) -> tuple[list[str], list[str], list[str]]:
    """The row's whole chain as (lead-in, asked chain ``[k1, v1, v2, v3]``, lead-on): the same at every length."""
    rng = derive_rng(seed, "kv_retrieval", "row", row)
    lead_in, lead_on = rng.randint(*LEAD_IN), rng.randint(*LEAD_ON)
    ids = distinct_draws(lead_in + HOPS + 1 + lead_on, lambda: _uuid(rng))
    return ids[:lead_in], ids[lead_in: lead_in + HOPS + 1], ids[lead_in + HOPS + 1:]


def decoy_chains(budget: int, rng: random.Random, taken: set[str]) -> list[list[str]]:
    """Decoy chains for one prompt: ``2 + budget // 8192`` chains of 3-6 records, their UUIDs new."""
    chains = []
    for _ in range(2 + DECOY_CHAINS_PER_8K * (budget // 8192)):
        size = rng.randint(*DECOY_RECORDS) + 1
        chain: list[str] = []
        while len(chain) < size:
            value = _uuid(rng)
            if value not in taken:
                taken.add(value)
                chain.append(value)
        chains.append(chain)
    return chains


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _records(ctx: BuildContext, chain: list[str], first_hop: int | None) -> list[Piece]:
    """One record piece per link of ``chain``; ``first_hop`` numbers the asked links (None: not asked)."""
    return [
        Piece("record", f"{key} {value}", ctx.tokenizer.count(f"{key} {value}"), None,
              {"key": key, "value": value, "hop": first_hop + index if first_hop is not None else None})
        for index, (key, value) in enumerate(zip(chain, chain[1:]))
    ]


class KvRetrieval(TaskBuilder):
    """Records k1->v1, v1->v2, v2->v3 inside a longer chain, among decoy chains, all at random positions;
    the model must follow the chain from k1 to v3."""

    name = "kv_retrieval"

    def build(self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random) -> Sample | None:
        """One sample: the row's chain inserted among whole distractors and a cut-off filler."""
        lead_in, chain, lead_on = extended_chain(ctx.seed, row)
        records = _records(ctx, lead_in + chain[:1], None) + _records(ctx, chain, 1) + _records(ctx, chain[-1:] + lead_on, None)
        for decoy in decoy_chains(ctx.budget, rng, set(lead_in + chain + lead_on)):
            records += _records(ctx, decoy, None)

        def render(pieces: list[Piece]) -> str:
            return self.render(pieces, start_key=chain[0], hops=HOPS)

        fitted = fit_prompt(ctx, rng, render, [], self.noisy_pool, records=records)
        if fitted is None:
            return None
        positions = {piece.fields["hop"]: index for index, piece in enumerate(fitted.pieces)
                     if piece.role == "record" and piece.fields["hop"] is not None}
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "chain": chain,
            "records": sum(piece.role == "record" for piece in fitted.pieces),
            "record_depths": [depth_of(fitted.pieces, positions[hop], fitted.per_passage) for hop in sorted(positions)],
            "depth": depth_of(fitted.pieces, positions[1], fitted.per_passage),
        }
        question = f"Follow the records from key {chain[0]} for {HOPS} lookups; what is the final value?"
        return Sample(fitted, [chain[-1]], question, gold)
