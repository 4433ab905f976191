"""Assemble the report directory: report.md and the PNG plots."""

from itertools import combinations
from pathlib import Path

from ..scoring.compare import Comparison, compare_avg_lc
from .load import ModelResult
from .plots import plot_lc, plot_lc_by_task, plot_scores
from .table import render_report

PLOTS = {
    "Score vs length": ("score_vs_length.png", plot_scores),
    "LongScore vs length": ("lc_vs_length.png", plot_lc),
    "LongScore vs length, per task": ("lc_by_task.png", plot_lc_by_task),
}


def compare_all(results: list[ModelResult], *, n_boot: int, seed: int) -> list[Comparison]:
    """Paired comparison of average LC for every pair of models, in the order the results were given."""
    base_labels = list(results[0].aggregates["base_labels"]) if results else []
    return [
        compare_avg_lc(a.model, a.samples, b.model, b.samples, base_labels, n_boot=n_boot, seed=seed)
        for a, b in combinations(results, 2)
    ]


def write_report(results: list[ModelResult], out: Path, *, n_boot: int = 1000, seed: int = 0) -> list[Path]:
    """Write ``out/report.md`` and the plots; return the written paths, report.md first."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, plot in PLOTS.values():
        plot(results, out / name)
        written.append(out / name)
    comparisons = compare_all(results, n_boot=n_boot, seed=seed)
    report = out / "report.md"
    plots = {caption: name for caption, (name, _) in PLOTS.items()}
    report.write_text(render_report(results, comparisons, plots), encoding="utf-8")
    return [report] + written
