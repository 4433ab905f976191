"""The lines ``score`` prints after a run: the table, QA filter counts, and every count a user must know about."""

from collections import Counter
from collections.abc import Callable

from longbench100.scoring.results import summary_table
from longbench100.scoring.scorer import ScoreOutcome

Echo = Callable[[str], None]


def ungraded_reasons(outcome: ScoreOutcome) -> dict[str, int]:
    """Ungraded (unfiltered) samples counted by reason, most frequent first."""
    counts = Counter(
        sample.ungraded_reason or "no verdict"
        for sample in outcome.samples
        if sample.score is None and not sample.filtered
    )
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def reasons_text(reasons: dict[str, int]) -> str:
    """``12 invalid reply, 3 truncated reply``."""
    return ", ".join(f"{count} {reason}" for reason, count in reasons.items())


def filter_lines(qa_filter: dict) -> list[str]:
    """One terminal line per QA task with the samples the filter dropped, per length."""
    if qa_filter["threshold"] is None:
        return ["QA filter: off"]
    lines = []
    for task, labels in qa_filter["tasks"].items():
        cells = ", ".join(
            f"{label} {cell['dropped']}/{cell['n']}" for label, cell in labels.items()
        )
        no_closed = sum(cell["no_closed_book"] for cell in labels.values())
        ungraded = sum(cell.get("closed_book_ungraded", 0) for cell in labels.values())
        notes = []
        if no_closed:
            notes.append(f"{no_closed} without a closed-book answer")
        if ungraded:
            notes.append(f"{ungraded} whose closed-book answer the judge could not grade")
        note = f" ({'; '.join(notes)}: not filtered)" if notes else ""
        lines.append(
            f"QA filter (closed-book score >= {qa_filter['threshold']}): {task} dropped {cells}{note}"
        )
    return lines


def secondary_lines(also: dict) -> list[str]:
    """One terminal line per task and secondary metric: its mean (0-100) at each length."""
    lines = []
    for task, by_label in also.items():
        names = dict.fromkeys(name for means in by_label.values() for name in means)
        for name in names:
            cells = ", ".join(
                f"{label} {'-' if means.get(name) is None else f'{means[name]:.1f}'}"
                for label, means in by_label.items()
            )
            lines.append(f"secondary metric (not in LongScore): {task} {name}: {cells}")
    return lines


def print_summary(results: dict, outcome: ScoreOutcome, echo: Echo) -> None:
    """Print the summary table and the counts a user must know about, through ``echo``."""
    echo(summary_table(results))
    for line in secondary_lines(results["aggregates"].get("also", {})):
        echo(line)
    for line in filter_lines(outcome.qa_filter):
        echo(line)
    if results["limit"] is not None:
        echo(
            f"--limit {results['limit']}: scored only the first {results['limit']} rows of each task and length"
        )
    if results["missing_predictions"]:
        echo(
            f"{results['missing_predictions']} data records had no prediction: not scored "
            "(--allow-missing)"
        )
    if results["failed_predictions"]:
        echo(
            f"{results['failed_predictions']} requests had failed (prediction null): not scored "
            "(--allow-missing); predict --retry-failed redoes them"
        )
    if results["judge"] is not None:
        stats = results["judge"]
        failed = ", ".join(
            f"{count} {reason}" for reason, count in stats["failed_by_reason"].items()
        )
        echo(
            f"judge {stats['model']}: {stats['calls']} calls, {stats['cache_hits']} cache hits, "
            f"{stats['failed_calls']} failed calls{f' ({failed})' if failed else ''}, "
            f"{stats['invalid_replies']} unparsable replies"
        )
        if stats.get("truncated_replies"):
            echo(
                f"{stats['truncated_replies']} judge replies were cut off at --judge-max-tokens and left "
                "ungraded (not cached); raise --judge-max-tokens and rerun"
            )
        if stats.get("section_ratings"):
            kinds = ", ".join(f"{count} {kind}" for kind, count in stats["section_ratings"].items())
            echo(
                f"section summaries' 1-5 ratings: {kinds} (probability-weighted where the judge's server sent logprobs)"
            )
    if results["ungraded"]:
        echo(
            f"{results['ungraded']} samples could not be graded by the judge ({reasons_text(results['ungraded_by_reason'])}; "
            "score null, left out of the means)"
        )
    aggregates = results["aggregates"]
    for name, block in [*aggregates["tasks"].items(), ("overall", aggregates["overall"])]:
        for warning in block.get("warnings", []):
            echo(f"warning: {name}: {warning}")
    if not results["data"]["manifest_sha256"]:
        echo("note: the data folder has no manifest.json; results record manifest_sha256 null")
