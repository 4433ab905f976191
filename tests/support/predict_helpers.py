"""Helpers for the predict tests: tiny data folders in the docs/schema.md format, and output readers."""

import json
from pathlib import Path

from longbench100.catalog.task_info import TASKS
from longbench100.core.lengths import parse_length


def data_record(task: str, label: str, row: int, prompt_words: int = 6) -> dict:
    """Return one made-up data record (all schema keys, in order) with a prompt unique to its id."""
    sample_id = f"{task}-{label}-{row:04d}"
    info = TASKS[task]
    filler = " ".join(f"w{i}" for i in range(max(prompt_words - 1, 0)))
    return {
        "id": sample_id,
        "task": task,
        "length": parse_length(label),
        "label": label,
        "row": row,
        "prompt": f"[{sample_id}] {filler}".strip(),
        "prompt_tokens": prompt_words,
        "answers": [str(row + 1)],
        "closed_book_prompt": f"[{sample_id}] closed book" if info.closed_book else None,
        "metric": info.metric,
        "question": f"question {row}" if info.closed_book else None,
        "gold": {"sources": [], "item_ids": [], "passages": [1], "depth": 0.0},
        "distractors": [],
        "seed": 7,
    }


def write_data(root: Path, layout: dict[tuple[str, str], int], prompt_words: int = 6) -> Path:
    """Write ``root/<task>/<label>.jsonl`` with ``rows`` records for each ``(task, label): rows``; return root."""
    for (task, label), rows in layout.items():
        path = root / task / f"{label}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(data_record(task, label, row, prompt_words)) for row in range(rows)]
        path.write_text("".join(line + "\n" for line in lines))
    return root


def read_predictions(out: Path) -> list[dict]:
    """Return every prediction record under ``out`` (all lines must be whole JSON objects)."""
    records = []
    for path in sorted(out.glob("*/*.jsonl")):
        data = path.read_text()
        assert data == "" or data.endswith("\n"), f"{path} ends with a partial line"
        records.extend(json.loads(line) for line in data.splitlines())
    return records


def sample_id_of(prompt: str) -> str:
    """Return the sample id embedded at the start of a test prompt (``[id] ...``)."""
    return prompt[1 : prompt.index("]")]
