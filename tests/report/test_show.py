"""The ``show`` command: scored samples printed readably, from new and older results files."""

import json
from pathlib import Path

from click.testing import CliRunner

from longbench100.cli import main
from longbench100.report.show import SHORTENED, SampleQuery, format_samples, select_samples, shorten

JUDGED = {
    "id": "single_doc_qa-8k-0000",
    "task": "single_doc_qa",
    "label": "8k",
    "length": 8192,
    "row": 0,
    "score": 0.5,
    "filtered": False,
    "closed_book_score": 0.0,
    "metric": "qa_judge",
    "prediction": "The lighthouse keeper rowed to the mainland every second Tuesday.",
    "answers": ["every other Tuesday", "fortnightly on Tuesdays"],
    "depth": 0.42,
    "source": "narrative_tales",
    "parts": {
        "fluency": 2,
        "correctness": 1.5,
        "reasoning": "Right day, but the answer adds a boat.",
    },
    "judge_reply": None,
    "ungraded_reason": None,
}
UNGRADED = {
    **JUDGED,
    "id": "single_doc_qa-8k-0001",
    "row": 1,
    "score": None,
    "parts": None,
    "prediction": "Tuesday. " * 300,
    "judge_reply": "I think the answer is mostly fine but I cannot give numbers.",
    "ungraded_reason": "invalid judge reply",
}
WORST = {**JUDGED, "id": "single_doc_qa-8k-0002", "row": 2, "score": 0.0, "prediction": "No idea."}
OTHER_LENGTH = {**JUDGED, "id": "single_doc_qa-16k-0000", "label": "16k", "length": 16384}
OLDER = {
    key: JUDGED[key]
    for key in (
        "id",
        "task",
        "label",
        "length",
        "row",
        "score",
        "filtered",
        "closed_book_score",
        "metric",
    )
}


def write(path: Path, samples: list[dict]) -> Path:
    """A results.json holding ``samples`` (aggregates are not read by ``show``)."""
    path.write_text(
        json.dumps({"model": "tiny-model", "samples": samples, "aggregates": {}}), encoding="utf-8"
    )
    return path


def run(*args: str, columns: int = 100):
    """Invoke ``longbench100 show`` in a terminal ``columns`` wide (whatever the test runner's is)."""
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(main, ["show", *args])


def test_show_prints_a_judged_and_an_ungraded_sample(tmp_path: Path):
    path = write(tmp_path / "r.json", [JUDGED, UNGRADED, OTHER_LENGTH])
    result = run(str(path), "--task", "single_doc_qa", "--length", "8192", "--max-chars", "200")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("model tiny-model: single_doc_qa at 8k (2 shown)")
    assert "── single_doc_qa-8k-0000 " in out and "── single_doc_qa-8k-0001 " in out
    assert "single_doc_qa-16k-0000" not in out
    assert "score       50.0 / 100" in out
    assert "metric qa_judge, depth 0.42, source narrative_tales" in out
    assert "The lighthouse keeper rowed to the mainland every second Tuesday." in out
    assert "gold 1      every other Tuesday" in out and "gold 2      fortnightly on Tuesdays" in out
    assert "judge       fluency 2, correctness 1.5" in out
    assert "reasoning   Right day, but the answer adds a boat." in out
    assert "score       ungraded: invalid judge reply" in out
    assert "judge reply I think the answer is mostly fine but I cannot give numbers." in out
    assert (
        SHORTENED.format(count=len(UNGRADED["prediction"]) - 200) in out
    )  # long prediction cut, marked
    assert max(len(line) for line in out.splitlines()) <= 100  # wrapped to the terminal width


def test_a_narrow_terminal_never_wraps_the_cut_marker_apart(tmp_path: Path):
    path = write(tmp_path / "r.json", [UNGRADED])
    for columns in (48, 57, 64):
        result = run(
            str(path),
            "--task",
            "single_doc_qa",
            "--length",
            "8k",
            "--max-chars",
            "200",
            columns=columns,
        )
        assert result.exit_code == 0, result.output
        assert SHORTENED.format(count=len(UNGRADED["prediction"]) - 200) in result.output
        assert max(len(line) for line in result.output.splitlines()) <= columns


def test_worst_lists_the_lowest_graded_scores(tmp_path: Path):
    path = write(tmp_path / "r.json", [JUDGED, UNGRADED, WORST])
    result = run(str(path), "--task", "single_doc_qa", "--length", "8k", "--worst", "1")
    assert result.exit_code == 0, result.output
    assert "the 1 lowest-scored graded samples (1 shown)" in result.output
    assert "single_doc_qa-8k-0002" in result.output and "No idea." in result.output
    assert (
        "single_doc_qa-8k-0000" not in result.output
        and "single_doc_qa-8k-0001" not in result.output
    )


def test_ungraded_lists_only_what_the_judge_could_not_grade(tmp_path: Path):
    path = write(tmp_path / "r.json", [JUDGED, UNGRADED, WORST])
    result = run(str(path), "--task", "single_doc_qa", "--length", "8k", "--ungraded")
    assert result.exit_code == 0, result.output
    assert "the ungraded samples (1 shown)" in result.output and UNGRADED["id"] in result.output
    assert JUDGED["id"] not in result.output and WORST["id"] not in result.output


def test_show_by_id_and_older_results(tmp_path: Path):
    path = write(tmp_path / "r.json", [OLDER])
    result = run(str(path), "--id", "single_doc_qa-8k-0000")
    assert result.exit_code == 0, result.output
    assert "prediction  (not recorded in this results file)" in result.output
    assert "gold        (not recorded in this results file)" in result.output
    assert "depth unknown, source unknown" in result.output


def test_show_errors_are_one_line(tmp_path: Path):
    path = write(tmp_path / "r.json", [JUDGED, OTHER_LENGTH])
    cases = [
        (
            ["--task", "single_doc_qa", "--length", "32k"],
            "no samples for task single_doc_qa at length 32k",
        ),
        (["--task", "kv_retrieval", "--length", "8k"], "(tasks: single_doc_qa)"),
        (["--task", "single_doc_qa"], "give --task and --length (or --id)"),
        (["--id", "nope"], "no sample with id 'nope'"),
        (["--task", "single_doc_qa", "--length", "8q"], "bad length label '8q'"),
    ]
    for args, message in cases:
        result = run(str(path), *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.count("\n") == 1 and message in result.output, (args, result.output)
    result = run(str(tmp_path / "missing.json"), "--id", "x")
    assert result.exit_code == 2 and "results file not found" in result.output


def test_sample_without_gold_answers_says_none(tmp_path: Path):
    path = write(tmp_path / "r.json", [{**JUDGED, "answers": []}])
    result = run(str(path), "--id", JUDGED["id"])
    assert result.exit_code == 0 and "gold        (none)" in result.output


def test_shorten_marks_what_it_cut():
    assert shorten("abcdef", 0) == "abcdef"
    assert shorten("abcdef", 6) == "abcdef"
    assert shorten("abcdef", 4) == "abcd [... 2 more characters]"


def test_filtered_sample_says_so(tmp_path: Path):
    path = write(tmp_path / "r.json", [{**JUDGED, "filtered": True, "closed_book_score": 1.0}])
    model, entries = select_samples(path, SampleQuery(sample_id=JUDGED["id"]))
    text = format_samples(
        model, entries, SampleQuery(sample_id=JUDGED["id"]), width=80, max_chars=0
    )
    assert "filtered out by the QA filter (closed-book score 100.0); score 50.0" in text
