"""``generate --verify-counts``: recount every written prompt by tokenizing it whole, and compare."""

from __future__ import annotations

import json
from pathlib import Path

from longbench100.folders.layout import data_file_path
from longbench100.core.errors import UserError
from longbench100.text.tokenization import Tokenizer


def verify_prompt_counts(out: Path, tokenizer: Tokenizer, tasks: tuple[str, ...], labels: list[str], chat: bool) -> int:
    """Recount the prompt of every record of ``tasks`` at ``labels`` under ``out`` in one go (no cached pieces)
    and raise :class:`UserError` at the first record whose ``prompt_tokens`` differs; return the number checked.

    With ``chat`` the stored prompt holds the chat template and is counted as the model receives it.
    """
    checked = 0
    for task in tasks:
        for label in labels:
            path = data_file_path(out, task, label)
            if not path.is_file():
                continue
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    record = json.loads(line)
                    whole = tokenizer.count_rendered(record["prompt"]) if chat else tokenizer.count_whole(record["prompt"])
                    if whole != record["prompt_tokens"]:
                        raise UserError(f"--verify-counts: {record['id']} records {record['prompt_tokens']} prompt tokens, "
                                        f"but tokenizing it whole gives {whole} ({tokenizer.counting} counting); "
                                        "please report this")
                    checked += 1
    return checked
