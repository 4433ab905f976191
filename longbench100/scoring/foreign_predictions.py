"""Predictions made by other evaluation tools, read as our own: lm-evaluation-harness ``--log_samples``
files and Inspect eval logs of the tasks ``export lm-eval`` and ``longbench100.integrations.inspect_tasks`` define.

Both carry our record id; the prompt fingerprint is lm-eval's ``prompt_hash`` (the sha256 of the
prompt it sent, the same hash as ours) or the sha256 of Inspect's sample input, so ``score`` refuses
predictions made for other prompts exactly as it does for ours.
"""

from __future__ import annotations

from pathlib import Path

from longbench100.core.errors import UserError
from longbench100.core.digests import prompt_sha256
from longbench100.folders.layout import read_jsonl
from .predictions import Prediction

LM_EVAL_PATTERN = "samples_*.jsonl"
INSPECT_PATTERN = "*.eval"


def foreign_prediction_files(path: Path) -> tuple[str, list[Path]] | None:
    """``("lm-eval", files)`` or ``("inspect", files)`` when ``path`` is (or holds) such outputs, else ``None``."""
    for kind, pattern in (("lm-eval", LM_EVAL_PATTERN), ("inspect", INSPECT_PATTERN)):
        if path.is_file() and path.match(pattern):
            return kind, [path]
        if path.is_dir():
            files = sorted(path.rglob(pattern))
            if files:
                return kind, files
    return None


def read_foreign_predictions(kind: str, files: list[Path]) -> list[Prediction]:
    """Every prediction in ``files`` of ``kind`` (``lm-eval`` or ``inspect``)."""
    return _read_lm_eval(files) if kind == "lm-eval" else _read_inspect(files)


def _read_lm_eval(files: list[Path]) -> list[Prediction]:
    """One prediction per lm-eval sample line: our id from its document, the filtered reply, its prompt hash."""
    predictions = []
    for file in files:
        for where, sample in read_jsonl(file):
            try:
                record_id = sample["doc"]["id"]
                reply = sample["filtered_resps"][0]
            except (KeyError, IndexError, TypeError):
                raise UserError(f"{where}: not an lm-eval sample of a longbench100 export (no doc.id or filtered_resps)") from None
            if not isinstance(record_id, str) or not isinstance(reply, str):
                raise UserError(f"{where}: doc.id and the reply must be strings")
            predictions.append(Prediction(id=record_id, prediction=reply, closed_book_prediction=None, where=where,
                                          prompt_sha256=sample.get("prompt_hash")))
    return predictions


def _read_inspect(files: list[Path]) -> list[Prediction]:
    """One prediction per sample of each Inspect log (read with inspect-ai's own log reader)."""
    try:
        from inspect_ai.log import read_eval_log  # noqa: PLC0415 - optional dependency
    except ImportError:
        raise UserError("reading Inspect logs needs inspect-ai: pip install inspect-ai") from None
    predictions = []
    for file in files:
        try:
            log = read_eval_log(str(file))
        except Exception as error:  # noqa: BLE001 - any unreadable log is the user's file problem
            raise UserError(f"{file}: not a readable Inspect log ({type(error).__name__}: {error})") from None
        if log.status != "success":
            raise UserError(f"{file}: the Inspect run did not finish (status {log.status}); run it again")
        for sample in log.samples or []:
            reply = None if sample.error else sample.output.completion
            prompt = sample.input if isinstance(sample.input, str) else None
            predictions.append(Prediction(id=str(sample.id), prediction=reply, closed_book_prediction=None,
                                          where=f"{file}:{sample.id}",
                                          prompt_sha256=prompt_sha256(prompt) if prompt is not None else None))
    return predictions
