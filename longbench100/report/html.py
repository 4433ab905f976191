"""``report --html``: one self-contained page with the report, its plots and a sample browser.

The page needs no network and no other file: report.md is rendered to HTML (markdown-it-py), the PNG
plots are embedded as data URIs, and the scored samples of every model travel as JSON inside the page,
filtered and shown by a small script. With the data folder (``--data``) each sample also shows its
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
from longbench100.folders.data_records import data_files, read_jsonl
from .load import ModelResult

HTML_REPORT = "report.html"
HEAD_CHARS = 600  # of each prompt: its opening (the instruction)
AROUND_CHARS = 400  # around each gold span
TAIL_CHARS = 800  # its ending (the question and answer cue)
_SAMPLE_FIELDS = ("id", "task", "label", "length", "row", "score", "filtered", "metric", "prediction", "answers", "depth",
                  "source", "parts", "judge_reply", "ungraded_reason")


def prompt_excerpt(prompt: str, gold_spans: list[tuple[int, int]]) -> list[dict]:
    """The parts of ``prompt`` the page shows, in order: ``{"text", "gold"}`` pieces and ``{"skipped": n}`` gaps.

    Shown are the first :data:`HEAD_CHARS` characters, each gold span with :data:`AROUND_CHARS` on either
    side, and the last :data:`TAIL_CHARS`; overlapping windows merge.
    """
    windows = [(0, min(HEAD_CHARS, len(prompt))), (max(0, len(prompt) - TAIL_CHARS), len(prompt))]
    windows += [(max(0, start - AROUND_CHARS), min(len(prompt), end + AROUND_CHARS)) for start, end in gold_spans]
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
        cuts = sorted({start, end, *(point for span in gold_spans for point in span if start < point < end)})
        for left, right in zip(cuts, cuts[1:]):
            inside = any(span_start <= left and right <= span_end for span_start, span_end in gold_spans)
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
            found += [(match.start(), match.end()) for match in re.finditer(re.escape(answer), prompt)][:5]
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


def write_html_report(results: list[ModelResult], out: Path, data_dir: Path | None) -> Path:
    """Write ``out/report.html`` from ``out/report.md`` and its plots (written first) and the results' samples."""
    models: list[dict[str, Any]] = []  # the page's JSON payload
    for result in results:
        raw = json.loads(result.path.read_text(encoding="utf-8"))
        samples = [{key: sample.get(key) for key in _SAMPLE_FIELDS} for sample in raw.get("samples", [])]
        models.append({"model": result.model, "samples": samples})
    wanted = {sample["id"] for model in models for sample in model["samples"]}
    payload = {"models": models, "prompts": _excerpts(data_dir, wanted) if data_dir is not None else None}
    body = MarkdownIt("commonmark").enable("table").render((out / "report.md").read_text(encoding="utf-8"))
    page = _PAGE.replace("@REPORT@", _embedded_images(body, out)).replace("@DATA@", _json_for_script(payload))
    write_bytes_atomic(out / HTML_REPORT, page.encode("utf-8"))
    return out / HTML_REPORT


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>longbench100 report</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;color:#222}
header{background:#263238;color:#fff;padding:10px 20px}
nav a{color:#fff;margin-right:16px;cursor:pointer;text-decoration:underline}
main{padding:10px 20px;max-width:1400px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#eceff1}
td:first-child,th:first-child{text-align:left}
img{max-width:100%}
#filters label{margin-right:12px;font-size:13px}
#filters input{width:70px}
#list tr{cursor:pointer}
#list tr:hover{background:#e3f2fd}
#list tr.open{background:#bbdefb}
#detail{border-top:2px solid #263238;margin-top:10px;padding-top:6px}
.prompt{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;background:#fafafa;border:1px solid #ddd;padding:8px;max-height:480px;overflow:auto}
.prompt mark{background:#ffe082}
.skip{color:#888;font-style:italic}
.box{white-space:pre-wrap;background:#f1f8e9;border:1px solid #c5e1a5;padding:6px;font-size:13px}
.hidden{display:none}
</style></head>
<body>
<header><b>longbench100 report</b> &nbsp; <nav><a data-view="report">Report</a><a data-view="samples">Samples</a></nav></header>
<main>
<section id="view-report">@REPORT@</section>
<section id="view-samples" class="hidden">
<div id="filters">
<label>model <select id="f-model"></select></label>
<label>task <select id="f-task"></select></label>
<label>length <select id="f-length"></select></label>
<label>score from <input id="f-smin" type="number" step="0.1" value="0"> to <input id="f-smax" type="number" step="0.1" value="1"></label>
<label>depth from <input id="f-dmin" type="number" step="0.1" value="0"> to <input id="f-dmax" type="number" step="0.1" value="1"></label>
<label><input id="f-ungraded" type="checkbox" style="width:auto"> ungraded only</label>
</div>
<p id="count"></p>
<table id="list"><thead><tr><th>id</th><th>task</th><th>length</th><th>score</th><th>depth</th><th>source</th></tr></thead><tbody></tbody></table>
<div id="detail"></div>
</section>
</main>
<script id="data" type="application/json">@DATA@</script>
<script>
const DATA = JSON.parse(document.getElementById("data").textContent);
const $ = (id) => document.getElementById(id);
function show(view) {
  for (const name of ["report", "samples"]) $("view-" + name).classList.toggle("hidden", name !== view);
}
document.querySelectorAll("nav a").forEach((a) => a.addEventListener("click", () => show(a.dataset.view)));
function options(select, values) {
  select.innerHTML = "";
  for (const value of values) { const o = document.createElement("option"); o.value = o.textContent = value; select.appendChild(o); }
}
function esc(text) { const d = document.createElement("div"); d.textContent = text == null ? "" : String(text); return d.innerHTML; }
function current() { return DATA.models[Number($("f-model").value)] || DATA.models[0]; }
function fillFilters() {
  const samples = current().samples;
  options($("f-task"), ["all", ...new Set(samples.map((s) => s.task))]);
  options($("f-length"), ["all", ...[...new Set(samples.map((s) => s.label))]]);
}
function kept() {
  const task = $("f-task").value, label = $("f-length").value, ungraded = $("f-ungraded").checked;
  const smin = Number($("f-smin").value), smax = Number($("f-smax").value);
  const dmin = Number($("f-dmin").value), dmax = Number($("f-dmax").value);
  return current().samples.filter((s) => (task === "all" || s.task === task) && (label === "all" || s.label === label)
    && (ungraded ? s.score === null : (s.score === null || (s.score >= smin && s.score <= smax)))
    && (s.depth === null || (s.depth >= dmin && s.depth <= dmax)));
}
function render() {
  const rows = kept();
  $("count").textContent = rows.length + " of " + current().samples.length + " samples";
  const body = $("list").querySelector("tbody");
  body.innerHTML = "";
  for (const s of rows) {
    const tr = document.createElement("tr");
    tr.dataset.id = s.id;
    tr.innerHTML = "<td>" + esc(s.id) + "</td><td>" + esc(s.task) + "</td><td>" + esc(s.label) + "</td><td>"
      + (s.score === null ? "ungraded" : (100 * s.score).toFixed(1)) + "</td><td>"
      + (s.depth === null ? "" : s.depth.toFixed(2)) + "</td><td>" + esc(s.source || "") + "</td>";
    tr.addEventListener("click", () => open(s, tr));
    body.appendChild(tr);
  }
}
function open(s, tr) {
  document.querySelectorAll("#list tr.open").forEach((row) => row.classList.remove("open"));
  tr.classList.add("open");
  let prompt = "<p class='skip'>Prompt not included: run report with --data DATA to see it.</p>";
  const pieces = DATA.prompts && DATA.prompts[s.id];
  if (pieces) {
    prompt = "<div class='prompt'>" + pieces.map((p) => p.skipped !== undefined
      ? "<span class='skip'>[... " + p.skipped + " characters not shown ...]</span>"
      : (p.gold ? "<mark>" + esc(p.text) + "</mark>" : esc(p.text))).join("") + "</div>";
  }
  const verdict = s.parts ? "<h4>Judge</h4><div class='box'>" + esc(JSON.stringify(s.parts, null, 1)) + "</div>" : "";
  const raw = s.judge_reply ? "<h4>Judge reply</h4><div class='box'>" + esc(s.judge_reply) + "</div>" : "";
  $("detail").innerHTML = "<h3 id='detail-id'>" + esc(s.id) + "</h3><p>score " + (s.score === null ? "ungraded ("
    + esc(s.ungraded_reason) + ")" : (100 * s.score).toFixed(1)) + " &middot; metric " + esc(s.metric)
    + (s.filtered ? " &middot; dropped by the QA filter" : "") + "</p><h4>Prompt</h4>" + prompt
    + "<h4>Prediction</h4><div class='box' id='detail-prediction'>" + esc(s.prediction) + "</div>"
    + "<h4>Gold</h4><div class='box'>" + (s.answers || []).map(esc).join("<hr>") + "</div>" + verdict + raw;
}
options($("f-model"), DATA.models.map((m) => m.model));
[...$("f-model").options].forEach((o, i) => { o.value = i; });
$("f-model").addEventListener("change", () => { fillFilters(); render(); });
for (const id of ["f-task", "f-length", "f-smin", "f-smax", "f-dmin", "f-dmax", "f-ungraded"]) $(id).addEventListener("input", render);
function applyLink() {
  // #samples?model=0&task=T&length=L&smin=0&smax=1&open=ID: a view that can be shared or bookmarked
  const [view, query] = location.hash.slice(1).split("?");
  if (view !== "samples") return;
  show("samples");
  const params = new URLSearchParams(query || "");
  if (params.has("model")) { $("f-model").value = params.get("model"); fillFilters(); }
  for (const [key, id] of [["task", "f-task"], ["length", "f-length"], ["smin", "f-smin"], ["smax", "f-smax"],
                           ["dmin", "f-dmin"], ["dmax", "f-dmax"]]) if (params.has(key)) $(id).value = params.get(key);
  render();
  const wanted = params.get("open");
  const row = wanted && [...document.querySelectorAll("#list tbody tr")].find((tr) => tr.dataset.id === wanted);
  if (row) row.click();
}
fillFilters();
render();
applyLink();
</script>
</body></html>
"""
