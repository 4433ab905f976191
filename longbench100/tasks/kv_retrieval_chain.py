"""kv_retrieval_chain: three lookups along a chain of UUID records, among decoy chains (not the
paper's task).

The asked chain k1 -> v1 -> v2 -> v3 sits inside a longer chain (a few records lead into k1 and a
few lead on from v3), and decoy chains of three to six records, more of them the longer the prompt,
are scattered too. So the answer is neither the end of a chain (the one value never used as a key)
nor three hops from a chain's start: only following the records from the asked key finds it. This
is closer to RULER's variable tracking than to 100-LongBench's one lookup (``kv_retrieval``), so it
is in no paper suite; docs/suites.md says how the two differ.
"""

from __future__ import annotations

import random

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng, distinct_draws

from .kv_retrieval import KeyValueRecords, fresh_chain, new_uuid, record_pieces

HOPS = 3
LEAD_IN = (0, 2)  # records leading into the asked key: between these many
LEAD_ON = (1, 3)  # records leading on from the answer: at least one, so the answer is no chain end
DECOY_RECORDS = (3, 6)  # records per decoy chain
DECOY_CHAINS_PER_8K = 1  # decoy chains: 2, plus one per 8k tokens of budget


class KvRetrievalChain(KeyValueRecords):
    """Records k1->v1, v1->v2, v2->v3 inside a longer chain, among decoy chains, all at random
    places; the model must follow the chain from k1 to v3."""

    name = "kv_retrieval_chain"
    lookups = HOPS

    def records(
        self, ctx: BuildContext, row: int, rng: random.Random
    ) -> tuple[list[str], list[Piece]]:
        """The row's whole chain (the same at every length) and ``2 + budget // 8k`` decoy chains of
        3-6 records."""
        row_rng = derive_rng(ctx.seed, self.name, "row", row)
        lead_in, lead_on = row_rng.randint(*LEAD_IN), row_rng.randint(*LEAD_ON)
        ids = distinct_draws(lead_in + HOPS + 1 + lead_on, lambda: new_uuid(row_rng))
        before, chain, after = (
            ids[:lead_in],
            ids[lead_in : lead_in + HOPS + 1],
            ids[lead_in + HOPS + 1 :],
        )
        pieces = (
            record_pieces(ctx, before + chain[:1], None)
            + record_pieces(ctx, chain, 1)
            + record_pieces(ctx, chain[-1:] + after, None)
        )
        taken = set(ids)
        for _ in range(2 + DECOY_CHAINS_PER_8K * (ctx.budget // 8192)):
            pieces += record_pieces(
                ctx, fresh_chain(rng, rng.randint(*DECOY_RECORDS) + 1, taken), None
            )
        return chain, pieces

    def question(self, start_key: str) -> str:
        """Follow the records from the asked key."""
        return (
            f"Follow the records from key {start_key} for {HOPS} lookups; what is the final value?"
        )
