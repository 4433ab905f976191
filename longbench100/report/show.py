"""Read scored samples back from results.json and lay them out for a terminal (``longbench100 show``).

Each per-sample entry holds at least the ``ScoredSample`` keys; results written with the per-sample
log also hold ``prediction``, ``answers``, ``depth``, ``source``, ``parts``, ``judge_reply`` and
``ungraded_reason``, and ``also`` for a task with secondary metrics (docs/results.md). Older files
lack them; what is absent is shown as absent.
"""

import textwrap
from dataclasses import dataclass
from pathlib import Path

from longbench100.core.errors import UserError
from longbench100.core.lengths import normalized_label

from .load import read_results_json

SHORTENED = "[... {count} more characters]"
"""The marker put where a long text was cut."""


@dataclass(frozen=True)
class SampleQuery:
    """Which samples of a results file to show."""

    task: str | None = None
    length: str | None = None
    """A length label (``8k``) or a token count; compared by its canonical label."""
    worst: int | None = None
    """Show only the N lowest-scored graded samples (ties: in row order)."""
    sample_id: str | None = None
    """Show only this sample (task and length then need not be given)."""
    ungraded: bool = False
    """Show only the samples the judge could not grade (with its raw reply and the reason)."""


def select_samples(path: Path, query: SampleQuery) -> tuple[str, list[dict]]:
    """The model name and the per-sample entries of the results file at ``path`` that ``query`` picks.

    Raises :class:`UserError` for an unknown id, or a task and length with no samples (naming the
    tasks and lengths the file has).
    """
    data = read_results_json(path)
    entries = data["samples"]
    if query.sample_id is not None:
        chosen = [entry for entry in entries if entry.get("id") == query.sample_id]
        if not chosen:
            raise UserError(f"no sample with id {query.sample_id!r} in {path}")
        return str(data["model"]), chosen
    if query.task is None or query.length is None:
        raise UserError("give --task and --length (or --id)")
    label = _label(query.length)
    chosen = [
        entry
        for entry in entries
        if entry.get("task") == query.task and entry.get("label") == label
    ]
    if not chosen:
        tasks = sorted({str(entry.get("task")) for entry in entries})
        labels = sorted(
            {str(entry.get("label")) for entry in entries if entry.get("task") == query.task}
        )
        where = (
            f"lengths of {query.task}: {', '.join(labels)}"
            if labels
            else f"tasks: {', '.join(tasks)}"
        )
        raise UserError(f"no samples for task {query.task} at length {label} in {path} ({where})")
    chosen.sort(key=lambda entry: entry.get("row", 0))
    if query.ungraded:
        chosen = [
            entry for entry in chosen if entry.get("score") is None and not entry.get("filtered")
        ]
    if query.worst is not None:
        graded = [
            entry
            for entry in chosen
            if entry.get("score") is not None and not entry.get("filtered")
        ]
        chosen = sorted(graded, key=lambda entry: entry["score"])[: query.worst]
    return str(data["model"]), chosen


def format_sample(entry: dict, *, width: int, max_chars: int) -> str:
    """One sample as terminal text: a header line, then each field, long texts wrapped to ``width``
    and cut after ``max_chars`` characters (0: never cut) with a marker saying how much was left out."""
    title = str(entry.get("id", "?")) + (
        f" · baseline {entry['baseline']}" if entry.get("baseline") else ""
    )
    lines = [_rule(title, width)]
    lines.append(_field("score", _score_text(entry), width))
    if entry.get("also"):
        lines.append(_field("also", _secondary_text(entry["also"]), width))
    facts = [
        f"metric {entry['metric']}" if entry.get("metric") else None,
        f"depth {entry['depth']:.2f}"
        if isinstance(entry.get("depth"), (int, float))
        else "depth unknown",
        f"source {entry['source']}" if entry.get("source") else "source unknown",
    ]
    lines.append(_field("about", ", ".join(fact for fact in facts if fact), width))
    lines += _block("prediction", _prediction_text(entry), width, max_chars)
    answers = entry.get("answers")
    if answers is None:
        lines.append(_field("gold", "(not recorded in this results file)", width))
    elif not answers:
        lines.append(_field("gold", "(none)", width))
    else:
        for number, answer in enumerate(answers, 1):
            lines += _block(
                f"gold {number}" if len(answers) > 1 else "gold", str(answer), width, max_chars
            )
    parts = entry.get("parts")
    if isinstance(parts, dict):
        scores = [
            f"{key} {_plain(value)}" for key, value in parts.items() if not isinstance(value, str)
        ]
        if scores:
            lines.append(_field("judge", ", ".join(scores), width))
        for key, value in parts.items():
            if isinstance(value, str):
                lines += _block(key, value, width, max_chars)
    if entry.get("judge_reply"):
        lines += _block("judge reply", str(entry["judge_reply"]), width, max_chars)
    return "\n".join(lines)


def format_samples(
    model: str, entries: list[dict], query: SampleQuery, *, width: int, max_chars: int
) -> str:
    """A heading naming what is shown, then every sample (see :func:`format_sample`)."""
    if query.sample_id is not None:
        what = f"sample {query.sample_id}"
    else:
        what = f"{query.task} at {_label(query.length or '')}"
        if query.ungraded:
            what += ", the ungraded samples"
        if query.worst is not None:
            what += f", the {len(entries)} lowest-scored graded samples"
    heading = f"model {model}: {what} ({len(entries)} shown)"
    return "\n\n".join(
        [heading] + [format_sample(entry, width=width, max_chars=max_chars) for entry in entries]
    )


def shorten(text: str, max_chars: int) -> str:
    """``text`` cut after ``max_chars`` characters with a marker naming how many were left out (0: uncut)."""
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    return text[:max_chars].rstrip() + " " + SHORTENED.format(count=len(text) - max_chars)


def _label(length: str) -> str:
    """The canonical label of a ``--length`` value (``8k`` and ``8192`` are the same); a bad one is a UserError."""
    return normalized_label(length)


def _score_text(entry: dict) -> str:
    """The score in points, or why there is none."""
    score = entry.get("score")
    if entry.get("filtered"):
        closed = entry.get("closed_book_score")
        note = "" if closed is None else f" (closed-book score {100 * closed:.1f})"
        return f"filtered out by the QA filter{note}; score {'none' if score is None else f'{100 * score:.1f}'}"
    if score is None:
        return f"ungraded: {entry.get('ungraded_reason') or 'no reason recorded'}"
    return f"{100 * score:.1f} / 100"


def _secondary_text(also: dict) -> str:
    """The secondary metrics' scores in points: ``qa_f1 66.7, order_exact 100.0``."""
    return ", ".join(
        f"{name} {'-' if score is None else f'{100 * score:.1f}'}" for name, score in also.items()
    )


def _prediction_text(entry: dict) -> str:
    """The prediction, or what stands in its place."""
    if "prediction" not in entry:
        return "(not recorded in this results file)"
    if entry["prediction"] is None:
        return "(none: the request failed or the prediction is missing)"
    return entry["prediction"] or "(empty answer)"


def _plain(value: object) -> str:
    """A judge part (number, text, list) as text."""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def _rule(title: str, width: int) -> str:
    """``── title ────`` filling the width."""
    return f"── {title} " + "─" * max(3, width - len(title) - 4)


def _field(name: str, value: str, width: int) -> str:
    """``name      value`` with the value wrapped under itself."""
    indent = " " * 12
    return textwrap.fill(
        value,
        width=width,
        initial_indent=f"{name:<11} ",
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    )


def _block(name: str, text: str, width: int, max_chars: int) -> list[str]:
    """A named text field: short ones on one line, longer ones below the name, wrapped and indented,
    keeping the text's own line breaks."""
    shortened = shorten(text, max_chars)
    if "\n" not in shortened and len(shortened) + 12 <= width:
        return [_field(name, shortened, width)]
    kept, marker = (
        (shortened, "")
        if shortened == text
        else (shortened[:max_chars].rstrip(), shortened[len(shortened[:max_chars].rstrip()) + 1 :])
    )
    lines = [f"{name}:"]
    for paragraph in kept.splitlines() or [""]:
        lines.append(
            textwrap.fill(
                paragraph,
                width=width,
                initial_indent="    ",
                subsequent_indent="    ",
                break_long_words=True,
                break_on_hyphens=False,
                drop_whitespace=True,
            )
            or "    "
        )
    if marker:  # the cut marker is never wrapped apart: it ends the last line, or stands on its own
        lines[-1:] = (
            [f"{lines[-1]} {marker}"]
            if len(lines[-1]) + 1 + len(marker) <= width
            else [lines[-1], f"    {marker}"]
        )
    return lines
