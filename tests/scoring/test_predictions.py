"""Reading data folders and predictions for scoring; also the helpers other scoring tests build data with."""

import hashlib
import json
from pathlib import Path

import pytest

from longbench100.catalog.suites import DEFAULT_SUITE, load_suite
from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length
from longbench100.folders.data_records import load_data, manifest_sha256
from longbench100.folders.layout import sealed_manifest
from longbench100.scoring.epochs import chosen_epochs, mean_over_epochs
from longbench100.scoring.predictions import load_predictions, match_predictions
from longbench100.scoring.samples import ScoredSample
from longbench100.scoring.scorer import ScoreOutcome

PAPER_TASKS = load_suite(DEFAULT_SUITE).tasks  # the eight tasks of the paper

UUID = "3f2b8c1e-9d4a-4e6b-8f1a-2c3d4e5f6a7b"
GOLD = {
    "kv_retrieval": [UUID],
    "counting_stars": ["3"],
    "passage_retrieval": ["7"],
    "passage_count": ["12"],
    "single_doc_qa": ["April 25, 2018"],
    "multi_doc_qa": ["Paris", "the city of Paris"],
    "single_doc_sum": ["The council approved the budget. Taxes will rise next year."],
    "multi_doc_sum": ["Storms hit the coast. Thousands lost power."],
}
RIGHT = {
    "kv_retrieval": f"The value is {UUID}.",
    "counting_stars": "The answer is option 3.",
    "passage_retrieval": "Passage 7.",
    "passage_count": "There are 12 unique paragraphs.",
    "single_doc_qa": "April 25, 2018",
    "multi_doc_qa": "Paris",
    "single_doc_sum": "The council approved the budget. Taxes will rise next year.",
    "multi_doc_sum": "Storms hit the coast. Thousands lost power.",
}


def make_record(task: str, label: str, row: int) -> dict:
    """A schema-shaped data record (docs/schema.md) with the fixed gold answer of its task."""
    qa = TASKS[task].closed_book
    return {
        "id": f"{task}-{label}-{row:04d}",
        "task": task,
        "length": parse_length(label),
        "label": label,
        "row": row,
        "prompt": f"prompt of {task} {label} {row}",
        "prompt_tokens": 10,
        "answers": GOLD[task],
        "closed_book_prompt": f"closed-book question {row} of {task}" if qa else None,
        "metric": TASKS[task].metric,
        "question": f"question {row} of {task}" if TASKS[task].metric != "accuracy" else None,
        "gold": {"sources": [], "item_ids": [], "passages": [], "depth": 0.5},
        "distractors": [],
        "seed": 1,
    }


def write_dataset(
    root: Path, tasks=PAPER_TASKS, labels=("2k", "4k", "6k", "8k"), rows=2, manifest=True
) -> Path:
    """Write ``root/<task>/<label>.jsonl`` (and a manifest.json); return ``root``."""
    for task in tasks:
        (root / task).mkdir(parents=True, exist_ok=True)
        for label in labels:
            lines = [json.dumps(make_record(task, label, row)) for row in range(rows)]
            (root / task / f"{label}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if manifest:
        seal(root)
    return root


def seal(root: Path, **extra: object) -> Path:
    """Write ``root/manifest.json`` listing every data file with its sha256, as generate does
    (``extra``: more manifest keys); a test that edits a data file on purpose seals the folder
    again."""
    files = {
        path.relative_to(root).as_posix(): {"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        for path in sorted(root.glob("*/*.jsonl"))
    }
    manifest = {"seed": 1, **extra, "files": files}
    (root / "manifest.json").write_text(json.dumps(sealed_manifest(manifest)), encoding="utf-8")
    return root


def write_predictions(
    root: Path,
    data: Path,
    answer=lambda record: RIGHT[record["task"]],
    closed_book=lambda record: "I do not know.",
) -> Path:
    """Write ``root/<task>/<label>.jsonl`` predictions for every record of ``data``; return ``root``."""
    for path in sorted(data.glob("*/*.jsonl")):
        out = root / path.parent.name / path.name
        out.parent.mkdir(parents=True, exist_ok=True)
        rows = []
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            row = {"id": record["id"], "prediction": answer(record), "error": None}
            if record["closed_book_prompt"] is not None:
                row["closed_book_prediction"] = closed_book(record)
            rows.append(json.dumps(row))
        out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def test_load_data_reads_every_task_and_hashes_manifest(tmp_path):
    data = write_dataset(tmp_path / "data", labels=("2k", "8k"), rows=3)
    records = load_data(data)
    assert len(records) == 8 * 2 * 3
    assert [record.task for record in records[:6]] == ["kv_retrieval"] * 6
    assert len(manifest_sha256(data)) == 64
    (data / "manifest.json").unlink()
    assert manifest_sha256(data) is None


def test_load_data_names_file_line_and_field(tmp_path):
    data = write_dataset(tmp_path / "data", tasks=("passage_count",), labels=("2k",), rows=2)
    path = data / "passage_count" / "2k.jsonl"
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    del broken["answers"]
    path.write_text(lines[0] + "\n" + json.dumps(broken) + "\n")
    with pytest.raises(UserError, match=r"passage_count/2k.jsonl differs from manifest.json"):
        load_data(data)  # edited after generation
    seal(data)
    with pytest.raises(UserError, match=r"2k.jsonl:2: answers is missing"):
        load_data(data)
    path.write_text(lines[0] + "\n{not json\n")
    seal(data)
    with pytest.raises(UserError, match=r"2k.jsonl:2: not valid JSON"):
        load_data(data)


def test_load_data_rejects_missing_folder(tmp_path):
    with pytest.raises(UserError, match="no such folder"):
        load_data(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no <task>/<label>.jsonl"):
        load_data(tmp_path / "empty")


def test_predictions_single_file_or_folder(tmp_path):
    data = write_dataset(
        tmp_path / "data", tasks=("single_doc_qa", "kv_retrieval"), labels=("2k",), rows=2
    )
    folder = write_predictions(tmp_path / "pred", data)
    from_folder = load_predictions(folder)
    single = tmp_path / "all.jsonl"
    single.write_text("".join(path.read_text() for path in sorted(folder.glob("*/*.jsonl"))))
    from_file = load_predictions(single)
    assert [p.id for p in from_folder] == [p.id for p in from_file]
    qa = next(p for p in from_file if p.id.startswith("single_doc_qa"))
    assert qa.closed_book_prediction == "I do not know." and qa.prediction == "April 25, 2018"
    assert next(p for p in from_file if p.id.startswith("kv")).closed_book_prediction is None


def test_predictions_bad_field_types_name_the_line(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "prediction": "x"}\n{"id": "b", "prediction": 3}\n')
    wrong_type = r"p.jsonl:2: prediction must be a string or null, not an integer"
    with pytest.raises(UserError, match=wrong_type):
        load_predictions(path)
    path.write_text('{"prediction": "x"}\n')
    with pytest.raises(UserError, match=r"p.jsonl:1: id is missing"):
        load_predictions(path)


def test_match_reports_missing_unknown_duplicate_counts(tmp_path):
    path = tmp_path / "p.jsonl"
    rows = [{"id": i, "prediction": "x"} for i in ("a", "b", "b", "zz", "yy")]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    predictions = load_predictions(path)
    with pytest.raises(UserError) as error:
        match_predictions(
            predictions,
            ["a", "b", "c", "d"],
            {"a", "b", "c", "d"},
            allow_missing=False,
            source=path,
        )
    message = str(error.value)
    assert "2 of 4 ids matched" in message
    assert (
        "2 missing (e.g. c, d;" in message
        and "2 unknown" in message
        and "1 duplicate (e.g. b (" in message
    )
    assert "\n" not in message


def test_match_counts_only_the_expected_ids_as_matched(tmp_path):
    path = tmp_path / "p.jsonl"
    rows = [{"id": i, "prediction": "x"} for i in ("a", "k1", "k2", "k3")]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(UserError, match=r"\(1 of 2 ids matched\): 1 missing \(e.g. b;"):
        match_predictions(
            load_predictions(path),
            ["a", "b"],
            {"a", "b", "k1", "k2", "k3"},
            allow_missing=False,
            source=path,
        )


def test_match_allow_missing_returns_the_missing_ids(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "prediction": null, "error": "HTTP 400: too long"}\n')
    by_id, missing = match_predictions(
        load_predictions(path), ["a", "b"], {"a", "b"}, allow_missing=True, source=path
    )
    assert list(by_id) == ["a"] and by_id["a"].prediction is None and missing == ["b"]


def test_epochs_are_averaged_per_record_and_an_ungraded_epoch_leaves_the_record_ungraded():
    def outcome(scores: list[float | None], also: list[float]) -> ScoreOutcome:
        samples = [
            ScoredSample(
                f"t-8k-{row}",
                "kv_retrieval",
                "8k",
                8192,
                row,
                score,
                also={"qa_f1": extra},
                ungraded_reason=None if score is not None else "invalid reply",
            )
            for row, (score, extra) in enumerate(zip(scores, also))
        ]
        return ScoreOutcome(samples=samples)

    merged = mean_over_epochs(
        [outcome([1.0, 0.0, 1.0], [1.0, 0.5, 0.0]), outcome([0.0, 0.0, None], [0.0, 0.5, 1.0])]
    )
    assert [sample.score for sample in merged.samples] == [0.5, 0.0, None]
    epoch_scores = [sample.epoch_scores for sample in merged.samples]
    assert epoch_scores == [(1.0, 0.0), (0.0, 0.0), (1.0, None)]
    assert [sample.also for sample in merged.samples] == [{"qa_f1": 0.5}] * 3
    assert merged.samples[2].ungraded_reason == "invalid reply"
    assert ScoredSample.from_json(merged.samples[2].to_json()) == merged.samples[2]
    assert "epoch_scores" not in outcome([1.0], [1.0]).samples[0].to_json()


def test_chosen_epochs():
    assert chosen_epochs((), None) == [None] and chosen_epochs((1, 2), None) == [1, 2]
    assert chosen_epochs((1, 2), 2) == [2]
    with pytest.raises(UserError, match="--epoch 3: the predictions hold epochs 1, 2"):
        chosen_epochs((1, 2), 3)
    assert chosen_epochs((), 1) == [None]  # one answer per prompt is epoch 1
    with pytest.raises(UserError, match="none \\(one answer per prompt\\)"):
        chosen_epochs((), 2)
