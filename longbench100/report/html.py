"""``report --html``: one self-contained page with the report, its plots and a sample browser.

The page needs no network and no other file: report.md is rendered to HTML (markdown-it-py), the PNG
plots are embedded as data URIs, and the scored samples and aggregates of every model travel as JSON
inside the page, where a script (``page.html``) draws the models side by side, a score-vs-length
chart per task, and a sample browser whose filters live in the address; every table cell of the
report links to its samples. With the data folder (``--data``) each sample also shows its
prompt: the opening, every gold span with some text around it (highlighted) and the ending, with the
length of what is left out; whole prompts of long lengths would make the page gigabytes.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from longbench100.core.atomic import write_bytes_atomic
from longbench100.folders.data_records import data_files
from longbench100.folders.layout import read_jsonl

from .load import ModelResult
from .table import label_order

HTML_REPORT = "report.html"
HEAD_CHARS = 600  # of each prompt: its opening (the instruction)
AROUND_CHARS = 400  # around each gold span
TAIL_CHARS = 800  # its ending (the question and answer cue)
PAGE = Path(__file__).resolve().parent / "page.html"
FEW_SAMPLES = 10  # a point resting on fewer graded samples is drawn hollow, with its n
_LENGTH_FIELDS = ("score", "ci", "n", "n_filtered", "n_ungraded", "lc", "lc_ci")
_BLOCK_FIELDS = ("base_ability", "base_ci", "avg_lc", "avg_lc_ci", "warnings")
_SAMPLE_FIELDS = (
    "id",
    "task",
    "label",
    "length",
    "row",
    "score",
    "filtered",
    "metric",
    "prediction",
    "answers",
    "depth",
    "source",
    "parts",
    "judge_reply",
    "ungraded_reason",
)


def prompt_excerpt(prompt: str, gold_spans: list[tuple[int, int]]) -> list[dict]:
    """The parts of ``prompt`` the page shows, in order: ``{"text", "gold"}`` pieces and ``{"skipped": n}`` gaps.

    Shown are the first :data:`HEAD_CHARS` characters, each gold span with :data:`AROUND_CHARS` on either
    side, and the last :data:`TAIL_CHARS`; overlapping windows merge.
    """
    windows = [(0, min(HEAD_CHARS, len(prompt))), (max(0, len(prompt) - TAIL_CHARS), len(prompt))]
    windows += [
        (max(0, start - AROUND_CHARS), min(len(prompt), end + AROUND_CHARS))
        for start, end in gold_spans
    ]
    merged: list[list[int]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[dict] = []
    shown_to = 0
    for start, end in merged:
        if start > shown_to:
            pieces.append({"skipped": start - shown_to})
        cuts = sorted(
            {start, end, *(point for span in gold_spans for point in span if start < point < end)}
        )
        for left, right in zip(cuts, cuts[1:]):
            inside = any(
                span_start <= left and right <= span_end for span_start, span_end in gold_spans
            )
            pieces.append({"text": prompt[left:right], "gold": inside})
        shown_to = end
    return pieces


def gold_spans_of(record: dict) -> list[tuple[int, int]]:
    """Where the gold material sits in a record's prompt: its recorded ``gold.spans``, else every place a
    gold answer appears verbatim (older tasks record passage numbers, not offsets)."""
    spans = ((record.get("gold") or {}).get("spans") or {}).get("gold")
    if spans:
        return [(int(start), int(end)) for start, end in spans]
    prompt = record["prompt"]
    found = []
    for answer in record.get("answers") or []:
        if isinstance(answer, str) and len(answer) >= 3:
            found += [
                (match.start(), match.end()) for match in re.finditer(re.escape(answer), prompt)
            ][:5]
    return sorted(found)


def _excerpts(data_dir: Path, wanted: set[str]) -> dict[str, list[dict]]:
    """Prompt excerpts of the records ``wanted`` in the data folder, by id."""
    excerpts = {}
    for file in data_files(data_dir):
        for _, record in read_jsonl(file):
            if isinstance(record, dict) and record.get("id") in wanted:
                excerpts[record["id"]] = prompt_excerpt(record["prompt"], gold_spans_of(record))
    return excerpts


def _embedded_images(rendered: str, folder: Path) -> str:
    """Replace ``src="name.png"`` of the plots in ``folder`` with data URIs."""

    def inline(match: re.Match) -> str:
        path = folder / html.unescape(match.group(1))
        if not path.is_file():
            return match.group(0)
        return f'src="data:image/png;base64,{base64.b64encode(path.read_bytes()).decode("ascii")}"'

    return re.sub(r'src="([^"/:]+\.png)"', inline, rendered)


def _json_for_script(value: object) -> str:
    """JSON that is safe inside a ``<script>`` element: every ``<`` is written ``\\u003c``, so no text in a
    prompt or reply can close the element or open a comment in it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _block(block: dict) -> dict:
    """What the page needs of one aggregate block (overall or a task): lengths, base figures."""
    lengths = {
        label: {key: entry.get(key) for key in _LENGTH_FIELDS}
        for label, entry in block["lengths"].items()
    }
    return {"lengths": lengths, **{key: block.get(key) for key in _BLOCK_FIELDS}}


def _scrolling_tables(rendered: str) -> str:
    """Each table in a box of its own that scrolls sideways: a wide table never widens the page."""
    boxed = rendered.replace("<table>", '<div class="scroll"><table>')
    return boxed.replace("</table>", "</table></div>")


def write_html_report(results: list[ModelResult], out: Path, data_dir: Path | None) -> Path:
    """Write ``out/report.html`` from ``out/report.md`` and its plots (written first) and the
    results' samples and aggregates."""
    models: list[dict[str, Any]] = []  # the page's JSON payload
    for result in results:
        raw = json.loads(result.path.read_text(encoding="utf-8"))
        samples = [
            {key: sample.get(key) for key in _SAMPLE_FIELDS} for sample in raw.get("samples", [])
        ]
        tasks = {task: _block(block) for task, block in result.aggregates["tasks"].items()}
        aggregates = {"overall": _block(result.aggregates["overall"]), "tasks": tasks}
        models.append({"model": result.model, "samples": samples, "aggregates": aggregates})
    wanted = {sample["id"] for model in models for sample in model["samples"]}
    base, long = label_order(results)
    payload = {
        "models": models,
        "tasks": list(
            dict.fromkeys(task for result in results for task in result.aggregates["tasks"])
        ),
        "labels": base + long,
        "base_labels": base,
        "few_samples": FEW_SAMPLES,
        "prompts": _excerpts(data_dir, wanted) if data_dir is not None else None,
    }
    body = (
        MarkdownIt("commonmark")
        .enable("table")
        .render((out / "report.md").read_text(encoding="utf-8"))
    )
    page = PAGE.read_text(encoding="utf-8").replace("@FEW@", str(FEW_SAMPLES))
    page = page.replace("@REPORT@", _scrolling_tables(_embedded_images(body, out)))
    page = page.replace("@DATA@", _json_for_script(payload))
    write_bytes_atomic(out / HTML_REPORT, page.encode("utf-8"))
    return out / HTML_REPORT
