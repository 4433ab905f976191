"""Run every applicable no-model baseline on a data folder and judge each task against its shortcut
limit.

Answers are graded by :func:`~longbench100.scoring.reply_scores.classic_scores`, the code that
grades real predictions with ``score --metric classic`` (judge tasks use their classic F1 / ROUGE-L
here). A cell (task, length, and what the prompts are: ``real`` or a control twin's kind) passes
when every judged baseline stays within the task's limit (:mod:`.limits`: chance plus the allowed
margin, or an absolute ceiling), allowing for sampling error: a baseline is over only when its mean
exceeds the ceiling by more than :data:`Z_ONE_SIDED` standard errors, so a 30-row run does not fail
on noise (a baseline at chance + 0.10 on 30 rows moves by about 0.07 from draw to draw), while a
real shortcut still fails. On a control twin (``OUT/controls``: the gold removed, or another row's
context) every baseline is judged against chance + :data:`CONTROL_MARGIN`, whatever its task's limit
and family: a strategy that scores there reads something other than the gold."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from statistics import fmean, stdev

from longbench100.catalog.shortcut_limits import ShortcutLimit, limit_from_record, parse_limit
from longbench100.folders.data_records import (
    DataRecord,
    load_data_with_prompts,
    records_with_prompts,
    task_files,
)
from longbench100.folders.layout import DataFileRef, controls_folder, read_folder_manifest

from ..scoring.reply_scores import classic_scores
from .chance_cache import CellChances, FileDigests, cached_task_chances
from .prompt_view import PromptView, read_prompt
from .strategies import Attempt, Baseline, baselines_for, chance_answers

Z_ONE_SIDED = 1.645
"""Standard errors a baseline's mean may exceed its ceiling by before it counts as over (one-sided 95%)."""

CONTROL_MARGIN = 0.05
"""How far above chance any baseline may score on a control twin."""
CONTROL_LIMIT = parse_limit(f"chance + {CONTROL_MARGIN}", [], "controls")
REAL = "real"
"""What a cell of real prompts is "on" (a control cell is on its control kind)."""


@dataclass(frozen=True)
class BaselineScore:
    """One baseline's mean score on one cell, its standard error, and whether the limit holds it."""

    name: str
    family: str
    description: str
    score: float
    stderr: float
    judged: bool
    # the anchor's file whose construct or metric allows this shortcut (reported, not judged)
    anchor: str | None = None

    def over(self, ceiling: float) -> bool:
        """Whether this judged baseline is over ``ceiling`` beyond sampling error."""
        return self.judged and self.score > ceiling + Z_ONE_SIDED * self.stderr + 1e-9


@dataclass
class CellVerdict:
    """One task at one length: chance, every baseline's score, the best judged one and the verdict."""

    task: str
    label: str
    samples: int
    chance: float
    limit: ShortcutLimit
    baselines: list[BaselineScore] = field(default_factory=list)
    on: str = REAL  # "real" prompts, or a control twin's kind

    @property
    def ceiling(self) -> float:
        """The score no judged baseline may exceed."""
        return self.limit.ceiling(self.chance)

    @property
    def best(self) -> BaselineScore | None:
        """The judged baseline that scores highest (``None`` when none applies)."""
        judged = [baseline for baseline in self.baselines if baseline.judged]
        return max(judged, key=lambda baseline: baseline.score) if judged else None

    @property
    def passed(self) -> bool:
        """Whether no judged baseline is over the ceiling beyond sampling error."""
        return not any(baseline.over(self.ceiling) for baseline in self.baselines)

    def to_json(self) -> dict:
        """The cell as ``baselines.json`` stores it."""
        best = self.best
        return {
            "task": self.task,
            "label": self.label,
            "on": self.on,
            "samples": self.samples,
            "chance": round(self.chance, 4),
            "limit": self.limit.record(),
            "ceiling": round(self.ceiling, 4),
            "best": best.name if best else None,
            "best_score": round(best.score, 4) if best else None,
            "passed": self.passed,
            "baselines": {
                b.name: {
                    "family": b.family,
                    "score": round(b.score, 4),
                    "stderr": round(b.stderr, 4),
                    "judged": b.judged,
                    **({"anchor": b.anchor} if b.anchor and not b.judged else {}),
                }
                for b in self.baselines
            },
        }


@dataclass
class BaselineRun:
    """Every cell's verdict, and each baseline's answer and score per sample (for ``show``)."""

    data_dir: Path
    cells: list[CellVerdict]
    samples: list[dict]

    @property
    def failed(self) -> list[CellVerdict]:
        """The cells whose best judged shortcut exceeds the limit."""
        return [cell for cell in self.cells if not cell.passed]


def run_baselines(
    data_dir: Path, tasks: set[str] | None = None, controls: bool = True
) -> BaselineRun:
    """Run the baselines of every task in ``data_dir`` (or only ``tasks``) and judge each cell; with
    ``controls``, on the control twins in ``data_dir/controls`` too, when there are any."""
    manifest = read_folder_manifest(data_dir) or {}
    suite = manifest.get("suite") or {}
    limits = suite.get("shortcut_limits") or {}
    families = suite.get("metrics")
    loaded = [
        (record, prompt)
        for record, prompt in load_data_with_prompts(data_dir)
        if tasks is None or record.task in tasks
    ]
    # what other rows' real answers teach
    priors = _other_rows_answers([record for record, _ in loaded])
    if controls and controls_folder(data_dir).is_dir():
        loaded += [
            (record, prompt)
            for record, prompt in load_data_with_prompts(controls_folder(data_dir))
            if (tasks is None or record.task in tasks) and (record.task, record.row) in priors
        ]
    records = [record for record, _ in loaded]
    views = {record.id: read_prompt(prompt) for record, prompt in loaded}
    ratios = _other_rows_count_ratios(
        [record for record in records if record.control is None], views
    )
    jobs: list[tuple[DataRecord, str, str]] = []  # (record, answer, baseline name)
    for record in records:
        view = views[record.id]
        for baseline in baselines_for(record.task):
            answer = baseline.answer(
                Attempt(
                    record,
                    view,
                    priors[(record.task, record.row)],
                    ratios.get((record.task, record.row)),
                )
            )
            jobs.append((record, answer or "", baseline.name))
    scores = classic_scores(
        [record for record, _, _ in jobs], [answer for _, answer, _ in jobs], families
    )
    chances = _record_chances(
        [
            (record, partial(views.__getitem__, record.id))
            for record in records
            if record.control is None
        ],
        priors,
        families,
    )
    return _verdicts(data_dir, records, jobs, scores, chances, limits)


def cell_chances(
    data_dir: Path, families: dict[str, str] | None, digests: FileDigests | None = None
) -> dict[str, dict[str, float]]:
    """Each task and length's chance level (as :func:`run_baselines` computes it, no baseline run):
    the mean over its samples of the expected classic score of a uniformly random possible answer
    (``families``: the suite's metric per task). Read while ``generate`` still writes the folder,
    one task at a time (a task's chance rests on its own rows only); ``digests``: the sha256 of
    data files where the caller knows them (:func:`cached_task_chances`)."""
    chances: dict[str, dict[str, float]] = {}
    seen: dict[str, str] = {}
    for files in task_files(data_dir, unfinished=True):
        task = files[0].task
        compute = partial(_files_chances, files, seen, families)
        family = (families or {}).get(task)
        for label, chance in cached_task_chances(task, files, family, compute, digests):
            chances.setdefault(task, {})[label] = chance
    return chances


def _files_chances(
    files: list[DataFileRef], seen: dict[str, str], families: dict[str, str] | None
) -> CellChances:
    """The chance level of each length of one task's data ``files`` (:func:`_task_chances`)."""
    loaded = records_with_prompts(files, seen)
    return [(label, chance) for (_, label), chance in _task_chances(loaded, families).items()]


def _task_chances(
    loaded: list[tuple[DataRecord, str]], families: dict[str, str] | None
) -> dict[tuple[str, str], float]:
    """The chance level of each length of one task's records (see :func:`cell_chances`)."""
    records = [record for record, _ in loaded]
    chances = _record_chances(
        [(record, partial(read_prompt, prompt)) for record, prompt in loaded],
        _other_rows_answers(records),
        families,
    )
    by_cell: dict[tuple[str, str], list[DataRecord]] = defaultdict(list)
    for record in records:
        by_cell[(record.task, record.label)].append(record)
    return {cell: round(_cell_chance(members, chances), 4) for cell, members in by_cell.items()}


def _record_chances(
    viewed: list[tuple[DataRecord, Callable[[], PromptView]]],
    priors: dict[tuple[str, int], Counter],
    families: dict[str, str] | None,
) -> dict[str, float]:
    """Each real record's chance, by id: the mean classic score of its :func:`chance_answers`
    (0 for a record with none); ``priors`` are :func:`_other_rows_answers` of its task, narrowed by
    :func:`_same_source_answers`; each record comes with its prompt's view, split only where its
    chance answers look at the prompt."""
    same_source = _same_source_answers([record for record, _ in viewed], priors)
    jobs = [
        (record, answer)
        for record, view in viewed
        for answer in chance_answers(record, view, same_source[(record.task, record.row)])
    ]
    scores = classic_scores(
        [record for record, _ in jobs], [answer for _, answer in jobs], families, CHANCE_WORKERS
    )
    per_record: dict[str, list[float]] = defaultdict(list)
    for (record, _), score in zip(jobs, scores):
        per_record[record.id].append(score)
    return {record.id: fmean(per_record.get(record.id, [0.0])) for record, _ in viewed}


CHANCE_WORKERS = 1
"""Processes that score the chance answers: a few hundred ROUGE-L pairs of one task cost less CPU
in-process than starting worker processes for them (the chance levels of a ``generate`` run)."""


SAME_SOURCE_ANSWERS = 5
"""A free-text answer's chance draws on other rows' answers of its own source when that source gives
at least this many distinct ones, else on the whole task's."""


def _same_source_answers(
    records: list[DataRecord], priors: dict[tuple[str, int], Counter]
) -> dict[tuple[str, int], Counter]:
    """For each (task, row): the other rows' answers of the same source, where it has at least
    :data:`SAME_SOURCE_ANSWERS` (a random possible answer to a question of a financial call is
    another answer about such a call, long prose; to a Natural Questions one, a few words: a
    task mixing sources would otherwise take the short answers' near-zero overlap as chance for
    the long ones), else the task's ``priors``."""
    same = _other_rows_answers(records, lambda record: (record.task, record.source))
    return {
        key: same[key] if len(same.get(key, ())) >= SAME_SOURCE_ANSWERS else answers
        for key, answers in priors.items()
    }


def _cell_chance(records: list[DataRecord], chances: dict[str, float]) -> float:
    """A cell's chance: the mean of its records' chances (from :func:`_record_chances`); a control's
    chance is its twin's, since it keeps the twin's question, options and answer key."""
    return fmean(chances.get(record.twin_of or record.id, 0.0) for record in records)


def _question_key(record: DataRecord) -> tuple:
    """What makes two records the same question: their ground-truth items (a reused item asks it again), else the row."""
    items = (record.gold or {}).get("item_ids")
    return ("items", *items) if isinstance(items, list) and items else ("row", record.row)


def _other_rows_answers(
    records: list[DataRecord], group: Callable[[DataRecord], Hashable] = lambda record: record.task
) -> dict[tuple[str, int], Counter]:
    """For each (task, row): the first gold answers of the other rows of its ``group`` (its task
    unless told otherwise; every length), leaving out this row and every record asking the same
    item (a reused item's answer is no prior knowledge)."""
    by_task: dict[Hashable, Counter] = defaultdict(Counter)
    by_row: dict[tuple[str, int], Counter] = defaultdict(Counter)
    by_question: dict[tuple[str, tuple], Counter] = defaultdict(Counter)
    by_both: dict[tuple[str, int, tuple], Counter] = defaultdict(Counter)
    for record in records:
        if record.answers:
            answer = record.answers[0]
            by_task[group(record)][answer] += 1
            by_row[(record.task, record.row)][answer] += 1
            by_question[(record.task, _question_key(record))][answer] += 1
            by_both[(record.task, record.row, _question_key(record))][answer] += 1
    priors = {}
    for record in records:
        key = _question_key(record)
        left_out = (
            by_row[(record.task, record.row)]
            + by_question[(record.task, key)]
            - by_both[(record.task, record.row, key)]
        )
        priors[(record.task, record.row)] = by_task[group(record)] - left_out
    return priors


def _other_rows_count_ratios(
    records: list[DataRecord], views: dict
) -> dict[tuple[str, int], float]:
    """For each (task, row) of a counting task: the mean share of distinct paragraphs (answer /
    announced total) of the task's other rows, every length (what a reader of other rows' answers
    learns)."""
    shares: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for record in records:
        total = views[record.id].listed
        if total and record.answers and record.answers[0].isdigit():
            shares[record.task].append((record.row, int(record.answers[0]) / total))
    return {
        (task, row): fmean(share for other, share in entries if other != row)
        for task, entries in shares.items()
        for row in {row for row, _ in entries}
        if any(other != row for other, _ in entries)
    }


def _verdicts(
    data_dir: Path,
    records: list[DataRecord],
    jobs: list[tuple[DataRecord, str, str]],
    scores: list[float],
    chances: dict[str, float],
    limits: dict,
) -> BaselineRun:
    per_cell: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    samples = []
    for (record, answer, what), score in zip(jobs, scores):
        per_cell[_cell_key(record)][what].append(score)
        samples.append(
            {
                "id": record.id,
                "on": record.control or REAL,
                "task": record.task,
                "label": record.label,
                "row": record.row,
                "length": record.length,
                "baseline": what,
                "prediction": answer,
                "score": score,
                "answers": list(record.answers),
                "source": record.source,
                "depth": record.depth,
            }
        )
    by_cell: dict[tuple[str, str, str], list[DataRecord]] = defaultdict(list)
    for record in records:
        by_cell[_cell_key(record)].append(record)
    cells = []
    for task, label, on in _cell_order(records):
        cell_records = by_cell[(task, label, on)]
        chance = _cell_chance(cell_records, chances)
        limit = limit_from_record(limits.get(task)) if on == REAL else CONTROL_LIMIT
        cell = CellVerdict(task, label, len(cell_records), chance, limit, on=on)
        for baseline in baselines_for(task):
            values = per_cell[(task, label, on)].get(baseline.name, [])
            cell.baselines.append(_score(baseline, values, limit))
        cells.append(cell)
    return BaselineRun(data_dir, cells, samples)


def _score(baseline: Baseline, values: list[float], limit: ShortcutLimit) -> BaselineScore:
    mean = fmean(values) if values else 0.0
    stderr = stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    judged = baseline.family not in limit.reported and (
        limit is CONTROL_LIMIT or baseline.anchor is None
    )
    return BaselineScore(
        baseline.name, baseline.family, baseline.description, mean, stderr, judged, baseline.anchor
    )


def _cell_key(record: DataRecord) -> tuple[str, str, str]:
    """(task, label, what the prompt is: real or a control kind)."""
    return record.task, record.label, record.control or REAL


def _cell_order(records: list[DataRecord]) -> list[tuple[str, str, str]]:
    """(task, label, on) cells in the data's task order, then by length, real prompts before their
    controls."""
    lengths: dict[tuple[str, str, str], int] = {}
    task_order: dict[str, int] = {}
    on_order = {REAL: 0, "gold_removed": 1, "context_swapped": 2}
    for record in records:
        lengths.setdefault(_cell_key(record), record.length)
        task_order.setdefault(record.task, len(task_order))
    return sorted(
        lengths, key=lambda cell: (task_order[cell[0]], lengths[cell], on_order.get(cell[2], 3))
    )
