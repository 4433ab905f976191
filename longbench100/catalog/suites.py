"""Suites: named sets of tasks with their default lengths, base lengths, metrics and overall score.

A suite is data, one TOML file: the packaged ones live in the top-level ``suites/`` folder (one file
per suite, named after it), and a user may pass a file of their own. docs/suites.md describes the
format. Tasks themselves stay in the task registry (:data:`longbench100.catalog.task_info.TASKS`), which
is the union of every suite's tasks: a suite only picks and configures them.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from longbench100.catalog.judge_styles import check_judge_style
from longbench100.catalog.shortcut_limits import DEFAULT_LIMIT, ShortcutLimit, parse_limit
from longbench100.catalog.task_info import TASKS, parse_task_list
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length_list
from longbench100.core.paths import packaged_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_SUITE = "100-longbench"
"""The suite ``generate`` builds when no ``--suite`` is given."""

DEFAULT_METRIC = "default"
"""A suite's metric for a task that keeps the task's own metric family."""

OVERALL_METHODS = ("mean", "category_mean")
"""How a suite's overall figures are formed: ``mean`` averages its overall tasks (docs/aggregates.md)."""

_TOP_KEYS = {"name", "description", "lengths", "base_lengths", "overall", "tasks", "judge_style"}
_OVERALL_KEYS = {"method", "tasks", "categories"}
_TASK_KEYS = {"metric", "shortcut_limit", "shortcut_reported", "stand_ins"}
ALTERNATIVE_METRICS = (
    "ndcg_at_10_lenient",
)  # metrics a suite may choose although no task uses them by default


@dataclass(frozen=True)
class Suite:
    """One validated suite file."""

    name: str
    description: str
    lengths: tuple[tuple[str, int], ...]  # (canonical label, budget), in length order
    base_lengths: tuple[str, ...]
    tasks: tuple[str, ...]  # in the file's order
    metrics: dict[str, str]  # task -> metric family (the task's own when the file says "default")
    overall_method: str
    overall_tasks: tuple[str, ...]
    path: Path
    sha256: str
    judge_style: str | None = (
        None  # the rubrics of its judge tasks (catalog/judge_styles.py); None: score's default
    )
    shortcut_limits: dict[str, ShortcutLimit] = field(
        default_factory=dict
    )  # task -> how well a shortcut may score (baselines)
    categories: dict[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # category_mean: category -> its tasks
    without_stand_ins: tuple[
        str, ...
    ] = ()  # tasks built from their anchor's own data only (stand_ins = false)

    def metric(self, task: str) -> str:
        """The metric family of ``task``: the suite's choice, else the task's own (for tasks outside the suite)."""
        return self.metrics.get(task, TASKS[task].metric)

    def record(self) -> dict:
        """What a manifest stores about the suite, so that scoring needs no suite file."""
        return {
            "name": self.name,
            "sha256": self.sha256,
            "tasks": list(self.tasks),
            "metrics": dict(self.metrics),
            "lengths": [label for label, _ in self.lengths],
            "base_lengths": list(self.base_lengths),
            "overall": {
                "method": self.overall_method,
                "tasks": list(self.overall_tasks),
                **(
                    {
                        "categories": {
                            name: list(members) for name, members in self.categories.items()
                        }
                    }
                    if self.categories
                    else {}
                ),
            },
            **({"judge_style": self.judge_style} if self.judge_style else {}),
            "shortcut_limits": {
                task: limit.record() for task, limit in self.shortcut_limits.items()
            },
        }


def packaged_suites() -> dict[str, Path]:
    """The packaged suite files by name, the default suite first, then alphabetically."""
    files = {path.stem: path for path in sorted(packaged_dir("suites").glob("*.toml"))}
    return {
        name: files[name] for name in sorted(files, key=lambda name: (name != DEFAULT_SUITE, name))
    }


def load_suite(spec: str) -> Suite:
    """Load a suite by packaged name, or from a ``.toml`` file path; raise :class:`UserError` when it is unknown or invalid."""
    packaged = packaged_suites()
    if spec in packaged:
        suite = parse_suite_file(packaged[spec])
        if suite.name != spec:
            raise UserError(
                f"{packaged[spec]}: name {suite.name!r} must match the file name {spec!r}"
            )
        return suite
    path = Path(spec).expanduser()
    if spec.endswith(".toml") or path.is_file():
        if not path.is_file():
            raise UserError(f"suite file {spec}: no such file")
        return parse_suite_file(path)
    raise UserError(
        f"suite {spec!r}: unknown suite; choose from {', '.join(packaged)} or pass a .toml file"
    )


def load_all_suites() -> list[Suite]:
    """Every packaged suite, validated, in :func:`packaged_suites` order."""
    return [load_suite(name) for name in packaged_suites()]


def pick_tasks(text: str, suite: Suite) -> tuple[str, ...]:
    """``--tasks``: ``all`` means the suite's tasks (in its order); names may be any known task (:func:`parse_task_list`)."""
    return suite.tasks if text.strip() == "all" else tuple(parse_task_list(text))


def suite_for_tasks(text: str) -> Suite:
    """The suite of a run that names no ``--suite``: the default suite for ``all`` or when it lists every
    named task, else the first packaged suite that lists them all (the default when none does)."""
    if text.strip() == "all":
        return load_suite(DEFAULT_SUITE)
    names = parse_task_list(text)
    fitting = (suite for suite in load_all_suites() if all(name in suite.tasks for name in names))
    return next(fitting, None) or load_suite(DEFAULT_SUITE)


def suites_of_task(task: str, suites: list[Suite]) -> list[str]:
    """The names of the suites among ``suites`` that contain ``task``."""
    return [suite.name for suite in suites if task in suite.tasks]


def parse_suite_file(path: Path) -> Suite:
    """Read and validate one suite file; every problem is a one-line :class:`UserError` naming the file and field."""
    try:
        raw_bytes = path.read_bytes()
        raw = tomllib.loads(raw_bytes.decode("utf-8"))
    except OSError as error:
        raise UserError(f"{path}: unreadable suite file ({error.strerror or error})") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UserError(f"{path}: not a valid TOML suite file ({error})") from None
    where = str(path)
    _refuse_unknown(raw, _TOP_KEYS, where)
    name = _string(raw, "name", where)
    description = _string(raw, "description", where, required=False)
    lengths = _lengths(raw, "lengths", where)
    base_lengths = _lengths(raw, "base_lengths", where)
    listed = {label for label, _ in lengths}
    stray = [label for label, _ in base_lengths if label not in listed]
    if stray:
        raise UserError(f"{where}: base_lengths {', '.join(stray)} must also be listed in lengths")
    tasks, metrics, limits, without_stand_ins = _tasks(raw.get("tasks"), where)
    method, overall_tasks = _overall(raw.get("overall", {}), tasks, where)
    categories = _categories(raw.get("overall", {}), method, overall_tasks, where)
    judge_style = (
        check_judge_style(_string(raw, "judge_style", where), f"{where}: judge_style")
        if "judge_style" in raw
        else None
    )
    return Suite(
        name=name,
        description=description,
        lengths=tuple(lengths),
        base_lengths=tuple(label for label, _ in base_lengths),
        tasks=tasks,
        metrics=metrics,
        overall_method=method,
        overall_tasks=overall_tasks,
        path=path,
        categories=categories,
        sha256=hashlib.sha256(raw_bytes).hexdigest(),
        judge_style=judge_style,
        shortcut_limits=limits,
        without_stand_ins=without_stand_ins,
    )


def _refuse_unknown(table: dict, allowed: set[str], where: str) -> None:
    """Refuse keys the format does not know (a typo would otherwise be ignored silently)."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise UserError(
            f"{where}: unknown field {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}"
        )


def _string(raw: dict, key: str, where: str, required: bool = True) -> str:
    """A non-empty string field (an absent optional one is ``""``)."""
    if key not in raw and not required:
        return ""
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: field {key!r} must be a non-empty string")
    return value.strip()


def _lengths(raw: dict, key: str, where: str) -> list[tuple[str, int]]:
    """A non-empty list of length labels, canonical and in length order."""
    value = raw.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise UserError(
            f'{where}: field {key!r} must be a non-empty list of length labels such as ["2k", "8k"]'
        )
    try:
        return parse_length_list(",".join(value))
    except UserError as error:
        raise UserError(f"{where}: field {key!r}: {error}") from None


def _tasks(
    table: object, where: str
) -> tuple[tuple[str, ...], dict[str, str], dict[str, ShortcutLimit], tuple[str, ...]]:
    """The ``[tasks.<name>]`` tables: known task names, their metric families, shortcut limits and the tasks that
    take no stand-in source (``stand_ins = false``)."""
    if not isinstance(table, dict) or not table:
        raise UserError(f"{where}: field 'tasks' must hold at least one [tasks.<name>] table")
    families = sorted({info.metric for info in TASKS.values()} | set(ALTERNATIVE_METRICS))
    metrics, limits, without_stand_ins = {}, {}, []
    for task, settings in table.items():
        field = f"tasks.{task}"
        if task not in TASKS:
            raise UserError(f"{where}: {field}: unknown task; known tasks: {', '.join(TASKS)}")
        if not isinstance(settings, dict):
            raise UserError(f'{where}: {field} must be a table, e.g. [{field}] metric = "default"')
        _refuse_unknown(settings, _TASK_KEYS, f"{where}: {field}")
        metric = settings.get("metric", DEFAULT_METRIC)
        if metric != DEFAULT_METRIC and metric not in families:
            raise UserError(
                f'{where}: {field}.metric {metric!r}: use "default" or one of {", ".join(families)}'
            )
        metrics[task] = TASKS[task].metric if metric == DEFAULT_METRIC else metric
        limits[task] = parse_limit(
            settings.get("shortcut_limit", DEFAULT_LIMIT),
            settings.get("shortcut_reported", []),
            f"{where}: {field}",
        )
        stand_ins = settings.get("stand_ins", True)
        if not isinstance(stand_ins, bool):
            raise UserError(f"{where}: {field}.stand_ins must be true or false")
        if not stand_ins:
            without_stand_ins.append(task)
    return tuple(table), metrics, limits, tuple(without_stand_ins)


def _overall(table: object, tasks: tuple[str, ...], where: str) -> tuple[str, tuple[str, ...]]:
    """The ``[overall]`` table: the method and the tasks it averages ("all": every task of the suite)."""
    if not isinstance(table, dict):
        raise UserError(f"{where}: field 'overall' must be a table")
    _refuse_unknown(table, _OVERALL_KEYS, f"{where}: overall")
    method = table.get("method", OVERALL_METHODS[0])
    if method not in OVERALL_METHODS:
        raise UserError(
            f"{where}: overall.method {method!r}: use one of {', '.join(OVERALL_METHODS)}"
        )
    chosen = table.get("tasks", "all")
    if chosen == "all":
        return method, tasks
    if (
        not isinstance(chosen, list)
        or not chosen
        or not all(isinstance(task, str) for task in chosen)
    ):
        raise UserError(
            f'{where}: overall.tasks must be "all" or a non-empty list of the suite\'s task names'
        )
    outside = [task for task in chosen if task not in tasks]
    if outside:
        raise UserError(
            f"{where}: overall.tasks {', '.join(outside)} not among the suite's [tasks]"
        )
    return method, tuple(task for task in tasks if task in chosen)


def _categories(
    table: dict, method: str, overall_tasks: tuple[str, ...], where: str
) -> dict[str, tuple[str, ...]]:
    """``[overall] categories`` (``{name = [tasks]}``): needed by ``category_mean``, where every overall task
    belongs to exactly one category; refused with any other method."""
    raw = table.get("categories") if isinstance(table, dict) else None
    if method != "category_mean":
        if raw is not None:
            raise UserError(
                f'{where}: overall.categories is used only with method = "category_mean"'
            )
        return {}
    if (
        not isinstance(raw, dict)
        or not raw
        or not all(
            isinstance(v, list) and v and all(isinstance(t, str) for t in v) for v in raw.values()
        )
    ):
        raise UserError(
            f'{where}: overall.method "category_mean" needs overall.categories = {{name = [tasks], ...}}'
        )
    placed = [task for members in raw.values() for task in members]
    missing = [task for task in overall_tasks if task not in placed]
    stray = sorted(
        {task for task in placed if task not in overall_tasks}
        | {task for task in placed if placed.count(task) > 1}
    )
    if missing or stray:
        problem = (
            f"without a category: {', '.join(missing)}"
            if missing
            else f"not an overall task or in two categories: {', '.join(stray)}"
        )
        raise UserError(
            f"{where}: overall.categories must place every overall task in exactly one category ({problem})"
        )
    return {name: tuple(members) for name, members in raw.items()}


def category_weights(recorded_overall: dict | None, tasks: list[str]) -> dict[str, float] | None:
    """Per-task weights that make each category of a ``category_mean`` overall count equally among ``tasks``
    (1 / the number of its category's tasks present); ``None`` for a plain mean."""
    if not isinstance(recorded_overall, dict) or recorded_overall.get("method") != "category_mean":
        return None
    present = {
        name: [task for task in members if task in tasks]
        for name, members in recorded_overall["categories"].items()
    }
    return {task: 1 / len(members) for members in present.values() for task in members}


NO_SUITE = "(no suite)"
"""The group of tasks that no known suite contains (a task added without a suite file)."""


def recorded_suite(manifest: dict | None) -> dict | None:
    """The suite record a data manifest holds (:meth:`Suite.record`), or ``None`` for folders made before suites."""
    record = manifest.get("suite") if isinstance(manifest, dict) else None
    if record is None:
        return None
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("name"), str)
        or not isinstance(record.get("tasks"), list)
    ):
        raise UserError(
            "manifest.json: field 'suite' must be an object with a name and a list of tasks"
        )
    return record


def group_by_suite(tasks: list[str], recorded: dict | None) -> dict[str, list[str]]:
    """Group task names by suite, keeping their order within each group.

    A task of the data's own suite (``recorded``, from the manifest) belongs to it; any other task to
    the first packaged suite that contains it (``--tasks`` may pick tasks across suites); a task no
    suite contains to :data:`NO_SUITE`. The recorded suite comes first.
    """
    known = load_all_suites()
    groups: dict[str, list[str]] = {recorded["name"]: []} if recorded else {}
    for task in tasks:
        if recorded and task in recorded["tasks"]:
            name = recorded["name"]
        else:
            name = next(iter(suites_of_task(task, known)), NO_SUITE)
        groups.setdefault(name, []).append(task)
    return {name: members for name, members in groups.items() if members}
