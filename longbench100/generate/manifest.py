"""The run-state file that guards ``--resume`` and the manifest that describes a finished output folder."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..atomic import write_json_atomic
from ..errors import UserError
from ..loader import file_sha256
from .output import data_file

if TYPE_CHECKING:
    from ..corpus import Corpus
    from ..tokenization import Tokenizer
    from .runner import GenerateOptions, LengthResult
    from .templates import PromptTemplates

RUN_STATE = ".longbench100-run.json"
MANIFEST = "manifest.json"


def check_run_state(out: Path, shaping: dict, resume: bool) -> None:
    """Refuse to mix runs: a folder holding another run needs ``--resume`` with the very same options.

    Writes nothing: see :func:`write_run_state`.
    """
    state_file = out / RUN_STATE
    if state_file.exists():
        previous = json.loads(state_file.read_text(encoding="utf-8"))
        if not resume:
            raise UserError(f"{out} already holds a generation run: pass --resume to continue it, or choose an empty --out folder")
        if previous != shaping:
            changed = sorted(key for key in set(previous) | set(shaping) if previous.get(key) != shaping.get(key))
            raise UserError(f"--resume with different options than the run in {out} (changed: {', '.join(changed)})")
        return
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out} is not empty and holds no longbench100 run; choose an empty or new folder")


def write_run_state(out: Path, shaping: dict) -> None:
    """Record the run's options in ``out`` (once the run is known to be able to start)."""
    write_json_atomic(out / RUN_STATE, shaping, indent=2)


def build_manifest(options: "GenerateOptions", tokenizer: "Tokenizer", templates: "PromptTemplates", corpus: "Corpus",
                   results: dict[str, dict[str, "LengthResult"]], paired_all: dict[str, dict]) -> dict:
    """Describe the finished output folder and write ``OUT/manifest.json`` atomically."""
    files, tasks, shortfalls = {}, {}, []
    for task, by_label in results.items():
        tasks[task] = {"paired_rows_all_lengths": paired_all[task]["rows"], "paired_over_lengths": paired_all[task]["lengths"],
                       "template_sha256": templates.fingerprint(task)["sha256"], "lengths": {}}
        for label, result in by_label.items():
            path = data_file(options.out, task, label)
            relative = path.relative_to(options.out).as_posix()
            files[relative] = {"sha256": file_sha256(path), "rows": result.rows}
            tasks[task]["lengths"][label] = {
                "rows": result.rows, "eligible_items": result.eligible, "paired_rows": result.paired_rows,
                "reused_rows": result.reused, "failed_rows": result.failed_rows,
            }
            if result.rows < options.rows:
                shortfalls.append({"task": task, "label": label, "rows": result.rows, "requested": options.rows,
                                   "reason": "no ground-truth item fits" if result.eligible == 0 else "rows did not fit the budget"})
    manifest = {
        "tool": "longbench100",
        "version": __version__,
        "python": platform.python_version(),
        "options": options.shaping(),
        "lengths": {label: budget for label, budget in options.lengths},
        "tokenizer": {"spec": tokenizer.spec, "identity": tokenizer.identity, "chat_template": options.chat_template,
                      "reserve_output": options.reserve_output},
        "sources": {
            name: {"repo_id": corpus.entries[name].repo_id, "revision": corpus.entries[name].revision,
                   "license": corpus.entries[name].license, "stand_in_for": corpus.entries[name].stand_in_for,
                   "files": data.files, "documents": len(data.documents), "items": len(data.items)}
            for name, data in corpus.sources.items()
        },
        "missing_sources": corpus.missing,
        "tasks": tasks,
        "files": files,
        "shortfalls": shortfalls,
    }
    write_json_atomic(options.out / MANIFEST, manifest, indent=2)
    return manifest
