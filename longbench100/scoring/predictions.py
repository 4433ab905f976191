"""Read prediction files (one JSONL file or ``PRED/<task>/<label>.jsonl``) and match them to data ids."""

from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from .data import read_jsonl

_EXAMPLES = 3


@dataclass(frozen=True)
class Prediction:
    """One model answer: ``prediction`` (None when the request failed) and the closed-book answer."""

    id: str
    prediction: str | None
    closed_book_prediction: str | None
    where: str


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


def _optional_text(data: dict, key: str, where: str) -> str | None:
    """Return ``data[key]`` when it is a string or null/absent; reject other types."""
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise UserError(f"{where}: field {key!r} must be a string or null, not {type(value).__name__}")
    return value


def load_predictions(path: Path) -> list[Prediction]:
    """Read every prediction line under ``path`` (duplicates are kept for :func:`match_predictions` to report)."""
    predictions = []
    for file in prediction_files(path):
        for where, data in read_jsonl(file):
            if not isinstance(data, dict):
                raise UserError(f"{where}: expected a JSON object")
            if not isinstance(data.get("id"), str):
                raise UserError(f"{where}: field 'id' is missing or not a string")
            if "prediction" not in data:
                raise UserError(f"{where}: field 'prediction' is missing")
            predictions.append(
                Prediction(
                    id=data["id"],
                    prediction=_optional_text(data, "prediction", where),
                    closed_book_prediction=_optional_text(data, "closed_book_prediction", where),
                    where=where,
                )
            )
    return predictions


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
) -> tuple[dict[str, Prediction], list[str]]:
    """Index predictions by id and check them against the data.

    ``expected`` are the ids that need a prediction, ``known`` every id of the data folder. Unknown
    or duplicate ids are always an error; missing expected ids are an error unless
    ``allow_missing``. Returns the predictions by id and the missing ids.
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
        problems.append(f"{len(missing)} missing (e.g. {_examples(missing)}; pass --allow-missing to go on without them)")
    if unknown:
        problems.append(f"{len(unknown)} unknown (e.g. {_examples(unknown)})")
    if duplicates:
        problems.append(f"{len(duplicates)} duplicate (e.g. {_examples(duplicates)})")
    if problems:
        raise UserError(
            f"predictions {source} do not match the data ({len(by_id)} of {len(expected)} ids matched): "
            + "; ".join(problems)
        )
    return by_id, missing
