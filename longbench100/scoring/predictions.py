"""Read prediction files (one JSONL file or ``PRED/<task>/<label>.jsonl``) and match them to data ids."""

from pathlib import Path

from longbench100.core.errors import UserError
from longbench100.core.json_shape import check_shape
from longbench100.folders.data_records import DataRecord
from longbench100.folders.layout import read_jsonl
from longbench100.scoring.harness_logs import foreign_prediction_files, read_harness_logs
from longbench100.scoring.prediction_records import OWN_HINT, Prediction, PredictionSource

_EXAMPLES = 3
_TEXT = (str, type(None))
PREDICTION_SHAPE = {
    "id": str,
    "prediction": _TEXT,
    "closed_book_prediction?": _TEXT,
    "prompt_sha256?": _TEXT,
    "closed_book_prompt_sha256?": _TEXT,
    "data_manifest_sha256?": _TEXT,
}
"""What a prediction line holds (docs/predictions: ``prediction`` null for a failed request)."""


def prediction_files(path: Path) -> list[Path]:
    """Return the prediction files: ``path`` itself, or every ``<task>/<label>.jsonl`` under it."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UserError(f"--predictions {path}: no such file or folder")
    files = sorted(path.glob("*/*.jsonl"))
    if not files:
        raise UserError(f"--predictions {path}: no <task>/<label>.jsonl files")
    return files


def load_predictions(path: Path) -> list[Prediction]:
    """Read every prediction under ``path`` (duplicates are kept for :func:`match_predictions` to
    report)."""
    return read_prediction_source(path).predictions


def read_prediction_source(path: Path) -> PredictionSource:
    """Read every prediction under ``path`` with what its tool's log says (model name, epochs).

    ``path`` may be our own prediction files, lm-evaluation-harness ``--log_samples`` output or
    Inspect eval logs of our exported tasks (:mod:`.harness_logs`).
    """

    foreign = foreign_prediction_files(path)
    if foreign is not None:
        return read_harness_logs(*foreign)
    predictions = []
    for file in prediction_files(path):
        for where, data in read_jsonl(file):
            check_shape(data, PREDICTION_SHAPE, where)
            predictions.append(
                Prediction(
                    id=data["id"],
                    prediction=data["prediction"],
                    closed_book_prediction=data.get("closed_book_prediction"),
                    where=where,
                    prompt_sha256=data.get("prompt_sha256"),
                    closed_book_prompt_sha256=data.get("closed_book_prompt_sha256"),
                    data_manifest_sha256=data.get("data_manifest_sha256"),
                )
            )
    return PredictionSource(predictions)


def _examples(items: list[str]) -> str:
    """Format the first few items of a list for an error message."""
    shown = ", ".join(items[:_EXAMPLES])
    return f"{shown}, ..." if len(items) > _EXAMPLES else shown


def match_predictions(
    predictions: list[Prediction],
    expected: list[str],
    known: set[str],
    *,
    allow_missing: bool,
    source: Path,
    missing_hint: str = "pass --allow-missing to go on without them",
) -> tuple[dict[str, Prediction], list[str]]:
    """Index predictions by id and check them against the data.

    ``expected`` are the ids that need a prediction, ``known`` every id of the data folder. Unknown
    or duplicate ids are always an error; missing expected ids are an error unless
    ``allow_missing``; ``missing_hint`` tells the user how to go on (the calling command's own option).
    Returns the predictions by id and the missing ids.
    """
    by_id: dict[str, Prediction] = {}
    duplicates: list[str] = []
    unknown: list[str] = []
    for prediction in predictions:
        if prediction.id not in known:
            unknown.append(f"{prediction.id} ({prediction.where})")
        elif prediction.id in by_id:
            duplicates.append(f"{prediction.id} ({prediction.where})")
        else:
            by_id[prediction.id] = prediction
    missing = [record_id for record_id in expected if record_id not in by_id]
    problems = []
    if missing and not allow_missing:
        problems.append(f"{len(missing)} missing (e.g. {_examples(missing)}; {missing_hint})")
    if unknown:
        problems.append(f"{len(unknown)} unknown (e.g. {_examples(unknown)})")
    if duplicates:
        problems.append(f"{len(duplicates)} duplicate (e.g. {_examples(duplicates)})")
    if problems:
        raise UserError(
            f"predictions {source} do not match the data "
            f"({len(expected) - len(missing)} of {len(expected)} ids matched): "
            + "; ".join(problems)
        )
    return by_id, missing


def _differs(prediction: Prediction, record: DataRecord) -> bool:
    """Whether a prediction's prompt fingerprints name other prompts than the data record's."""
    if prediction.prompt_sha256 is not None and prediction.prompt_sha256 != record.prompt_sha256:
        return True
    closed = prediction.closed_book_prompt_sha256
    return closed is not None and closed != record.closed_book_prompt_sha256


def check_fingerprints(
    by_id: dict[str, Prediction],
    records: list[DataRecord],
    manifest_sha256: str | None,
    *,
    source: Path,
    hint: str = OWN_HINT,
) -> list[str]:
    """Refuse predictions made for other prompts than the data's; return notes for the screen.

    Each prediction's ``prompt_sha256`` (and ``closed_book_prompt_sha256``) must equal the sha256 of
    the data record's prompt. Predictions without fingerprints (another tool's) are accepted with a
    warning; a different ``data_manifest_sha256`` with every prompt matching (a filtered copy of the
    folder, say) is accepted with a note. The error names ``hint``'s plausible causes, or how the
    tool sent another prompt when its log shows it (``Prediction.prompt_difference``).
    """
    matched = [(by_id[record.id], record) for record in records if record.id in by_id]
    differing = [prediction for prediction, record in matched if _differs(prediction, record)]
    if differing:
        shown = next((p.prompt_difference for p in differing if p.prompt_difference), None)
        raise UserError(
            f"predictions {source} were made for other prompts: {len(differing)} of {len(matched)} samples differ "
            f"(e.g. {_examples([prediction.id for prediction in differing])}); {shown or hint}"
        )
    notes = []
    unfingerprinted = sum(prediction.prompt_sha256 is None for prediction, _ in matched)
    if unfingerprinted:
        notes.append(
            f"warning: {unfingerprinted} of {len(matched)} predictions carry no prompt_sha256; "
            "cannot check they answer this data's prompts"
        )
    other_manifests = {p.data_manifest_sha256 for p, _ in matched if p.data_manifest_sha256} - {
        manifest_sha256
    }
    if other_manifests and not unfingerprinted:
        notes.append(
            "note: predictions were made from another data folder (manifest differs), but every prompt matches"
        )
    return notes
