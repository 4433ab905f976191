"""json_kv (HELMET Recall): a JSON object of random UUID keys and values; give the value of one key.

The asked pair is the row's own (the same at every length); row ``r`` places it at a position drawn
once per row within slice ``r % 6`` of the object (six equal slices, first to last: HELMET's six
depths, jittered), and random pairs from the sample's RNG fill the rest of the budget.
"""

from __future__ import annotations

import json
import random

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.rng import derive_rng
from longbench100.fitting.spans import embedded_spans

from .base import Candidate, Sample, TaskBuilder
from .haystack import fit_haystack, repeated, row_depth
from .niah import make_value

JSON_DEPTH_STRATA = 6  # HELMET's json_kv files place the pair at six depths
PAIR_MIN_TOKENS = 20  # a pair holds two quoted UUIDs: more tokens than this, so budget // 20 pairs are more than fit


def json_pair(key: str, value: str) -> str:
    """One ``"key": "value"`` member as ``json.dumps`` writes it."""
    return f"{json.dumps(key)}: {json.dumps(value)}"


class JsonKv(TaskBuilder):
    """A JSON object of UUID pairs filling the budget, with the row's pair at the row's position."""

    name = "json_kv"
    required_roles = ()

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: the largest object that fits, the asked pair at its position."""
        row_rng = derive_rng(ctx.seed, self.name, "row", row)
        key, value = make_value("uuid", row_rng), make_value("uuid", row_rng)
        position = row_depth(ctx.seed, self.name, row, JSON_DEPTH_STRATA)
        limit = ctx.budget // PAIR_MIN_TOKENS
        pairs = repeated(
            (json_pair(make_value("uuid", rng), make_value("uuid", rng)) for _ in range(limit)),
            limit,
            ", ",
        )
        gold_pair = [(position, json_pair(key, value))]

        fit = fit_haystack(
            ctx,
            pairs,
            gold_pair,
            lambda context: self.templates.render(
                self.name, {"context": "{" + context + "}", "key": key}
            ),
            ", ",
        )
        if fit is None:
            return None
        count, context, offsets = fit.count, fit.context, fit.offsets
        pair_start = offsets[0] + 1  # after the object's opening brace
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "key": key,
            "pairs": count + 1,
            "index": round(position * count),
            "target_depth": position,
            "depth": round(offsets[0] / max(1, len(context)), 4),
            "spans": embedded_spans(
                fit.fitted.prompt,
                "{" + context + "}",
                [(pair_start, pair_start + len(gold_pair[0][1]))],
            ),
        }
        return Sample(
            fit.fitted, [value], f'What is the value of the key "{key}" in the JSON object?', gold
        )
