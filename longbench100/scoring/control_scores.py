"""``score --controls``: grade a model's answers on the control twins and flag a score above chance.

The twins (``DATA/controls``, written by ``generate``) hold each sample's question, options and
answer key with the gold taken out, or with another row's context. A model that scores there above
chance is answering from something other than the gold. Per task and length the block in
``results.json`` (``aggregates.controls``) gives each kind's mean score (0-100, like S_l), its
standard error, the chance level the data's manifest recorded, and ``flagged``: the score is above
chance plus :data:`CONTROL_MARGIN` points beyond sampling error (one-sided, as ``baselines`` judges
its controls)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from statistics import fmean, stdev

from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.folders.layout import CONTROL_KINDS, controls_folder, read_folder_manifest
from longbench100.judge.grader import Judge
from longbench100.scoring.predictions import (
    Prediction,
    load_predictions,
    match_predictions,
)
from longbench100.scoring.scorer import score_predictions

CONTROL_MARGIN = 5.0
"""Points above chance a model's mean control score may reach before it is flagged."""
Z_ONE_SIDED = 1.645


def control_block(
    data_dir: Path,
    predictions: Path,
    records: list[DataRecord],
    every_twin: list[DataRecord],
    known: set[str],
    metrics: dict[str, str],
    judge: Judge | None,
    rouge_variant: str,
    echo: Callable[[str], None],
) -> dict:
    """``{task: {label: {kind: {"score", "stderr", "n"}, "chance", "flagged"}}}`` for the cells of
    ``records`` (their rows only): the model's answers on their twins (of ``every_twin``, the
    data's), read from ``predictions/controls`` (``predict --controls``), else from ``predictions``
    itself (lm-eval or Inspect logs of an export with its controls); ``known``: every id of the data
    and twins."""
    if not every_twin:
        raise UserError(
            f"--controls: {data_dir} holds no control twins ({controls_folder(data_dir)}); "
            "generate writes them unless --no-controls"
        )
    answers = controls_folder(predictions) if controls_folder(predictions).is_dir() else predictions
    rows = {(record.task, record.label, record.row) for record in records}
    twins = [twin for twin in every_twin if (twin.task, twin.label, twin.row) in rows]
    by_id = _twin_answers(answers, twins, known)
    if not by_id:
        raise UserError(
            f"--controls: no answers on the control twins in {answers}; run predict --controls "
            "(or export with --controls) first"
        )
    missing = len(twins) - len(by_id)
    if missing:
        echo(
            f"controls: {missing} of {len(twins)} twins have no answer in {answers}; "
            "they are left out"
        )
    answered = [twin for twin in twins if twin.id in by_id]
    outcome = score_predictions(
        answered, by_id, metrics, None, judge, progress=False, rouge_variant=rouge_variant
    )
    chances = ((read_folder_manifest(data_dir) or {}).get("controls") or {}).get("chance") or {}
    scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    kinds = {twin.id: twin.control or "" for twin in answered}
    for sample in outcome.samples:
        if sample.score is not None:
            scores[(sample.task, sample.label, kinds[sample.id])].append(100 * sample.score)
    block: dict[str, dict[str, dict]] = {}
    for task, label in dict.fromkeys((record.task, record.label) for record in records):
        chance = (chances.get(task) or {}).get(label)
        cell: dict = {
            kind: _mean(scores[(task, label, kind)])
            for kind in CONTROL_KINDS
            if scores[(task, label, kind)]
        }
        cell["chance"] = None if chance is None else round(100 * chance, 2)
        cell["flagged"] = chance is not None and any(
            _over(cell[kind], 100 * chance) for kind in CONTROL_KINDS if kind in cell
        )
        block.setdefault(task, {})[label] = cell
    return block


def _twin_answers(folder: Path, twins: list[DataRecord], known: set[str]) -> dict[str, Prediction]:
    """The answers in ``folder`` to ``twins``, by id (a twin without one is left out, not an error;
    an answer to an id not in ``known`` is)."""
    by_id, _ = match_predictions(
        load_predictions(folder),
        [twin.id for twin in twins],
        known,
        allow_missing=True,
        source=folder,
    )
    return {twin.id: by_id[twin.id] for twin in twins if twin.id in by_id}


def _mean(values: list[float]) -> dict:
    """Mean, standard error and count of one kind's scores."""
    stderr = stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return {"score": round(fmean(values), 2), "stderr": round(stderr, 2), "n": len(values)}


def _over(kind: dict, chance: float) -> bool:
    """Whether a kind's mean score is above chance plus the margin beyond sampling error."""
    return kind["score"] > chance + CONTROL_MARGIN + Z_ONE_SIDED * kind["stderr"] + 1e-9


def control_lines(block: dict) -> list[str]:
    """One console line per flagged task and length (none when no model control score is above
    chance)."""
    return [
        f"controls: {task} {label}: "
        + ", ".join(f"{kind} {cell[kind]['score']:.1f}" for kind in CONTROL_KINDS if kind in cell)
        + f" > chance {cell['chance']:.1f} + {CONTROL_MARGIN:g}: the model scores without the gold"
        for task, by_label in block.items()
        for label, cell in by_label.items()
        if cell["flagged"]
    ]
