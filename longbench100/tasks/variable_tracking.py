"""variable_tracking: RULER's variable tracking (vt) on our exact budgets.

As in RULER's ``variable_tracking.py`` with its noise haystack: one chain ``VAR A = 12345``,
``VAR B = VAR A``, ... (4 hops, five 5-letter names) whose statements sit at random sorted
positions among repeated noise sentences, after a one-shot example (a short chain of 3-letter
names, with its answer) as RULER adds it. Where we differ: the positions are fractions of the
context drawn once per row, so a row's chain sits at the same relative places at every length
(paired rows), and the noise is five sentences of our own.
"""

from __future__ import annotations

import random
import string

from longbench100.fitting.fit import BuildContext
from longbench100.fitting.rng import derive_rng, distinct_draws
from longbench100.fitting.spans import embedded_spans, text_spans

from .base import Candidate, Sample, TaskBuilder
from .synthetic import fill_units

HOPS = 4
NAME_LETTERS = 5
EXAMPLE_NAME_LETTERS = 3  # RULER's one-shot example uses 3-letter names
EXAMPLE_SENTENCES = 10
NOISE = (
    "The river runs past the old mill.",
    "A bell rings in the square at noon.",
    "The road bends west behind the hills.",
    "Rain falls softly on the slate roofs.",
    "Evening comes and the lamps are lit.",
)


def chain_for_row(
    seed: int, row: int, letters: int = NAME_LETTERS, stream: str = "row"
) -> tuple[list[str], str, list[float]]:
    """The row's ``HOPS + 1`` distinct variable names in assignment order, the value they hold, and the
    sorted fractions of the context before which the statements stand."""
    rng = derive_rng(seed, "variable_tracking", stream, row)
    names = distinct_draws(
        HOPS + 1, lambda: "".join(rng.choice(string.ascii_uppercase) for _ in range(letters))
    )
    value = str(rng.randint(10000, 99999))
    return names, value, sorted(rng.random() for _ in range(HOPS + 1))


def statements(names: list[str], value: str) -> list[str]:
    """``VAR A = 12345.``, ``VAR B = VAR A.``, ... one per hop, in chain order."""
    return [f"VAR {names[0]} = {value}."] + [
        f"VAR {name} = VAR {before}." for before, name in zip(names, names[1:])
    ]


def context_text(lines: list[str], fractions: list[float], sentences: int) -> str:
    """``sentences`` noise sentences with the statements, in chain order, before sentence ``round(f * sentences)``."""
    queue = [(round(fraction * sentences), line) for fraction, line in zip(fractions, lines)]
    parts: list[str] = []
    for index in range(sentences + 1):
        while queue and queue[0][0] == index:
            parts.append(queue.pop(0)[1])
        if index < sentences:
            parts.append(NOISE[index % len(NOISE)])
    return " ".join(parts)


def one_shot_example(seed: int, row: int) -> dict:
    """The row's worked example: a short context with a 3-letter chain, its value and its answer."""
    names, value, fractions = chain_for_row(seed, row, EXAMPLE_NAME_LETTERS, "example")
    return {
        "context": context_text(statements(names, value), fractions, EXAMPLE_SENTENCES),
        "value": value,
        "count": len(names),
        "answer": ", ".join(names),
    }


class VariableTracking(TaskBuilder):
    """The row's chain at random sorted places in noise, after a one-shot example; name every variable holding the value."""

    name = "variable_tracking"
    required_roles = ()

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: as many noise sentences as the budget (less the answer space) allows, around the chain."""
        names, value, fractions = chain_for_row(ctx.seed, row)
        lines = statements(names, value)
        example = one_shot_example(ctx.seed, row)

        def render(sentences: int) -> str:
            return self.templates.render(
                self.name,
                {
                    "context": context_text(lines, fractions, sentences),
                    "value": value,
                    "count": len(names),
                    "example": example,
                },
            )

        filled = fill_units(ctx, ctx.budget, render, ctx.budget)
        if filled is None:
            return None
        fitted = filled[0]
        context = context_text(lines, fractions, filled[1])
        depths = [round(context.index(line) / len(context), 4) for line in lines]
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [],
            "chain": lines,
            "value": value,
            "depth": depths[0],
            "depths": depths,
            "example_chain": example["answer"].split(", "),
            "spans": embedded_spans(fitted.prompt, context, text_spans(context, lines)),
        }
        return Sample(fitted, names, f"Which variables are assigned the value {value}?", gold)
