"""PNG plots for the report, drawn with matplotlib's Agg backend (no display, no pyplot state)."""

import math
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..scoring.aggregate import MIN_BASE_ABILITY
from .load import ModelResult
from .table import label_order

_MARKERS = "osD^vP*Xh<>"


def plot_scores(results: list[ModelResult], path: Path) -> None:
    """Overall score S_l vs length (base lengths shaded), one line per model with its 95% band."""
    base, long = label_order(results)
    labels = base + long
    lengths = _lengths(results, labels)
    figure = Figure(figsize=(8, 5), layout="constrained")
    ax = figure.add_subplot()
    last_base = lengths[len(base) - 1]
    edge = math.sqrt(last_base * lengths[len(base)]) if long else last_base * 1.3
    ax.axvspan(lengths[0] / 1.3, edge, color="0.92", zorder=0, label="base lengths")
    for index, result in enumerate(results):
        _line(ax, index, result.model, result.aggregates["overall"], labels, lengths, "score", "ci")
    _length_axis(ax, labels, lengths)
    ax.set_ylabel("score S_l (0-100, mean over tasks)")
    ax.set_title("Score vs length")
    ax.legend(fontsize="small")
    _save(figure, path)


def plot_lc(results: list[ModelResult], path: Path) -> None:
    """Overall LongScore LC_l (percent) vs long length, one line per model with its 95% band."""
    _, long = label_order(results)
    lengths = _lengths(results, long)
    figure = Figure(figsize=(8, 5), layout="constrained")
    ax = figure.add_subplot()
    ax.axhline(0.0, color="0.4", linewidth=0.8)
    for index, result in enumerate(results):
        _line(ax, index, result.model, result.aggregates["overall"], long, lengths, "lc", "lc_ci")
    _length_axis(ax, long, lengths)
    ax.set_ylabel("LongScore LC_l (% change from Base Ability)")
    ax.set_title("LongScore vs length")
    ax.legend(fontsize="small")
    _save(figure, path)


def plot_lc_by_task(results: list[ModelResult], path: Path) -> None:
    """A grid with one panel per task: LC_l vs long length, one line per model, one shared legend."""
    _, long = label_order(results)
    lengths = _lengths(results, long)
    tasks = list(dict.fromkeys(task for result in results for task in result.aggregates["tasks"]))
    columns = min(4, max(1, len(tasks)))
    rows = max(1, math.ceil(len(tasks) / columns))
    figure = Figure(figsize=(3.6 * columns, 3.0 * rows + 0.8), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False, sharex=True)
    handles: dict[str, Line2D] = {}
    for ax, task in zip(axes.flat, tasks):
        ax.axhline(0.0, color="0.4", linewidth=0.8)
        for index, result in enumerate(results):
            block = result.aggregates["tasks"].get(task)
            if block is not None:
                handles.setdefault(
                    result.model, _line(ax, index, result.model, block, long, lengths, "lc", "lc_ci", band=False)
                )
        _length_axis(ax, long, lengths)
        ax.set_title(task, fontsize="medium")
        ax.set_xlabel("")
    for ax in list(axes.flat)[len(tasks):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("LC_l (%)")
    figure.legend(list(handles.values()), list(handles), loc="outside lower center",
                  ncols=min(4, len(results)), fontsize="small")
    figure.suptitle("LongScore vs length, per task")
    _save(figure, path)


def _lengths(results: list[ModelResult], labels: list[str]) -> list[int]:
    """The token length of each label, from the models' aggregates."""
    known: dict[str, int] = {}
    for result in results:
        known.update(result.aggregates["lengths"])
    return [known[label] for label in labels]


def _line(ax: Axes, index: int, model: str, block: dict, labels: list[str], lengths: list[int],
          key: str, ci_key: str, band: bool = True) -> Line2D:
    """Plot one model's values (gaps for nulls), optionally with a shaded 95% interval band; return the line.

    The line is dashed when the block's Base Ability is below ``MIN_BASE_ABILITY`` (unstable LongScore).
    """
    entries = [block["lengths"].get(label, {}) for label in labels]
    values = np.array([np.nan if entry.get(key) is None else entry[key] for entry in entries], dtype=float)
    color = f"C{index % 10}"
    small_base = block["base_ability"] is not None and block["base_ability"] < MIN_BASE_ABILITY
    (line,) = ax.plot(lengths, values, marker=_MARKERS[index % len(_MARKERS)], color=color, label=model,
                      linestyle="--" if small_base else "-")
    if band:
        intervals = [entry.get(ci_key) or (np.nan, np.nan) for entry in entries]
        low, high = np.array(intervals, dtype=float).reshape(-1, 2).T
        ax.fill_between(lengths, low, high, color=color, alpha=0.15, linewidth=0)
    return line


def _length_axis(ax: Axes, labels: list[str], lengths: list[int]) -> None:
    """A log2 x axis with one tick per length, labelled 2k, 4k, ..."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, labels)
    ax.minorticks_off()
    if lengths:
        ax.set_xlim(lengths[0] / 1.3, lengths[-1] * 1.3)
    ax.set_xlabel("context length (tokens)")
    ax.grid(True, alpha=0.3)


def _save(figure: Figure, path: Path) -> None:
    """Render the figure to a PNG file with the Agg canvas."""
    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=120)
