"""The needle-in-a-haystack view: per needle task, a depth x length heatmap of the score (x: length, y: depth)."""

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from longbench100.catalog.task_info import TASKS
from longbench100.core.lengths import parse_length
from longbench100.scoring.metrics.metric_table import metric_info

from .load import ModelResult
from .plots import _save


def needle_tasks(results: list[ModelResult]) -> list[str]:
    """Tasks with an exact-answer metric and depth aggregates at two lengths or more, in first-seen order."""
    seen = [task for result in results for task in result.aggregates.get("depth", {})]
    return [
        task
        for task in dict.fromkeys(seen)
        if task in TASKS
        and metric_info(TASKS[task].metric).exact_answer
        and any(len(result.aggregates.get("depth", {}).get(task, {})) >= 2 for result in results)
    ]


def plot_needle_heatmaps(results: list[ModelResult], path: Path) -> list[str]:
    """Write :func:`needle_heatmap_figure` to a PNG file when there is a needle task; return the tasks drawn."""
    figure = needle_heatmap_figure(results)
    if figure is None:
        return []
    _save(figure, path)
    return needle_tasks(results)


def needle_heatmap_figure(results: list[ModelResult]) -> Figure | None:
    """One panel per needle task and model: depth deciles (rows, 0% at the top) x lengths (columns, shortest
    left), coloured by score 0-100 (red low, green high; grey: no samples); ``None`` without needle tasks.

    Reads ``aggregates["depth"]`` (docs/aggregates.md).
    """
    tasks = needle_tasks(results)
    if not tasks:
        return None
    panels = [
        (result, task)
        for result in results
        for task in tasks
        if result.aggregates.get("depth", {}).get(task)
    ]
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    figure = Figure(figsize=(4.2 * columns + 1.2, 3.6 * rows + 0.8), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    colors = matplotlib.colormaps["RdYlGn"].with_extremes(bad="0.85")
    image = None
    for ax, (result, task) in zip(axes.flat, panels):
        by_label = result.aggregates["depth"][task]
        labels = sorted(by_label, key=parse_length)
        bins = max(len(by_label[label]) for label in labels)
        matrix = np.full((bins, len(labels)), np.nan)
        for column, label in enumerate(labels):
            scores = [
                np.nan if entry["score"] is None else entry["score"] for entry in by_label[label]
            ]
            matrix[: len(scores), column] = scores
        image = ax.imshow(
            matrix,
            origin="upper",
            aspect="auto",
            cmap=colors,
            vmin=0,
            vmax=100,
            interpolation="nearest",
            extent=(-0.5, len(labels) - 0.5, 100, 0),
        )
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks([0, 20, 40, 60, 80, 100])
        ax.set_xlabel("context length")
        ax.set_ylabel("depth (%)")
        ax.set_title(task if len(results) == 1 else f"{task} · {result.model}", fontsize="medium")
    assert image is not None, "each needle task has a panel: some model has its depth aggregates"
    figure.colorbar(image, ax=axes, label="score (0-100); grey: no samples", shrink=0.8)
    figure.suptitle("Needle recall: score by depth and context length")
    return figure
