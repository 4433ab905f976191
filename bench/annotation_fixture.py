"""Write what an annotator model answered for the chunks of a generation run, as a JSONL fixture.

``python bench/annotation_fixture.py MODEL OUT.jsonl [generate options...]``, e.g.::

    python bench/annotation_fixture.py smollm2 tests/support/fixtures/annotations_smollm2.jsonl \\
        --sources /data/lb100-mirror --suite ethic --tasks organizing,recalling --lengths 8k --rows 4

It plans the chunks the one-document tasks would ask about (as ``generate`` does, nothing is sent)
and, for each one whose reply is in the annotator cache for MODEL, writes one line: the label kind,
its prompt version, the chunk's sha256 and opening, the reply as the model wrote it, whether it was
cut off, and the label read from it (``null`` with the reason when no label could be read). The
reply text is what the cache holds, so a fixture only ever shows real replies.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from click.testing import CliRunner

from longbench100.annotation import annotator
from longbench100.annotation.annotator import annotation_prompt, make_annotator
from longbench100.cli import main
from longbench100.judge.annotation_rubric import PROMPT_VERSIONS, read_annotation
from longbench100.llm.options import JudgeOptions

OPENING_CHARS = 160


def planned_requests(arguments: list[str]) -> list[tuple[str, str]]:
    """The (kind, chunk) pairs a ``generate --dry-run`` with ``arguments`` plans."""
    planned: list[tuple[str, str]] = []
    original = annotator.plan_annotations  # generate imports it from there when it plans

    def capture(options, requests):
        planned.extend(requests)
        return original(options, requests)

    annotator.plan_annotations = capture
    try:
        result = CliRunner().invoke(
            main,
            ["generate", "--quiet", "--dry-run", "--out", "/nonexistent/fixture-plan", *arguments],
        )
    finally:
        annotator.plan_annotations = original
    if result.exit_code != 0:
        raise SystemExit(result.output)
    return planned


def fixture_lines(model: str, requests: list[tuple[str, str]]) -> list[dict]:
    """One line per planned chunk whose reply is cached for ``model``."""
    cache = make_annotator(JudgeOptions(model)).cache
    lines = []
    for kind, chunk in requests:
        entry = cache.get(annotation_prompt(kind, chunk).text)
        if entry is None:
            continue
        cut_off = entry.get("finish_reason") == "length"
        label = read_annotation(kind, entry["text"], chunk, cut_off=cut_off)
        lines.append(
            {
                "kind": kind.removeprefix("annotation_"),
                "prompt_version": PROMPT_VERSIONS[kind],
                "chunk_sha256": hashlib.sha256(chunk.encode("utf-8")).hexdigest(),
                "chunk_opening": chunk[:OPENING_CHARS],
                "chunk": chunk,
                "reply": entry["text"],
                "cut_off": cut_off,
                "label": label,
            }
        )
    return lines


def main_script(argv: list[str]) -> None:
    """Plan, read the cache, write the fixture, and say how many chunks had a cached reply."""
    model, out, *arguments = argv
    requests = planned_requests(["--annotator-model", model, *arguments])
    lines = fixture_lines(model, requests)
    Path(out).write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    print(
        f"{len(lines)} of {len(requests)} planned chunks had a cached reply from {model}; wrote {out}"
    )


if __name__ == "__main__":
    main_script(sys.argv[1:])
