"""The per-task category chart (stacked bars, I-II left of zero, III-V right) and table, from dolce.json."""

from __future__ import annotations

import json
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from longbench100.core.atomic import write_bytes_atomic
from longbench100.core.errors import UserError
from longbench100.analysis.dolce.categories import CATEGORIES, CATEGORY_NAMES, NOT_SOLVED

_LEFT = ("II", "I")  # drawn outwards from zero to the left
_RIGHT = ("III", "IV", "V", NOT_SOLVED)  # not solved: drawn last, hatched, at the far right
_COLORS = {"I": "#9e9e9e", "II": "#90caf9", "III": "#1e88e5", "IV": "#ffb74d", "V": "#e53935", NOT_SOLVED: "#eeeeee"}


def estimator_line(fit: dict) -> str:
    """Which estimator made the fit (fits written before the choice existed used the refined one)."""
    estimator = fit.get("estimator") or {"name": "refined", "description": "written before estimators were named"}
    return f"estimator: {estimator['name']} ({estimator['description']})"


def task_warnings(fit: dict) -> list[str]:
    """Every task's warnings, each as ``task: text``."""
    return [f"{task}: {text}" for task, summary in fit["tasks"].items() for text in summary.get("warnings", [])]


def category_table(fit: dict) -> str:
    """A Markdown table: per task, problems, COW/PIG counts and the share of each category (percent); then the
    estimator and any warnings."""
    header = "| task | problems | COW | PIG | " + " | ".join(f"{name} {CATEGORY_NAMES[name]}" for name in CATEGORIES) + " |"
    lines = [header, "|" + "---|" * (4 + len(CATEGORIES))]
    for task, summary in fit["tasks"].items():
        shares = " | ".join(f"{100 * summary['shares'].get(name, 0):.0f}%" for name in CATEGORIES)
        kinds = summary["kinds"]
        lines.append(f"| {task} | {summary['problems']} | {kinds['COW']} | {kinds['PIG']} | {shares} |")
    lines += ["", estimator_line(fit)] + [f"warning: {text}" for text in task_warnings(fit)]
    return "\n".join(lines) + "\n"


def confusion_table(fit: dict) -> str:
    """For oracle runs: per task, expected category (rows) against fitted category (columns)."""
    lines = []
    for task, summary in fit["tasks"].items():
        if "confusion" not in summary:
            continue
        lines += [f"{task}", "| expected \\ fitted | " + " | ".join(CATEGORIES) + " |", "|" + "---|" * (1 + len(CATEGORIES))]
        for expected, cells in summary["confusion"].items():
            lines.append(f"| {expected} | " + " | ".join(str(cells.get(name, 0)) for name in CATEGORIES) + " |")
        lines.append("")
    return "\n".join(lines)


def plot_categories(fit: dict, path: Path) -> None:
    """Draw one horizontal stacked bar per task: shares of I-II to the left of zero, III-V to the right."""
    tasks = list(fit["tasks"])
    figure = Figure(figsize=(9, 2.0 + 0.6 * max(len(tasks), 1)), layout="constrained")
    ax = figure.add_subplot()
    positions = list(range(len(tasks)))[::-1]
    for side, names in ((-1, _LEFT), (1, _RIGHT)):
        offset = [0.0] * len(tasks)
        for name in names:
            widths = [100 * fit["tasks"][task]["shares"].get(name, 0) for task in tasks]
            bars = ax.barh(positions, [side * width for width in widths], left=[side * value for value in offset],
                           color=_COLORS[name], edgecolor="#999999" if name == NOT_SOLVED else "white",
                           hatch="//" if name == NOT_SOLVED else None, label=f"{name} {CATEGORY_NAMES[name]}")
            ax.bar_label(bars, labels=[f"{width:.0f}%" if width >= 8 else "" for width in widths],
                         label_type="center", fontsize="small")
            offset = [value + width for value, width in zip(offset, widths)]
    ax.axvline(0, color="black", linewidth=1)
    warned = {task for task, summary in fit["tasks"].items() if summary.get("warnings")}
    ax.set_yticks(positions, [f"{task} (n={fit['tasks'][task]['problems']})" + (" (!)" if task in warned else "")
                              for task in tasks])
    ax.set_xlim(-100, 100)
    ax.set_xticks(range(-100, 101, 25), [f"{abs(value)}%" for value in range(-100, 101, 25)])
    ax.set_xlabel("share of problems   (left: no context / easy    right: retrieval / balanced / holistic / not solved)")
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(f"{name} {CATEGORY_NAMES[name]}") for name in CATEGORIES]
    figure.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside lower center",
              ncol=3, fontsize="small", frameon=False)
    title = f"Dolce focus categories per task ({fit.get('estimator', {}).get('name', 'refined')} estimator)"
    if warned:
        title += f"\n(!) warnings for {len(warned)} of {len(tasks)} tasks: see dolce.md or dolce.json"
    ax.set_title(title, fontsize="medium")
    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=120, metadata={"Software": None})


def load_fit(path: Path) -> dict:
    """Read a dolce.json written by ``dolce fit``; a missing or malformed file is a one-line error."""
    try:
        fit = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"{path}: cannot read a dolce fit ({error})") from None
    if not isinstance(fit, dict) or not isinstance(fit.get("tasks"), dict):
        raise UserError(f"{path}: not a dolce fit (no 'tasks'; write one with `longbench100 dolce fit`)")
    return fit


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
