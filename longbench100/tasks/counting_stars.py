"""counting_stars: four sentences about a penguin counting stars, hidden in passages; pick the list of counts."""

from __future__ import annotations

import itertools
import random

from longbench100.fitting.fit import BuildContext, fit_prompt
from longbench100.fitting.pieces import Piece
from longbench100.fitting.rng import derive_rng, distinct_draws
from longbench100.text.sentences import sentence_ends

from .base import Candidate, Sample, TaskBuilder

STARS = 4
SENTENCE = "The little penguin counted {count} stars."
UNANSWERABLE = "The passages do not give enough information to tell."
WRONG_OPTIONS = 3
_PAIRS = list(itertools.combinations(range(STARS), 2))  # the places two swapped counts can take


def counts_for_row(seed: int, row: int) -> tuple[list[int], list[str], int]:
    """The row's star counts in order of appearance, its answer options and the 1-based number of
    the right option.

    As in 100-LongBench, the wrong options are the right counts in another order (the paper swaps
    two counts). The options are one family of orders of four different counts: an order and three
    others, each with two of its counts swapped. Which member of the family the text holds is drawn
    uniformly, so no shape of the options points to the answer: the family's centre (the option
    agreeing most with the others, right 73-88% of the time in the paper's draw) is right one time
    in four, and every option holds the same four numbers, all of them in the text.
    """
    rng = derive_rng(seed, "counting_stars", "row", row)
    order = distinct_draws(STARS, lambda: rng.randint(1, 100))
    family = [order] + [_swapped(order, pair) for pair in rng.sample(_PAIRS, WRONG_OPTIONS)]
    counts = family[rng.randrange(len(family))]
    options = [counts_text(member) for member in family]
    rng.shuffle(options)
    return counts, options + [UNANSWERABLE], options.index(counts_text(counts)) + 1


def _swapped(counts: list[int], pair: tuple[int, int]) -> list[int]:
    """``counts`` with the counts at the two places of ``pair`` exchanged."""
    first, second = pair
    result = list(counts)
    result[first], result[second] = result[second], result[first]
    return result


def counts_text(counts: list[int]) -> str:
    """``[12, 5, 88, 40]`` as the option text."""
    return "[" + ", ".join(str(count) for count in counts) + "]"


def insertion_points(pieces: list[Piece], rng: random.Random) -> list[tuple[int, int]]:
    """``(piece index, character offset)`` for each star sentence, in prompt order.

    Four different passages when there are at least four, each at a random sentence boundary: the
    start of the passage, a sentence end (:func:`~longbench100.text.sentences.sentence_ends`) or
    the end of the passage.
    """
    passages = [index for index, piece in enumerate(pieces) if piece.is_passage]
    if not passages:
        return []
    chosen = (
        sorted(rng.sample(passages, STARS))
        if len(passages) >= STARS
        else sorted(rng.choices(passages, k=STARS))
    )
    points: list[tuple[int, int]] = []
    for index in chosen:
        text = pieces[index].text
        boundaries = sorted({0, *sentence_ends(text), len(text)})
        points.append((index, rng.choice(boundaries)))
    points.sort()
    return points


class CountingStars(TaskBuilder):
    """Sentences giving the row's star counts are inserted, in order, into passages of sources 1-9."""

    name = "counting_stars"

    def build(
        self, ctx: BuildContext, row: int, candidate: Candidate | None, rng: random.Random
    ) -> Sample | None:
        """One sample: padding first, then the star sentences placed into it at sentence boundaries."""
        counts, options, answer = counts_for_row(ctx.seed, row)
        sentences = [SENTENCE.format(count=count) for count in counts]
        extra = sum(ctx.tokenizer.count(" " + sentence + " ") for sentence in sentences)
        placement_seed = (ctx.seed, self.name, ctx.label, row, "placement")

        def render(pieces: list[Piece]) -> str:
            return self.render(
                self._with_stars(pieces, sentences, derive_rng(*placement_seed)), options=options
            )

        fitted = fit_prompt(ctx, rng, render, [], self.noisy_pool, extra_tokens=extra)
        if fitted is None or not any(piece.is_passage for piece in fitted.pieces):
            return None
        points = insertion_points(fitted.pieces, derive_rng(*placement_seed))
        passage_numbers = {
            index: number
            for number, index in enumerate(
                (i for i, p in enumerate(fitted.pieces) if p.is_passage), start=1
            )
        }
        gold = {
            "sources": [],
            "item_ids": [],
            "passages": [passage_numbers[index] for index, _ in points],
            "counts": counts,
            "options": options,
            "depth": round(fitted.prompt.index(sentences[0]) / len(fitted.prompt), 4),
        }
        return Sample(
            fitted, [str(answer)], "Which list gives the star counts in order of appearance?", gold
        )

    @staticmethod
    def _with_stars(pieces: list[Piece], sentences: list[str], rng: random.Random) -> list[Piece]:
        """Copies of ``pieces`` with the star sentences inserted at their insertion points, in order."""
        result = list(pieces)
        by_piece: dict[int, list[int]] = {}
        for index, offset in insertion_points(pieces, rng):
            by_piece.setdefault(index, []).append(offset)
        queue = iter(sentences)
        for index in sorted(by_piece):
            text = pieces[index].text
            out, last = [], 0
            for offset in by_piece[index]:
                out.append(text[last:offset])
                out.append(
                    (" " if offset and not text[offset - 1].isspace() else "")
                    + next(queue)
                    + (" " if offset < len(text) and not text[offset].isspace() else "")
                )
                last = offset
            out.append(text[last:])
            piece = pieces[index]
            result[index] = Piece(piece.role, "".join(out), piece.tokens, piece.doc, piece.fields)
        return result
