"""report.md as a whole: the sections in order, from the tables, the settings and the plots."""

from dataclasses import dataclass

from longbench100.scoring.aggregates.aggregate import MIN_BASE_ABILITY
from longbench100.scoring.aggregates.compare import Comparison

from ..scoring.complete_rows import rows_scored_text
from .coverage import coverage_section
from .load import ModelResult
from .provenance import mixed_banner, settings_section
from .settings import SettingsCheck
from .table import (
    MISSING,
    comparison_table,
    controls_table,
    interval_table,
    label_order,
    leaderboard,
    secondary_table,
)

SECONDARY_NOTE = (
    "Secondary metrics of this task, 0-100 per length: the same answers graded by another metric "
    "(the QA filter's samples left out); shown for reference, not part of S_l or LongScore."
)


@dataclass(frozen=True)
class ReportContent:
    """Everything report.md shows besides the results themselves."""

    comparisons: list[Comparison]
    """Paired comparisons of the models made alike."""
    uncompared: list[tuple[str, str]]
    """Model pairs made with different settings, hence not compared."""
    check: SettingsCheck
    plots: dict[str, str]
    """Caption -> PNG file name next to report.md (the length plots)."""
    depth_plot: str | None
    """File name of the score-by-depth plot, or ``None`` when no task has depth data."""
    depth_tasks: list[str]
    """The tasks the depth plot shows."""
    coverage: dict | None = None
    """IC by construction per task and length of the data (``ReportOptions.data_dir``), or ``None``."""
    heatmap_plot: str | None = None
    """File name of the needle heatmap (depth x length per exact-answer task), or ``None`` when none is drawn."""


def warning_list(results: list[ModelResult], check: SettingsCheck) -> str:
    """Every warning as a bullet: first what the settings check could not check, then each aggregate
    warning (model, scope (overall or task), message) and each task and length whose control score
    is flagged."""
    bullets = [f"- **Settings**: {warning}." for warning in check.warnings]
    for result in results:
        scopes = [("overall", result.aggregates["overall"])] + list(
            result.aggregates["tasks"].items()
        )
        for scope, block in scopes:
            bullets += [
                f"- **{result.model}** ({scope}): {warning}"
                for warning in block.get("warnings", [])
            ]
        flagged = [
            (task, label)
            for task, by_label in (result.aggregates.get("controls") or {}).items()
            for label, cell in by_label.items()
            if cell.get("flagged")
        ]
        bullets += [
            f"- **{result.model}** ({task} {label}): scores above chance on its control "
            "twins, without the gold (see Control twins)"
            for task, label in flagged
        ]
    return "\n".join(bullets) if bullets else "None."


def depth_section(results: list[ModelResult], content: ReportContent) -> str:
    """ "Score by depth": the plot, and which tasks have no depth data."""
    tasks = list(dict.fromkeys(task for result in results for task in result.aggregates["tasks"]))
    without = [task for task in tasks if task not in content.depth_tasks]
    parts = ["## Score by depth of the gold material"]
    if content.depth_plot is not None:
        parts.append(
            "Score (0-100) of the samples whose gold material sits in each tenth of the context, per task "
            'and length: a dip in the middle is the "lost in the middle" effect.'
        )
        parts.append(f"![Score by depth]({content.depth_plot})")
    if content.heatmap_plot is not None:
        parts.append(
            "The needle view of the exact-answer tasks: depth (rows, 0% at the top) by context length "
            "(columns), coloured by score; a red patch shows where in the context and from which length "
            "the model stops finding what it is asked."
        )
        parts.append(f"![Depth x length heatmap]({content.heatmap_plot})")
    if without:
        parts.append(
            f"No depth data for: {', '.join(without)} (their records carry no gold depth, or the results "
            "predate depth aggregates); they are not plotted."
        )
    return "\n\n".join(parts)


def suite_groups(results: list[ModelResult], tasks: list[str]) -> dict[str, list[str]]:
    """The tasks by suite (``aggregates.suites``, in task order); results made before suites form no group."""
    groups: dict[str, list[str]] = {}
    for result in results:
        for suite, block in result.aggregates.get("suites", {}).items():
            groups.setdefault(suite, []).extend(block["tasks"])
    return {suite: [task for task in tasks if task in members] for suite, members in groups.items()}


def base_line(rows: list[tuple[str, dict]]) -> str | None:
    """Which base lengths formed each model's Base Ability of one task, with their graded samples
    (``None`` for results made before task blocks recorded it)."""
    used = [
        f"{model} "
        + (", ".join(f"{label} ({n} samples)" for label, n in block["base"]["n"].items()) or "none")
        for model, block in rows
        if "base" in block
    ]
    return f"Base Ability from: {'; '.join(used)}." if used else None


def per_task_tables(results: list[ModelResult], tasks: list[str], long: list[str]) -> list[str]:
    """A ``### task`` heading, its leaderboard, the base lengths behind each Base Ability and, for a task with
    secondary metrics, their table, for each task."""
    base, _ = label_order(results)
    parts = []
    for task in tasks:
        rows = [
            (result.model, result.aggregates["tasks"][task])
            for result in results
            if task in result.aggregates["tasks"]
        ]
        line = base_line(rows)
        parts += [f"### {task}", leaderboard(rows, long), *([] if line is None else [line])]
        secondary = [
            (result.model, result.aggregates["also"][task])
            for result in results
            if task in result.aggregates.get("also", {})
        ]
        if secondary:
            parts += [SECONDARY_NOTE, secondary_table(secondary, base + long)]
    return parts


def section_ratings_note(results: list[ModelResult]) -> str | None:
    """How the judge's 1-5 section ratings were read (section_judge), per model: weighted by logprobs or plain."""
    lines = []
    for result in results:
        sections = [
            section
            for sample in result.samples
            if sample.metric == "section_judge" and sample.parts
            for section in sample.parts.get("sections") or []
            if section
        ]
        if sections:
            weighted = sum("weighted" in section for section in sections)
            lines.append(
                f"- {result.model}: {weighted} of {len(sections)} section ratings probability-weighted "
                f"(the judge's server sent logprobs), {len(sections) - weighted} plain 1-5"
            )
    return (
        "Section summaries judged reference-free (section_judge):\n" + "\n".join(lines)
        if lines
        else None
    )


def relevance_grades_note(results: list[ModelResult]) -> str | None:
    """How finely the re-ranking samples were judged, per model: graded (0-3, as TREC DL) or binary only."""
    lines = []
    for result in results:
        levels = [sample.relevance_grades for sample in result.samples if sample.relevance_grades]
        if levels:
            binary = sum(max(grades) <= 1 for grades in levels)
            lines.append(
                f"- {result.model}: {len(levels) - binary} of {len(levels)} samples graded beyond relevant / "
                f"not relevant, {binary} binary"
            )
    if not lines:
        return None
    return (
        "Re-ranking relevance (NDCG@10 over gold.relevance). HELMET's own MS MARCO data grades 0-3; binary "
        "judgements (the offline stand-in) cannot tell a partly relevant passage from a perfect one, so their "
        "NDCG is not comparable with HELMET's:\n" + "\n".join(lines)
    )


def skipped_tasks_note(results: list[ModelResult]) -> str | None:
    """The suite tasks that were never generated for some model's data, so no overall of its includes them."""
    lines = [
        f"- {result.model}: {task}: {reason}"
        for result in results
        for task, reason in result.skipped_tasks.items()
    ]
    if not lines:
        return None
    return (
        "Not generated, so not scored and in no overall (a suite overall is then over the other tasks or "
        "categories and does not compare with one that has them):\n" + "\n".join(lines)
    )


def missing_overall_note(results: list[ModelResult], labels: list[str]) -> str | None:
    """Why a model has no overall S_l at a length (its score's warning: the overall averages one
    fixed task set, so a task without graded samples there leaves S_l null), one bullet each."""
    lines = []
    for result in results:
        warnings = result.aggregates["overall"].get("warnings", [])
        for label in labels:
            prefix = f"S_{label} is null: "
            reason = next(
                (text.removeprefix(prefix) for text in warnings if text.startswith(prefix)), None
            )
            if reason is not None:
                lines.append(f"- {result.model}, S_{label}: {reason}")
    if not lines:
        return None
    return "No overall score at some lengths, so the plots leave them out:\n" + "\n".join(lines)


def incomplete_rows_note(results: list[ModelResult]) -> str | None:
    """The task and length figures that rest on fewer rows than the data has (``score
    --allow-missing``)."""
    lines = [
        f"- {result.model}: {task}: rows scored {rows_scored_text(labels)} "
        f"({result.rows.get('missing_rows')})"
        for result in results
        for task, labels in result.rows.get("incomplete", {}).items()
    ]
    if not lines:
        return None
    return (
        "Scored on fewer rows than the data has (predictions missing; never scored 0; paired: "
        "a task's rows predicted at every length):\n" + "\n".join(lines)
    )


def render_report(results: list[ModelResult], content: ReportContent) -> str:
    """The whole report.md: settings, overall leaderboard, plots and their intervals, per-task
    tables, depth, comparisons, warnings."""
    base, long = label_order(results)
    tasks = list(dict.fromkeys(task for result in results for task in result.aggregates["tasks"]))
    banner = mixed_banner(content.check, content.uncompared)
    parts = [
        "# LongBench100 report",
        f"Models: {len(results)}. Base lengths: {', '.join(base)}. Long lengths: {', '.join(long) or MISSING}.",
        *([] if banner is None else [banner]),
        "Scores S_l are 0-100 (overall: mean over tasks). Base = mean of S_l over the base lengths. "
        "LC_l = (S_l − Base) / Base in percent; averages are over the long lengths. "
        f"LongScore is unstable when Base Ability is small: bases below {MIN_BASE_ABILITY:g} points are "
        "marked † in the tables, drawn dashed in the plots and listed under Warnings. "
        "Definitions: docs/aggregates.md.",
        settings_section(results, content.check),
        "## Overall",
        leaderboard([(result.model, result.aggregates["overall"]) for result in results], long),
    ]
    parts += [f"![{caption}]({name})" for caption, name in content.plots.items()]
    missing = missing_overall_note(results, base + long)
    if missing:
        parts.append(missing)
    parts.append("## Overall with 95% bootstrap intervals")  # beside the plots they bound
    for result in results:
        parts += [f"### {result.model}", interval_table(result.aggregates["overall"], base + long)]
    groups = suite_groups(results, tasks)
    if len(groups) <= 1:  # one suite (or results made before suites): the layout has no suite level
        parts += ["## Per task", *per_task_tables(results, tasks, long)]
    else:
        for suite, members in groups.items():
            rows = [
                (result.model, result.aggregates["suites"][suite]["overall"])
                for result in results
                if (result.aggregates.get("suites", {}).get(suite) or {}).get("overall")
            ]
            parts += [
                f"## Suite {suite}",
                "Overall of this suite's tasks:",
                leaderboard(rows, long),
            ]
            parts += per_task_tables(results, members, long)
    notes = (
        skipped_tasks_note(results),
        incomplete_rows_note(results),
        section_ratings_note(results),
        relevance_grades_note(results),
    )
    parts += [note for note in notes if note]
    controls = controls_table(results)
    if controls is not None:
        parts += [
            "## Control twins",
            "Scores (0-100) on each sample's twins: the gold taken out, or another row's "
            "context, with the same question and answer key. A score above chance + 5 points "
            "(⚠, beyond sampling error) comes from something other than the gold. See "
            "docs/baselines.md.",
            controls,
        ]
    parts.append(depth_section(results, content))
    if content.coverage:
        parts.append(coverage_section(content.coverage))
    if content.comparisons:
        parts += [
            "## Paired comparison of average LC",
            "Paired bootstrap over the sample ids both models were scored on (filtered or ungraded for "
            "either: left out); significant when the 95% interval of the difference excludes 0. "
            "Only models made with the same settings are compared.",
            comparison_table(content.comparisons),
        ]
    parts += ["## Warnings", warning_list(results, content.check)]
    return "\n\n".join(parts) + "\n"
