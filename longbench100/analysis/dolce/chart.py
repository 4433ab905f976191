"""The per-task category chart (stacked bars, I-II left of zero, III-V right) and table, from dolce.json."""

from __future__ import annotations

import json
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from longbench100.analysis.dolce.categories import CATEGORIES, CATEGORY_NAMES, NOT_SOLVED
from longbench100.core.atomic import write_bytes_atomic
from longbench100.core.errors import UserError
from longbench100.core.json_shape import check_shape

_LEFT = ("II", "I")  # drawn outwards from zero to the left
_RIGHT = ("III", "IV", "V", NOT_SOLVED)  # NS (only under --never-solved ns): last, far right
_COLORS = {
    "I": "#9e9e9e",
    "II": "#90caf9",
    "III": "#1e88e5",
    "IV": "#ffb74d",
    "V": "#e53935",
    NOT_SOLVED: "#eeeeee",
}
_HATCH = "//"  # marks the never-solved part of a category's bar
_HATCH_COLOR = "#424242"
_MIN_LABELLED = 8  # shares (percent) below this get no number in the bar


def estimator_line(fit: dict) -> str:
    """Which estimator made the fit (fits written before the choice existed used the refined one)."""
    estimator = fit.get("estimator") or {
        "name": "refined",
        "description": "written before estimators were named",
    }
    return f"estimator: {estimator['name']} ({estimator['description']})"


def fit_categories(fit: dict) -> tuple[str, ...]:
    """The categories a fit reports, in order (older fits, without ``categories``: all of them)."""
    return tuple(fit.get("categories") or CATEGORIES)


def never_solved_counts(summary: dict) -> dict[str, int]:
    """Per category, how many of a task's problems no probe answered right (older fits: NS)."""
    if "never_solved" in summary:
        return summary["never_solved"]
    return {NOT_SOLVED: summary["counts"].get(NOT_SOLVED, 0)}


def task_warnings(fit: dict) -> list[str]:
    """Every task's warnings, each as ``task: text``."""
    return [
        f"{task}: {text}"
        for task, summary in fit["tasks"].items()
        for text in summary.get("warnings", [])
    ]


def category_table(fit: dict) -> str:
    """A Markdown table: per task, problems, COW/PIG counts and the share of each category
    (percent), with the share of the task in it that no probe answered right; then the estimator,
    the never-solved rule and any warnings."""
    names = fit_categories(fit)
    columns = " | ".join(f"{name} {CATEGORY_NAMES[name]}" for name in names)
    lines = [f"| task | problems | COW | PIG | {columns} |", "|" + "---|" * (4 + len(names))]
    for task, summary in fit["tasks"].items():
        shares = " | ".join(_share_cell(summary, name) for name in names)
        kinds = summary["kinds"]
        lines.append(
            f"| {task} | {summary['problems']} | {kinds['COW']} | {kinds['PIG']} | {shares} |"
        )
    lines += ["", estimator_line(fit)] + _never_solved_lines(fit)
    lines += [f"warning: {text}" for text in task_warnings(fit)]
    return "\n".join(lines) + "\n"


def _share_cell(summary: dict, name: str) -> str:
    """A category's share of a task and, in brackets, the share of the task that is in it and was
    never solved (not for NS, which is all never solved)."""
    cell = f"{100 * summary['shares'].get(name, 0):.0f}%"
    unsolved = never_solved_counts(summary).get(name, 0)
    if unsolved and name != NOT_SOLVED:
        cell += f" ({100 * unsolved / summary['problems']:.0f}% never solved)"
    return cell


def _never_solved_lines(fit: dict) -> list[str]:
    """What the fit did with problems no probe answered right, when it has any."""
    if not any(sum(never_solved_counts(summary).values()) for summary in fit["tasks"].values()):
        return []
    if NOT_SOLVED in fit_categories(fit):
        return ["never solved (no probe answered right, whole context included): category NS"]
    return [
        "never solved (no probe answered right, whole context included): in the category "
        "their fit gives, in brackets here and hatched on the chart"
    ]


def confusion_table(fit: dict) -> str:
    """For oracle runs: per task, expected category (rows) against fitted category (columns)."""
    lines = []
    names = fit_categories(fit)
    for task, summary in fit["tasks"].items():
        if "confusion" not in summary:
            continue
        lines += [
            f"{task}",
            "| expected \\ fitted | " + " | ".join(names) + " |",
            "|" + "---|" * (1 + len(names)),
        ]
        for expected, cells in summary["confusion"].items():
            counts = " | ".join(str(cells.get(name, 0)) for name in names)
            lines.append(f"| {expected} | {counts} |")
        lines.append("")
    return "\n".join(lines)


def plot_categories(fit: dict, path: Path) -> None:
    """Save :func:`category_figure` of ``fit`` as a PNG at ``path`` (no software stamp: stable)."""
    category_figure(fit).savefig(path, dpi=120, metadata={"Software": None})


def category_figure(fit: dict) -> Figure:
    """Draw one horizontal stacked bar per task: shares of I-II to the left of zero, III-V to the
    right; the part of each category that no probe answered right (never solved) is hatched, at the
    outer end of the category's segment."""
    tasks = list(fit["tasks"])
    names = fit_categories(fit)
    figure = Figure(figsize=(9, 2.0 + 0.6 * max(len(tasks), 1)), layout="constrained")
    ax = figure.add_subplot()
    positions = list(range(len(tasks)))[::-1]
    for side, drawn in ((-1, _LEFT), (1, _RIGHT)):
        offset = [0.0] * len(tasks)
        for name in (name for name in drawn if name in names):
            summaries = [fit["tasks"][task] for task in tasks]
            widths = [100 * summary["shares"].get(name, 0) for summary in summaries]
            unsolved = [
                100 * never_solved_counts(summary).get(name, 0) / summary["problems"]
                for summary in summaries
            ]
            _draw_category(ax, name, positions, side, offset, widths, unsolved)
            offset = [value + width for value, width in zip(offset, widths)]
    ax.axvline(0, color="black", linewidth=1)
    warned = {task for task, summary in fit["tasks"].items() if summary.get("warnings")}
    ax.set_yticks(
        positions,
        [
            f"{task} (n={fit['tasks'][task]['problems']})" + (" (!)" if task in warned else "")
            for task in tasks
        ],
    )
    ax.set_xlim(-100, 100)
    ax.set_xticks(range(-100, 101, 25), [f"{abs(value)}%" for value in range(-100, 101, 25)])
    right = "retrieval / balanced / holistic" + (" / not solved" if NOT_SOLVED in names else "")
    ax.set_xlabel(f"share of problems   (left: no context / easy    right: {right})")
    figure.legend(
        handles=_legend_handles(names),
        loc="outside lower center",
        ncol=3,
        fontsize="small",
        frameon=False,
    )
    title = f"Dolce focus categories per task ({fit.get('estimator', {}).get('name', 'refined')} estimator)"
    if warned:
        title += (
            f"\n(!) warnings for {len(warned)} of {len(tasks)} tasks: see dolce.md or dolce.json"
        )
    ax.set_title(title, fontsize="medium")
    FigureCanvasAgg(figure)
    return figure


def _draw_category(
    ax,
    name: str,
    positions: list[int],
    side: int,
    offset: list[float],
    widths: list[float],
    unsolved: list[float],
) -> None:
    """One category's segment of every task's bar, from ``offset`` outwards on ``side`` (-1 left,
    1 right): the solved part plain, then the never-solved part hatched, the total share on top."""
    solved = [width - part for width, part in zip(widths, unsolved)]
    ax.barh(
        positions,
        [side * width for width in solved],
        left=[side * value for value in offset],
        color=_COLORS[name],
        edgecolor="white",
    )
    ax.barh(
        positions,
        [side * part for part in unsolved],
        left=[side * (value + width) for value, width in zip(offset, solved)],
        color=_COLORS[name],
        linewidth=0,
        hatch=_HATCH,
        hatchcolor=_HATCH_COLOR,
    )
    for position, start, width in zip(positions, offset, widths):
        if width >= _MIN_LABELLED:
            ax.text(
                side * (start + width / 2),
                position,
                f"{width:.0f}%",
                ha="center",
                va="center",
                fontsize="small",
                bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0},
            )


def _legend_handles(names: tuple[str, ...]) -> list[Patch]:
    """A legend patch per category (NS hatched: all never solved), then what the hatch means."""
    handles = [
        Patch(
            facecolor=_COLORS[name],
            edgecolor="white",
            hatchcolor=_HATCH_COLOR,
            hatch=_HATCH if name == NOT_SOLVED else None,
            label=f"{name} {CATEGORY_NAMES[name]}",
        )
        for name in names
    ]
    hatch = Patch(
        facecolor="white",
        edgecolor=_HATCH_COLOR,
        hatch=_HATCH,
        hatchcolor=_HATCH_COLOR,
        label="hatched: never solved (no probe right, whole context too)",
    )
    return handles + [hatch]


_NUMBER = (int, float)
_COUNTS = {"*": int}
FIT_SHAPE = {
    "categories?": [str],
    "tasks": {
        "*": {
            "problems": int,
            "kinds": {"COW": int, "PIG": int},
            "counts": _COUNTS,
            "shares": {"*": _NUMBER},
            "never_solved?": _COUNTS,
            "warnings?": [str],
            "confusion?": {"*": _COUNTS},
        }
    },
    "problems": [
        {
            "id": str,
            "task": str,
            "category": str,
            "solved": bool,
            "lambda": (int, float, type(None)),
            "k": (int, float, type(None)),
        }
    ],
}
"""The parts of a dolce.json that the report reads."""
_SHARE_TOLERANCE = 1e-5  # shares are written rounded to six digits


def load_fit(path: Path) -> dict:
    """Read a dolce.json written by ``dolce fit``: a missing or malformed file, or per-task figures
    that its problems do not give (:func:`check_fit`), is a one-line error."""
    try:
        fit = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"{path}: cannot read a dolce fit ({error})") from None
    if not isinstance(fit, dict) or not isinstance(fit.get("tasks"), dict):
        raise UserError(
            f"{path}: not a dolce fit (no 'tasks'; write one with `longbench100 dolce fit`)"
        )
    check_shape(fit, FIT_SHAPE, str(path))
    check_fit(fit, str(path))
    return fit


def check_fit(fit: dict, where: str) -> None:
    """Refuse, in one line, a fit whose categories are unknown or whose per-task summary (problems,
    counts, shares, never solved) is not what its problems' rows give."""
    names = fit_categories(fit)
    if not set(names) <= set(CATEGORIES):
        raise UserError(f"{where}: categories {list(names)} are not among {', '.join(CATEGORIES)}")
    rows: dict[str, list[dict]] = {}
    for number, row in enumerate(fit["problems"]):
        if row["category"] not in names:
            raise UserError(
                f"{where}: problems[{number}] ({row['id']}): category "
                f"{row['category']!r} is not one of {', '.join(names)}"
            )
        rows.setdefault(row["task"], []).append(row)
    if set(rows) != set(fit["tasks"]):
        summarised = ", ".join(sorted(fit["tasks"]))
        raise UserError(
            f"{where}: the tasks of its summary ({summarised}) are not those of its "
            f"problems ({', '.join(sorted(rows)) or 'none'})"
        )
    for task, summary in fit["tasks"].items():
        found = _summary_of(rows[task], names)
        for key in ("problems", "counts", "never_solved", "shares"):
            if key in summary and not _same(summary[key], found[key]):
                raise UserError(
                    f"{where}: tasks.{task}.{key} is {summary[key]}, but its problems "
                    f"give {found[key]}: edited by hand? fit again with "
                    "`longbench100 dolce fit`"
                )


def _summary_of(rows: list[dict], names: tuple[str, ...]) -> dict:
    """Problems, counts, shares and never-solved counts of one task, from its rows."""
    counts = {name: sum(row["category"] == name for row in rows) for name in names}
    unsolved = {
        name: sum(row["category"] == name and not row["solved"] for row in rows) for name in names
    }
    return {
        "problems": len(rows),
        "counts": counts,
        "never_solved": unsolved,
        "shares": {name: count / len(rows) for name, count in counts.items()},
    }


def _same(written: object, found: object) -> bool:
    """Whether a written figure is the one recomputed (shares within their rounding)."""
    if isinstance(found, dict):
        return (
            isinstance(written, dict)
            and set(written) == set(found)
            and all(_same(written[key], value) for key, value in found.items())
        )
    if isinstance(found, float):
        return isinstance(written, _NUMBER) and abs(written - found) <= _SHARE_TOLERANCE
    return written == found


def write_dolce_report(fit: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write ``dolce.md`` (category shares, and the confusion for oracle runs) and ``dolce.png`` (the
    chart) into the existing folder ``out_dir``; return both paths. ``dolce report`` and
    ``report --dolce`` both use it."""
    table = category_table(fit)
    if any("confusion" in summary for summary in fit["tasks"].values()):
        table += "\n" + confusion_table(fit)
    write_bytes_atomic(out_dir / "dolce.md", table.encode("utf-8"))
    plot_categories(fit, out_dir / "dolce.png")
    return out_dir / "dolce.md", out_dir / "dolce.png"
