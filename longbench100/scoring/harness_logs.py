"""Predictions made by other evaluation tools, read as our own: lm-evaluation-harness
``--log_samples`` files and Inspect eval logs of the tasks ``export lm-eval`` and
``longbench100.integrations.inspect_tasks`` define.

Both carry our record id and a fingerprint of the prompt that was sent, so ``score`` refuses
predictions made for other prompts exactly as it does for ours:

- lm-eval's ``prompt_hash`` is the sha256 of the text it handed the model. On the completions path
  that is our prompt, the same hash as ours. On the chat path (``--apply_chat_template`` with an API
  model) it is the sha256 of the message list as JSON, ``[{"role": "user", "content": PROMPT}]``:
  the sample's logged context is that list, so the fingerprint kept is the sha256 of the one user
  message's content, after checking that the logged context is what ``prompt_hash`` hashed. Any
  other message list (a system message, few-shot turns) keeps lm-eval's hash and says how it
  differs.
- Inspect's fingerprint is the sha256 of the sample input; each epoch of a run is one prediction
  (``Prediction.epoch``).

The model a run evaluated comes from the tool's own log (lm-eval's ``model_name`` in the
``results_*.json`` next to the samples, Inspect's ``eval.model``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from longbench100.core.digests import prompt_sha256
from longbench100.core.errors import UserError
from longbench100.folders.layout import read_jsonl
from longbench100.scoring.prediction_records import Prediction, PredictionSource

LM_EVAL_PATTERN = "samples_*.jsonl"
LM_EVAL_RESULTS = "results_*.json"
INSPECT_PATTERN = "*.eval"

LM_EVAL_HINT = (
    "was the export made from another data folder or seed than --data, or did lm-eval change "
    "the prompt "
    "(--system_instruction, --num_fewshot, a local model's chat template)?"
)
INSPECT_RETRY_HINT = "run the samples that ended in an error again with inspect eval"
INSPECT_HINT = (
    "was the Inspect task run on another data folder or seed than --data, or did a solver change "
    "the input?"
)


def foreign_prediction_files(path: Path) -> tuple[str, list[Path]] | None:
    """``("lm-eval", files)`` or ``("inspect", files)`` when ``path`` is (or holds) such outputs,
    else ``None``."""
    for kind, pattern in (("lm-eval", LM_EVAL_PATTERN), ("inspect", INSPECT_PATTERN)):
        if path.is_file() and path.match(pattern):
            return kind, [path]
        if path.is_dir():
            files = sorted(path.rglob(pattern))
            if files:
                return kind, files
    return None


def read_harness_logs(kind: str, files: list[Path]) -> PredictionSource:
    """Every prediction in ``files`` of ``kind`` (``lm-eval`` or ``inspect``), with the model their
    log names."""
    return _read_lm_eval(files) if kind == "lm-eval" else _read_inspect(files)


def _single(names: set[str]) -> str | None:
    """The one name in ``names``, or ``None`` when there are none or several."""
    return next(iter(names)) if len(names) == 1 else None


def _lm_eval_context(sample: dict) -> str | None:
    """The text lm-eval handed the model for this sample (the first argument of its first request),
    if logged."""
    arguments: Any = sample.get("arguments")
    if isinstance(arguments, dict):  # {"gen_args_0": {"arg_0": context, "arg_1": kwargs}}
        arguments = [
            list(request.values()) if isinstance(request, dict) else request
            for request in arguments.values()
        ]
    try:
        context = arguments[0][0]
    except (IndexError, KeyError, TypeError):
        return None
    if (
        isinstance(context, list) and len(context) == 1
    ):  # the chat path's JsonChatStr, a one-field tuple
        context = context[0]
    return context if isinstance(context, str) else None


def _user_messages_content(context: str) -> tuple[str | None, str | None]:
    """(the prompt, None) when ``context`` is a JSON list of exactly one user message; (None, how it
    differs) for any other message list; (None, None) for plain text."""
    if not context.startswith("["):
        return None, None
    try:
        messages = json.loads(context)
    except ValueError:
        return None, None
    if not isinstance(messages, list) or not all(isinstance(message, dict) for message in messages):
        return None, None
    if (
        len(messages) == 1
        and messages[0].get("role") == "user"
        and isinstance(messages[0].get("content"), str)
    ):
        return messages[0]["content"], None
    roles = ", ".join(str(message.get("role")) for message in messages)
    return (
        None,
        f"lm-eval sent {len(messages)} messages ({roles}), "
        "not the prompt alone as one user message",
    )


def lm_eval_prompt_fingerprint(sample: dict) -> tuple[str | None, str | None]:
    """The sha256 of the prompt an lm-eval sample answered, comparable with a record's
    ``prompt_sha256``, and a note when lm-eval sent something else than the prompt (a system
    message, few-shot turns)."""
    prompt_hash = sample.get("prompt_hash")
    context = _lm_eval_context(sample)
    if not isinstance(prompt_hash, str) or context is None or prompt_sha256(context) != prompt_hash:
        return prompt_hash if isinstance(prompt_hash, str) else None, None
    content, difference = _user_messages_content(context)
    return (prompt_hash if content is None else prompt_sha256(content)), difference


def _lm_eval_model(files: list[Path]) -> str | None:
    """lm-eval's ``model_name`` from the ``results_*.json`` beside the samples, when they name one
    model."""
    names = set()
    for folder in {file.parent for file in files}:
        for results in folder.glob(LM_EVAL_RESULTS):
            try:
                name = json.loads(results.read_text(encoding="utf-8")).get("model_name")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(name, str) and name:
                names.add(name)
    return _single(names)


def _refuse_second_run(first: Path, file: Path, record_id: str) -> None:
    """Refuse a sample answered in two samples files: two lm-eval runs written to one folder."""
    if first != file:
        raise UserError(
            f"several lm-eval runs in one folder: {first.name} and {file.name} both answer "
            f"{record_id}; point --predictions at one samples file (or one run's own "
            "--output_path folder)"
        )


def _read_lm_eval(files: list[Path]) -> PredictionSource:
    """One prediction per lm-eval sample line: our id from its document, the filtered reply, its
    prompt fingerprint."""
    predictions = []
    first_file: dict[str, Path] = {}
    for file in files:
        for where, sample in read_jsonl(file):
            try:
                record_id = sample["doc"]["id"]
                reply = sample["filtered_resps"][0]
            except (KeyError, IndexError, TypeError):
                raise UserError(
                    f"{where}: not an lm-eval sample of a longbench100 export "
                    "(no doc.id or filtered_resps)"
                ) from None
            if not isinstance(record_id, str) or not isinstance(reply, str):
                raise UserError(f"{where}: doc.id and the reply must be strings")
            _refuse_second_run(first_file.setdefault(record_id, file), file, record_id)
            fingerprint, difference = lm_eval_prompt_fingerprint(sample)
            predictions.append(
                Prediction(
                    id=record_id,
                    prediction=reply,
                    closed_book_prediction=None,
                    where=where,
                    prompt_sha256=fingerprint,
                    prompt_difference=difference,
                )
            )
    return PredictionSource(predictions, _lm_eval_model(files), LM_EVAL_HINT)


def _read_inspect(files: list[Path]) -> PredictionSource:
    """One prediction per sample and epoch of each Inspect log (read with inspect-ai's own log
    reader)."""
    try:
        from inspect_ai.log import read_eval_log  # noqa: PLC0415 - optional dependency
    except ImportError:
        raise UserError("reading Inspect logs needs inspect-ai: pip install inspect-ai") from None
    predictions, models, epochs = [], set(), set()
    for file in files:
        try:
            log = read_eval_log(str(file))
        except Exception as error:  # noqa: BLE001 - any unreadable log is the user's file problem
            raise UserError(
                f"{file}: not a readable Inspect log ({type(error).__name__}: {error})"
            ) from None
        if log.status != "success":
            raise UserError(
                f"{file}: the Inspect run did not finish (status {log.status}); run it again"
            )
        models.add(log.eval.model)
        for sample in log.samples or []:
            reply = None if sample.error else sample.output.completion
            prompt = sample.input if isinstance(sample.input, str) else None
            epochs.add(sample.epoch)
            predictions.append(
                Prediction(
                    id=str(sample.id),
                    prediction=reply,
                    closed_book_prediction=None,
                    where=f"{file}:{sample.id}:epoch {sample.epoch}",
                    epoch=sample.epoch,
                    prompt_sha256=prompt_sha256(prompt) if prompt is not None else None,
                )
            )
    return PredictionSource(
        predictions, _single(models), INSPECT_HINT, tuple(sorted(epochs)), INSPECT_RETRY_HINT
    )
