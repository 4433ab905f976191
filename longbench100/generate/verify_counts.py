"""``generate --verify-counts``: recount every written prompt by tokenizing it whole, and compare."""

from __future__ import annotations

import json
from pathlib import Path

from longbench100.core.errors import UserError
from longbench100.folders.layout import data_file_path
from longbench100.text.joint_tokenizer import JointTokenizer
from longbench100.text.tokenization import Tokenizer


def verify_prompt_counts(
    out: Path,
    tokenizer: Tokenizer | JointTokenizer,
    tasks: tuple[str, ...],
    labels: list[str],
    chat: bool,
) -> int:
    """Recount the prompt of every record of ``tasks`` at ``labels`` under ``out`` in one go (no cached pieces)
    and raise :class:`UserError` at the first record whose ``prompt_tokens`` differs; return the number checked.

    With ``chat`` the stored prompt holds the chat template and is counted as the model receives
    it. With several tokenizers, each one recounts the prompt against its own
    ``prompt_tokens_by_tokenizer`` entry.
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
                    recorded = record.get("prompt_tokens_by_tokenizer") or {
                        tokenizer.spec: record["prompt_tokens"]
                    }
                    for member in tokenizer.members:
                        _check_count(record, member, recorded[member.spec], chat)
                    checked += 1
    return checked


def _check_count(record: dict, tokenizer: Tokenizer, recorded: int, chat: bool) -> None:
    """Raise :class:`UserError` unless tokenizing ``record``'s prompt whole gives ``recorded``."""
    prompt = record["prompt"]
    whole = tokenizer.count_rendered(prompt) if chat else tokenizer.count_whole(prompt)
    if whole != recorded:
        raise UserError(
            f"--verify-counts: {record['id']} records {recorded} prompt tokens, but "
            f"tokenizing it whole gives {whole} ({tokenizer.spec}, "
            f"{tokenizer.counting} counting); please report this"
        )
