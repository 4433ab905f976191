"""Markdown tables for the report: leaderboards, intervals and paired comparisons."""

from longbench100.scoring.aggregates.aggregate import MIN_BASE_ABILITY
from longbench100.scoring.aggregates.compare import Comparison

from .load import ModelResult

MISSING = "—"


def fmt(value: float | None) -> str:
    """One decimal, ``—`` for null; never ``-0.0``."""
    if value is None:
        return MISSING
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def fmt_ci(interval: list[float] | tuple[float, float] | None) -> str:
    """An interval as ``[low, high]`` with one decimal, ``—`` for null."""
    return MISSING if interval is None else f"[{fmt(interval[0])}, {fmt(interval[1])}]"


def ranks(values: list[float | None]) -> list[int | None]:
    """Rank values from the highest (1); ties share the best rank; nulls get no rank."""
    present = [value for value in values if value is not None]
    return [
        None if value is None else 1 + sum(other > value for other in present) for value in values
    ]


def label_order(results: list[ModelResult]) -> tuple[list[str], list[str]]:
    """Return (base labels, long labels) over all models, each in length order."""
    lengths: dict[str, int] = {}
    for result in results:
        lengths.update(result.aggregates["lengths"])
    base = list(results[0].aggregates["base_labels"])
    long = sorted((label for label in lengths if label not in base), key=lengths.__getitem__)
    return base, long


def leaderboard(rows: list[tuple[str, dict]], long_labels: list[str]) -> str:
    """The paper-style table: model, Base, score and LC per long length, averages and both ranks.

    ``rows`` pairs each model name with its aggregate block (``overall`` or one task's block); rows
    are ordered by rank by average LC. A Base Ability below ``MIN_BASE_ABILITY`` is marked ``†``
    and explained under the table.
    """
    lc_ranks = ranks([block["avg_lc"] for _, block in rows])
    score_ranks = ranks([block["avg_score"] for _, block in rows])
    header = ["Model", "Base"]
    for label in long_labels:
        header += [label, f"{label} LC%"]
    header += ["Avg score", "Avg LC%", "Rank (avg LC)", "Rank (avg score)"]
    lines = [table_row(header), table_row(["---"] + ["---:"] * (len(header) - 1))]
    order = sorted(
        range(len(rows)), key=lambda i: (lc_ranks[i] is None, lc_ranks[i] or 0, rows[i][0])
    )
    for i in order:
        model, block = rows[i]
        cells = [model, fmt(block["base_ability"]) + ("†" if _small_base(block) else "")]
        for label in long_labels:
            entry = block["lengths"].get(label, {})
            cells += [fmt(entry.get("score")), fmt(entry.get("lc"))]
        cells += [fmt(block["avg_score"]), fmt(block["avg_lc"])]
        cells += [MISSING if rank is None else str(rank) for rank in (lc_ranks[i], score_ranks[i])]
        lines.append(table_row(cells))
    if any(_small_base(block) for _, block in rows):
        lines.append(
            f"\n† Base Ability below {MIN_BASE_ABILITY:g} points: LongScore is unstable (it divides by the base)."
        )
    return "\n".join(lines)


def interval_table(block: dict, labels: list[str]) -> str:
    """Per-length counts, scores and LC with their 95% bootstrap intervals, then Base Ability and averages."""
    header = ["Length", "n", "filtered", "ungraded", "Score", "Score 95% CI", "LC%", "LC 95% CI"]
    lines = [table_row(header), table_row(["---"] + ["---:"] * (len(header) - 1))]
    for label in labels:
        entry = block["lengths"].get(label)
        if entry is None:
            continue
        lines.append(
            table_row(
                [
                    label,
                    str(entry["n"]),
                    str(entry["n_filtered"]),
                    str(entry["n_ungraded"]),
                    fmt(entry["score"]),
                    fmt_ci(entry["ci"]),
                    fmt(entry["lc"]),
                    fmt_ci(entry["lc_ci"]),
                ]
            )
        )
    lines.append(
        table_row(
            ["Base", "", "", "", fmt(block["base_ability"]), fmt_ci(block["base_ci"]), "", ""]
        )
    )
    lines.append(
        table_row(
            [
                "Avg (long)",
                "",
                "",
                "",
                fmt(block["avg_score"]),
                fmt_ci(block["avg_score_ci"]),
                fmt(block["avg_lc"]),
                fmt_ci(block["avg_lc_ci"]),
            ]
        )
    )
    return "\n".join(lines)


def secondary_table(rows: list[tuple[str, dict]], labels: list[str]) -> str:
    """One row per model and secondary metric: its mean (0-100) at each length of ``labels`` it has.

    ``rows`` pairs each model name with its ``aggregates["also"][task]`` (label -> metric -> mean);
    lengths no model has are left out.
    """
    shown = [label for label in labels if any(label in by_label for _, by_label in rows)]
    lines = [
        table_row(["Model", "Metric", *shown]),
        table_row(["---", "---"] + ["---:"] * len(shown)),
    ]
    for model, by_label in rows:
        names = list(dict.fromkeys(name for means in by_label.values() for name in means))
        for name in names:
            lines.append(
                table_row(
                    [model, name, *(fmt(by_label.get(label, {}).get(name)) for label in shown)]
                )
            )
    return "\n".join(lines)


def comparison_table(comparisons: list[Comparison]) -> str:
    """One row per model pair: difference in average LC, its interval, p-value and significance."""
    header = [
        "Model A",
        "Model B",
        "Δ avg LC (A−B)",
        "95% CI",
        "p",
        "Shared samples",
        "Significant",
    ]
    lines = [
        table_row(header),
        table_row(["---", "---"] + ["---:"] * (len(header) - 3) + [":---:"]),
    ]
    for comparison in comparisons:
        p_value = MISSING if comparison.p_value is None else f"{comparison.p_value:.3f}"
        lines.append(
            table_row(
                [
                    comparison.model_a,
                    comparison.model_b,
                    fmt(comparison.diff),
                    fmt_ci(comparison.ci),
                    p_value,
                    str(comparison.n_shared),
                    "**yes**" if comparison.significant else "no",
                ]
            )
        )
    return "\n".join(lines)


def _small_base(block: dict) -> bool:
    """True when the block's Base Ability is known and below ``MIN_BASE_ABILITY``."""
    return block["base_ability"] is not None and block["base_ability"] < MIN_BASE_ABILITY


def table_row(cells: list[str]) -> str:
    """One markdown table row; pipes inside cells are escaped."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def controls_table(results: list[ModelResult]) -> str | None:
    """Per model, task and length: S_l, Base Ability, LongScore (LC%) and the model's scores on the
    control twins beside chance, flagged ``⚠`` when above chance + 5 points (``score --controls``);
    ``None`` when no result has control scores."""
    header = [
        "Model",
        "Task",
        "Length",
        "S_l",
        "Base",
        "LC%",
        "Gold removed",
        "Context swapped",
        "Chance",
        "Flag",
    ]
    lines = [
        table_row(header),
        table_row(["---", "---", "---"] + ["---:"] * (len(header) - 4) + ["---"]),
    ]
    for result in results:
        for task, by_label in (result.aggregates.get("controls") or {}).items():
            block = result.aggregates["tasks"].get(task) or {}
            for label, cell in by_label.items():
                entry = (block.get("lengths") or {}).get(label, {})
                controls = [
                    fmt((cell.get(kind) or {}).get("score"))
                    for kind in ("gold_removed", "context_swapped")
                ]
                lines.append(
                    table_row(
                        [
                            result.model,
                            task,
                            label,
                            fmt(entry.get("score")),
                            fmt(block.get("base_ability")),
                            fmt(entry.get("lc")),
                            *controls,
                            fmt(cell.get("chance")),
                            "⚠ above chance" if cell.get("flagged") else "",
                        ]
                    )
                )
    return "\n".join(lines) if len(lines) > 2 else None
