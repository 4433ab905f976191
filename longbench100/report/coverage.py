"""The report's "Information coverage" section: IC by construction per task and length of the data."""

from .table import MISSING, table_row


def coverage_section(table: dict) -> str:
    """A markdown table of IC by construction (percent of context tokens inside the gold material)."""
    labels = list(dict.fromkeys(label for by_label in table.values() for label in by_label))
    lines = [table_row(["task", *labels]), table_row(["---"] * (len(labels) + 1))]
    for task, by_label in table.items():
        cells = [
            MISSING
            if (by_label.get(label) or {}).get("ic") is None
            else f"{100 * by_label[label]['ic']:.1f}%"
            for label in labels
        ]
        lines.append(table_row([task, *cells]))
    return "\n\n".join(
        [
            "## Information coverage by construction",
            "Share of each context's tokens inside the gold material (mean over the samples; "
            "`longbench100 coverage`, docs/coverage.md): low for retrieval tasks, 100% when the whole context is needed.",
            "\n".join(lines),
        ]
    )
