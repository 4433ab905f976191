"""Assemble the report directory: report.md and the PNG plots."""

from itertools import combinations
from pathlib import Path

from longbench100.scoring.aggregates.compare import Comparison, compare_avg_lc

from .document import ReportContent, render_report
from .heatmap import plot_needle_heatmaps
from .load import ModelResult
from .plots import plot_lc, plot_lc_by_task, plot_score_by_depth, plot_scores
from .settings import SettingsCheck, pair_differs

PLOTS = {
    "Score vs length": ("score_vs_length.png", plot_scores),
    "LongScore vs length": ("lc_vs_length.png", plot_lc),
    "LongScore vs length, per task": ("lc_by_task.png", plot_lc_by_task),
}
DEPTH_PLOT = "score_by_depth.png"
HEATMAP_PLOT = "depth_heatmap.png"


def compare_all(
    results: list[ModelResult], *, n_boot: int, seed: int
) -> tuple[list[Comparison], list[tuple[str, str]]]:
    """Paired comparison of average LC for every pair of models made with the same settings, in the
    order the results were given; also return the pairs left out because their settings differ."""
    base_labels = list(results[0].aggregates["base_labels"]) if results else []
    comparisons, uncompared = [], []
    for a, b in combinations(results, 2):
        if pair_differs((a.path, a.settings), (b.path, b.settings)):
            uncompared.append((a.model, b.model))
        else:
            comparisons.append(
                compare_avg_lc(
                    a.model, a.samples, b.model, b.samples, base_labels, n_boot=n_boot, seed=seed
                )
            )
    return comparisons, uncompared


def write_report(
    results: list[ModelResult],
    out: Path,
    check: SettingsCheck,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    coverage: dict | None = None,
) -> list[Path]:
    """Write ``out/report.md`` and the plots into the existing folder ``out``; return the written
    paths, report.md first. ``check`` is the outcome of comparing the results' settings; ``coverage``
    the IC-by-construction table of the data, shown when given."""
    written = []
    for name, plot in PLOTS.values():
        plot(results, out / name)
        written.append(out / name)
    depth_tasks = plot_score_by_depth(results, out / DEPTH_PLOT)
    if depth_tasks:
        written.append(out / DEPTH_PLOT)
    heatmap_tasks = plot_needle_heatmaps(results, out / HEATMAP_PLOT)
    if heatmap_tasks:
        written.append(out / HEATMAP_PLOT)
    comparisons, uncompared = compare_all(results, n_boot=n_boot, seed=seed)
    content = ReportContent(
        comparisons=comparisons,
        uncompared=uncompared,
        check=check,
        plots={caption: name for caption, (name, _) in PLOTS.items()},
        depth_plot=DEPTH_PLOT if depth_tasks else None,
        depth_tasks=depth_tasks,
        heatmap_plot=HEATMAP_PLOT if heatmap_tasks else None,
        coverage=coverage,
    )
    report = out / "report.md"
    report.write_text(render_report(results, content), encoding="utf-8")
    return [report] + written
