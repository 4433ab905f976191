"""PNG plots for the report, drawn with matplotlib's Agg backend (no display, no pyplot state)."""

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D

from longbench100.core.lengths import parse_length
from longbench100.scoring.aggregates.aggregate import MIN_BASE_ABILITY

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
    _mark_missing(ax, results, labels, lengths)
    ax.set_ylabel("score $S_{l}$ (0-100, mean over tasks, 95% band)")
    ax.set_title("Score $S_{l}$ vs length")
    ax.legend(fontsize="small")
    _save(figure, path)


def _mark_missing(
    ax: Axes, results: list[ModelResult], labels: list[str], lengths: list[int]
) -> None:
    """Say at each length where no model has an overall S_l why it is missing (the score's own
    warning names the tasks without graded samples there), instead of leaving the place empty."""
    overalls = [result.aggregates["overall"] for result in results]
    for label, length in zip(labels, lengths):
        if any(overall["lengths"].get(label, {}).get("score") is not None for overall in overalls):
            continue
        prefix = f"S_{label} is null: "
        named = any(
            text.startswith(prefix) for overall in overalls for text in overall.get("warnings", [])
        )
        why = "some task has no\ngraded samples here" if named else "no graded samples"
        ax.text(
            length,
            0.5,
            f"no $S_{{{label}}}$:\n{why}",
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="center",
            fontsize="x-small",
            color="0.3",
            bbox={"facecolor": "white", "edgecolor": "0.8", "boxstyle": "round"},
        )


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
    ax.set_ylabel("LongScore $LC_{l}$ (% change from Base Ability, 95% band)")
    ax.set_title("LongScore $LC_{l}$ vs length")
    ax.legend(fontsize="small")
    _save(figure, path)


def plot_lc_by_task(results: list[ModelResult], path: Path) -> None:
    """Write :func:`lc_by_task_figure` to a PNG file."""
    _save(lc_by_task_figure(results), path)


def lc_by_task_figure(results: list[ModelResult]) -> Figure:
    """A grid with one panel per task: LC_l vs long length with 95% intervals, one line per model.

    All panels share one y scale (so tasks compare at a glance) and one legend; a panel whose task
    has no LC value for any model says so instead of drawing empty axes.
    """
    _, long = label_order(results)
    lengths = _lengths(results, long)
    tasks = list(dict.fromkeys(task for result in results for task in result.aggregates["tasks"]))
    columns = min(4, max(1, len(tasks)))
    rows = max(1, math.ceil(len(tasks) / columns))
    figure = Figure(figsize=(3.6 * columns, 3.0 * rows + 1.0), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False, sharey=True)
    handles: dict[str, Line2D] = {}
    for ax, task in zip(axes.flat, tasks):
        ax.axhline(0.0, color="0.4", linewidth=0.8)
        blocks = [
            (index, result, result.aggregates["tasks"].get(task))
            for index, result in enumerate(results)
        ]
        drawn = [
            (index, result, block)
            for index, result, block in blocks
            if _has_values(block, long, "lc")
        ]
        for index, result, block in drawn:
            offset = _model_offset(index, len(results))
            handles.setdefault(
                result.model,
                _line(
                    ax,
                    index,
                    result.model,
                    block,
                    long,
                    [length * offset for length in lengths],
                    "lc",
                    "lc_ci",
                    interval="bars",
                ),
            )
        if not drawn:
            ax.text(
                0.5,
                0.5,
                "no data:\nno LongScore at any long length",
                transform=ax.transAxes,
                ha="center",
                va="center",
                color="0.35",
                fontsize="small",
                bbox={"facecolor": "white", "edgecolor": "0.8", "boxstyle": "round"},
            )
        _length_axis(ax, long, lengths)
        ax.set_xlabel("")
        ax.set_title(task, fontsize="medium")
    for ax in list(axes.flat)[len(tasks) :]:
        ax.set_visible(False)
    low, high = _value_range(results, tasks, long)
    axes[0, 0].set_ylim(low, high)
    figure.supxlabel("context length (tokens)", fontsize="medium")
    figure.supylabel("$LC_{l}$ (% change from Base Ability, 95% interval)", fontsize="medium")
    if handles:
        figure.legend(
            list(handles.values()), list(handles), loc="outside right upper", fontsize="small"
        )
    figure.suptitle("LongScore $LC_{l}$ vs length, per task")
    return figure


FEW_DEPTH_SAMPLES = 10
"""A depth bin resting on fewer samples is drawn as a hollow point (the figure says so)."""

MAX_DEPTH_LINES = 5
"""Up to this many lengths the depth plot draws one line per length; with more, a depth x length heatmap."""


def plot_score_by_depth(results: list[ModelResult], path: Path) -> list[str]:
    """Write :func:`score_by_depth_figure` to a PNG file when some task has depth data; return the tasks drawn."""
    figure = score_by_depth_figure(results)
    if figure is None:
        return []
    _save(figure, path)
    return depth_tasks(results)


def score_by_depth_figure(results: list[ModelResult]) -> Figure | None:
    """The "lost in the middle" view: score vs gold depth decile, one panel per task and model.

    One line per length (darker: longer), or with more than ``MAX_DEPTH_LINES`` lengths a heatmap of
    depth decile x length. Reads ``aggregates["depth"]`` (docs/aggregates.md); tasks without depth
    data are left out; ``None`` when no task has any.
    """
    tasks = depth_tasks(results)
    if not tasks:
        return None
    models = [
        result
        for result in results
        if any(task in result.aggregates.get("depth", {}) for task in tasks)
    ]
    labels = sorted(
        {
            label
            for result in models
            for task in tasks
            for label in result.aggregates["depth"].get(task, {})
        },
        key=parse_length,
    )
    heatmap = len(labels) > MAX_DEPTH_LINES
    columns = min(4, len(tasks))
    rows_per_model = math.ceil(len(tasks) / columns)
    figure = Figure(
        figsize=(3.4 * columns + 1.4, 2.9 * rows_per_model * len(models) + 1.0),
        layout="constrained",
    )
    axes = figure.subplots(
        rows_per_model * len(models), columns, squeeze=False, sharex=True, sharey=True
    )
    for ax in axes.flat:
        ax.set_visible(False)
    handles: dict[str, Line2D] = {}
    image = None
    for model_index, result in enumerate(models):
        for task_index, task in enumerate(tasks):
            ax = axes[model_index * rows_per_model + task_index // columns, task_index % columns]
            ax.set_visible(True)
            by_label = result.aggregates.get("depth", {}).get(task, {})
            if not by_label:
                ax.text(
                    0.5,
                    0.5,
                    "no depth data",
                    transform=ax.transAxes,
                    ha="center",
                    va="center",
                    color="0.35",
                    fontsize="small",
                )
            elif heatmap:
                image = _depth_heatmap(ax, by_label, labels)
            else:
                for label, line in _depth_lines(ax, by_label, labels).items():
                    handles.setdefault(label, line)
            ax.set_title(
                task if len(models) == 1 else f"{task} · {result.model}", fontsize="medium"
            )
            ax.tick_params(labelbottom=True)
    axes[0, 0].set_xlim(0, 100)
    axes[0, 0].set_xticks([0, 20, 40, 60, 80, 100])
    figure.supxlabel("depth of the gold material in the context (%, deciles)", fontsize="medium")
    if heatmap:
        axes[0, 0].set_yticks(range(len(labels)), labels)
        figure.supylabel("context length", fontsize="medium")
        if image is not None:
            figure.colorbar(
                image, ax=axes, label="score $S_{l}$ (0-100); grey: no samples", shrink=0.8
            )
    else:
        axes[0, 0].set_ylim(-5, 105)
        figure.supylabel("score $S_{l}$ (0-100)", fontsize="medium")
        figure.supxlabel(
            "depth of the gold material in the context (%, deciles); hollow points: "
            f"fewer than {FEW_DEPTH_SAMPLES} samples in the bin",
            fontsize="medium",
        )
        drawn = [label for label in labels if label in handles]
        figure.legend(
            [handles[label] for label in drawn],
            drawn,
            title="length",
            loc="outside right center",
            fontsize="small",
        )
    figure.suptitle("Score by depth of the gold material")
    return figure


def _depth_lines(ax: Axes, by_label: dict, labels: list[str]) -> dict[str, Line2D]:
    """One line per length of a task's depth bins (darker: longer); gaps where a bin has no score."""
    colors = matplotlib.colormaps["viridis_r"]
    lines = {}
    for label in sorted(by_label, key=parse_length):
        bins = by_label[label]
        centers = [50.0 * (entry["lo"] + entry["hi"]) for entry in bins]
        values = [np.nan if entry["score"] is None else entry["score"] for entry in bins]
        shade = labels.index(label) / max(1, len(labels) - 1)
        color = colors(0.1 + 0.8 * shade)
        (lines[label],) = ax.plot(centers, values, marker="o", markersize=3.5, color=color)
        few = [
            (center, value)
            for center, value, entry in zip(centers, values, bins)
            if entry["score"] is not None and entry["n"] < FEW_DEPTH_SAMPLES
        ]
        if few:
            few_x, few_y = zip(*few)
            ax.scatter(few_x, few_y, s=22, facecolors="white", edgecolors=[color], zorder=3)
    ax.grid(True, alpha=0.3)
    return lines


def _depth_heatmap(ax: Axes, by_label: dict, labels: list[str]) -> AxesImage:
    """A depth-bin x length heatmap of a task's scores (rows: ``labels``, shortest at the bottom; grey: no score)."""
    n_bins = max(len(bins) for bins in by_label.values())
    matrix = np.full((len(labels), n_bins), np.nan)
    for label, bins in by_label.items():
        matrix[labels.index(label), : len(bins)] = [
            np.nan if e["score"] is None else e["score"] for e in bins
        ]
    colors = matplotlib.colormaps["viridis"].with_extremes(bad="0.85")
    return ax.imshow(
        matrix,
        origin="lower",
        aspect="auto",
        extent=(0, 100, -0.5, len(labels) - 0.5),
        cmap=colors,
        vmin=0,
        vmax=100,
        interpolation="nearest",
    )


def depth_tasks(results: list[ModelResult]) -> list[str]:
    """Tasks for which some model has depth aggregates, in the order the tasks first appear."""
    tasks = [task for result in results for task in result.aggregates["tasks"]]
    tasks += [task for result in results for task in result.aggregates.get("depth", {})]
    return [
        task
        for task in dict.fromkeys(tasks)
        if any(result.aggregates.get("depth", {}).get(task) for result in results)
    ]


def _has_values(block: dict | None, labels: list[str], key: str) -> bool:
    """True when the block has a non-null ``key`` at one of ``labels``."""
    return block is not None and any(
        block["lengths"].get(label, {}).get(key) is not None for label in labels
    )


def _value_range(
    results: list[ModelResult], tasks: list[str], labels: list[str]
) -> tuple[float, float]:
    """A y range holding every task's LC values and intervals, with a margin; (-10, 10) without any."""
    values = [0.0]
    for result in results:
        for task in tasks:
            block = result.aggregates["tasks"].get(task)
            for label in labels:
                entry = {} if block is None else block["lengths"].get(label, {})
                values += [
                    value
                    for value in [entry.get("lc"), *(entry.get("lc_ci") or [])]
                    if value is not None
                ]
    low, high = min(values), max(values)
    margin = max(5.0, 0.08 * (high - low))
    return low - margin, high + margin


def _model_offset(index: int, count: int) -> float:
    """A small multiplicative x shift per model, so error bars of several models do not overlap."""
    return 2 ** (0.06 * (index - (count - 1) / 2))


def _lengths(results: list[ModelResult], labels: list[str]) -> list[int]:
    """The token length of each label, from the models' aggregates."""
    known: dict[str, int] = {}
    for result in results:
        known.update(result.aggregates["lengths"])
    return [known[label] for label in labels]


def _line(
    ax: Axes,
    index: int,
    model: str,
    block: dict,
    labels: list[str],
    lengths: Sequence[float],
    key: str,
    ci_key: str,
    interval: str = "band",
) -> Line2D:
    """Plot one model's values (gaps for nulls) with their 95% intervals as a shaded ``band`` or error
    ``bars``; return the line.

    The line is dashed when the block's Base Ability is below ``MIN_BASE_ABILITY`` (unstable LongScore).
    """
    entries = [block["lengths"].get(label, {}) for label in labels]
    values = np.array(
        [np.nan if entry.get(key) is None else entry[key] for entry in entries], dtype=float
    )
    color = f"C{index % 10}"
    small_base = block["base_ability"] is not None and block["base_ability"] < MIN_BASE_ABILITY
    (line,) = ax.plot(
        lengths,
        values,
        marker=_MARKERS[index % len(_MARKERS)],
        color=color,
        label=model,
        linestyle="--" if small_base else "-",
    )
    intervals = [entry.get(ci_key) or (np.nan, np.nan) for entry in entries]
    low, high = np.array(intervals, dtype=float).reshape(-1, 2).T
    if interval == "band":
        ax.fill_between(lengths, low, high, color=color, alpha=0.15, linewidth=0)
    else:
        ax.errorbar(
            lengths,
            values,
            yerr=[values - low, high - values],
            fmt="none",
            ecolor=color,
            alpha=0.7,
            capsize=2.5,
            linewidth=1.0,
        )
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
