"""variable_tracking: one chain of variable assignments hidden in repeated noise sentences (RULER)."""

from __future__ import annotations

import random
import string

from ..generate.fitting import BuildContext
from ..generate.rng import derive_rng, distinct_draws
from ..generate.spans import embedded_spans, text_spans
from .base import Sample, TaskBuilder
from .synthetic import fill_units

HOPS = 4
NAME_LETTERS = 5
DEPTHS = tuple((step + 0.5) / 10 for step in range(10))  # evenly spaced: the centre of each depth decile, 5% ... 95%
NOISE = (
    "The river runs past the old mill.",
    "A bell rings in the square at noon.",
    "The road bends west behind the hills.",
    "Rain falls softly on the slate roofs.",
    "Evening comes and the lamps are lit.",
)


def chain_for_row(seed: int, row: int) -> tuple[list[str], str]:
    """The row's ``HOPS + 1`` distinct variable names, in assignment order, and the value they all hold."""
    rng = derive_rng(seed, "variable_tracking", "row", row)
    names = distinct_draws(HOPS + 1, lambda: "".join(rng.choice(string.ascii_uppercase) for _ in range(NAME_LETTERS)))
    return names, str(rng.randint(10000, 99999))


def statements(names: list[str], value: str) -> list[str]:
    """``VAR A = 12345.``, ``VAR B = VAR A.``, ... one per hop, in chain order."""
    return [f"VAR {names[0]} = {value}."] + [f"VAR {name} = VAR {before}." for before, name in zip(names, names[1:])]


def statement_slots(depth: float, sentences: int) -> list[int]:
    """Sentence indices before which the statements go: the first at ``depth``, the rest evenly after it."""
    step = (1 - depth) / (HOPS + 1)
    return [round((depth + hop * step) * sentences) for hop in range(HOPS + 1)]


def context_text(lines: list[str], depth: float, sentences: int) -> str:
    """``sentences`` noise sentences with the chain's statements between them at their slots, in order."""
    slots = statement_slots(depth, sentences)
    parts: list[str] = []
    queue = list(zip(slots, lines))
    for index in range(sentences + 1):
        while queue and queue[0][0] == index:
            parts.append(queue.pop(0)[1])
        if index < sentences:
            parts.append(NOISE[index % len(NOISE)])
    return " ".join(parts)


class VariableTracking(TaskBuilder):
    """The row's chain ``VAR A = value``, ``VAR B = VAR A``, ... at a grid depth; name every variable holding the value."""

    name = "variable_tracking"
    required_roles = ()

    def build(self, ctx: BuildContext, row: int, candidate: None, rng: random.Random) -> Sample | None:
        """One sample: as many noise sentences as the budget (less the answer space) allows, around the chain."""
        names, value = chain_for_row(ctx.seed, row)
        lines = statements(names, value)
        depth = DEPTHS[row % len(DEPTHS)]

        def render(sentences: int) -> str:
            return self.templates.render(self.name, {"context": context_text(lines, depth, sentences), "value": value, "count": len(names)})

        filled = fill_units(ctx, ctx.budget, render, ctx.budget)
        if filled is None:
            return None
        fitted = filled[0]
        context = context_text(lines, depth, filled[1])
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "chain": lines,
            "value": value,
            "depth_target": depth,
            "depth": round(context.index(lines[0]) / len(context), 4),
            "spans": embedded_spans(fitted.prompt, context, text_spans(context, lines)),
        }
        return Sample(fitted, names, f"Which variables are assigned the value {value}?", gold)
