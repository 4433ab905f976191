"""Runs that answered every prompt more than once (Inspect's ``--epochs``): one score per record,
the mean.

Each epoch is graded as a run of its own; a record's score is then the mean of its epochs' scores
(null when an epoch's answer stayed ungraded), and ``epoch_scores`` keeps each epoch's score.
``score --epoch N`` grades one epoch alone instead.
"""

from __future__ import annotations

from dataclasses import replace

from longbench100.core.errors import UserError

from .samples import ScoredSample
from .scorer import ScoreOutcome


def chosen_epochs(present: tuple[int, ...], wanted: int | None) -> list[int | None]:
    """The epochs to grade: every one present (``[None]`` for a run without epochs), or ``wanted``
    alone (epoch 1 of a run without epochs is its one answer per prompt)."""
    if wanted is None:
        return list(present) or [None]
    if wanted == 1 and not present:  # one answer per prompt is epoch 1
        return [None]
    if wanted not in present:
        have = ", ".join(map(str, present)) if present else "none (one answer per prompt)"
        raise UserError(f"--epoch {wanted}: the predictions hold epochs {have}")
    return [wanted]


def _mean(values: list[float | None]) -> float | None:
    """The mean of ``values``, or ``None`` when one is ``None``."""
    present = [value for value in values if value is not None]
    return None if len(present) < len(values) else sum(present) / len(values)


def _merged_sample(samples: list[ScoredSample]) -> ScoredSample:
    """One record's samples of every epoch as one: mean scores, the first epoch's answer and judge
    notes."""
    first = samples[0]
    also = (
        None
        if first.also is None
        else {
            name: sum((s.also or {})[name] for s in samples) / len(samples) for name in first.also
        }
    )
    ungraded = next((sample for sample in samples if sample.score is None), None)
    return replace(
        first,
        score=_mean([sample.score for sample in samples]),
        also=also,
        epoch_scores=tuple(sample.score for sample in samples),
        judge_reply=ungraded.judge_reply if ungraded else None,
        ungraded_reason=ungraded.ungraded_reason if ungraded else None,
    )


def mean_over_epochs(outcomes: list[ScoreOutcome]) -> ScoreOutcome:
    """One outcome whose samples are the per-record means of ``outcomes`` (the same records, one per
    epoch)."""
    if len(outcomes) == 1:
        return outcomes[0]
    merged = [
        _merged_sample(list(samples)) for samples in zip(*(outcome.samples for outcome in outcomes))
    ]
    return ScoreOutcome(
        samples=merged,
        qa_filter=outcomes[0].qa_filter,
    )
