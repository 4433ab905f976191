"""Suites: file parsing and validation, the ``suites`` command, ``generate --suite``, and scoring and
reporting by suite."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.errors import UserError
from longbench100.scoring.aggregate import aggregate
from longbench100.scoring.by_suite import suite_blocks
from longbench100.suites import DEFAULT_SUITE, NO_SUITE, group_by_suite, load_all_suites, load_suite, parse_suite_file
from longbench100.task_info import TASKS
from tests.test_report import model_samples
from tests.test_score_inputs import write_dataset, write_predictions

VALID = """\
name = "retrieval-pair"
description = "Two retrieval tasks, for tests."
lengths = ["3k", "2k"]
base_lengths = ["2k"]

[overall]
method = "mean"
tasks = ["kv_retrieval"]

[tasks.kv_retrieval]
metric = "default"

[tasks.passage_count]
metric = "accuracy"
"""


def invoke(*args: str):
    """Run the CLI and return click's result."""
    return CliRunner().invoke(main, list(args))


def write_suite(tmp_path: Path, text: str = VALID, name: str = "suite.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


PAPER_TASKS = ("kv_retrieval", "counting_stars", "passage_retrieval", "passage_count", "single_doc_qa", "multi_doc_qa",
               "single_doc_sum", "multi_doc_sum")


def test_the_packaged_default_suite_is_the_eight_paper_tasks():
    suite = load_suite(DEFAULT_SUITE)
    assert suite.tasks == PAPER_TASKS
    assert [label for label, _ in suite.lengths] == ["2k", "4k", "6k", "8k", "16k", "32k", "64k", "128k", "256k"]
    assert suite.base_lengths == ("2k", "4k", "6k")
    assert suite.metrics == {task: TASKS[task].metric for task in PAPER_TASKS}
    assert suite.overall_method == "mean" and suite.overall_tasks == PAPER_TASKS


def test_every_known_task_belongs_to_a_packaged_suite():
    covered = {task for suite in load_all_suites() for task in suite.tasks}
    assert covered == set(TASKS)


def test_a_user_suite_file_is_parsed_in_order_and_canonicalised(tmp_path):
    suite = load_suite(str(write_suite(tmp_path)))
    assert suite.name == "retrieval-pair"
    assert suite.lengths == (("2k", 2048), ("3k", 3072))
    assert suite.tasks == ("kv_retrieval", "passage_count")
    assert suite.overall_tasks == ("kv_retrieval",)
    assert suite.metric("passage_count") == "accuracy" and suite.metric("single_doc_qa") == "qa_judge"


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        ('name = "retrieval-pair"', 'name = ""', "field 'name'"),
        ('lengths = ["3k", "2k"]', 'lengths = ["3k", "two"]', "field 'lengths'"),
        ('lengths = ["3k", "2k"]', "lengths = []", "field 'lengths'"),
        ('base_lengths = ["2k"]', 'base_lengths = ["4k"]', "base_lengths 4k"),
        ("[tasks.passage_count]", "[tasks.no_such_task]", "tasks.no_such_task: unknown task"),
        ('metric = "accuracy"', 'metric = "bleu"', "tasks.passage_count.metric 'bleu'"),
        ('metric = "accuracy"', 'metrik = "accuracy"', "unknown field 'metrik'"),
        ('method = "mean"', 'method = "median"', "overall.method 'median'"),
        ('tasks = ["kv_retrieval"]', 'tasks = ["single_doc_qa"]', "overall.tasks single_doc_qa"),
        ('description = "Two', 'colour = "blue"\ndescription = "Two', "unknown field 'colour'"),
        ('lengths = ["3k", "2k"]', 'lengths = ["3k", "2k"', "not a valid TOML"),
        ('description = "Two', 'judge_style = "fancy"\ndescription = "Two', "judge_style 'fancy'"),
        ('description = "Two', 'judge_style = 3\ndescription = "Two', "field 'judge_style'"),
    ],
)
def test_invalid_suite_files_fail_in_one_line_naming_file_and_field(tmp_path, old, new, named):
    assert old in VALID
    path = write_suite(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(UserError) as caught:
        parse_suite_file(path)
    message = str(caught.value)
    assert str(path) in message and named in message and "\n" not in message


def test_a_suite_judge_style_is_recorded_only_when_set(tmp_path):
    helmet = load_suite(str(write_suite(tmp_path, 'judge_style = "helmet"\n' + VALID)))
    assert helmet.judge_style == "helmet" and helmet.record()["judge_style"] == "helmet"
    assert "judge_style" not in load_suite(str(write_suite(tmp_path, name="plain.toml"))).record()


def test_a_suite_without_tasks_is_refused(tmp_path):
    path = write_suite(tmp_path, VALID[: VALID.index("[tasks.")])
    with pytest.raises(UserError, match="field 'tasks'"):
        parse_suite_file(path)


def test_unknown_suite_names_and_missing_files_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="unknown suite; choose from 100-longbench"):
        load_suite("no-such-suite")
    with pytest.raises(UserError, match="no such file"):
        load_suite(str(tmp_path / "absent.toml"))


def test_suites_command_lists_and_shows(tmp_path):
    listing = invoke("suites")
    assert listing.exit_code == 0, listing.output
    assert listing.output.splitlines()[0] == f"{DEFAULT_SUITE}: " + ", ".join(PAPER_TASKS)
    shown = invoke("suites", "show", DEFAULT_SUITE)
    assert shown.exit_code == 0
    assert "base lengths: 2k, 4k, 6k" in shown.output and "  single_doc_qa (qa_judge)" in shown.output
    user = invoke("suites", "show", str(write_suite(tmp_path)))
    assert "lengths: 2k, 3k" in user.output and "overall: mean over kv_retrieval" in user.output
    bad = invoke("suites", "show", "nope")
    assert bad.exit_code == 2 and bad.output.startswith("error: suite 'nope': unknown suite")


def test_sources_list_names_the_suites_each_source_serves():
    result = invoke("sources", "list", "--sources", "demo")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "demo_qa" in line]
    assert lines and lines[0].endswith(f"[suites: {DEFAULT_SUITE}, ruler, helmet, helmet-recall]")  # demo_qa's prose pads the niah essays


def generate(out: Path, *args: str) -> dict:
    """Generate a small demo folder and return its manifest."""
    result = invoke("generate", "--sources", "demo", "--out", str(out), "--rows", "2", "--workers", "1", "--quiet", *args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "manifest.json").read_text())


def tree(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_generate_with_the_default_suite_named_is_byte_identical(tmp_path):
    common = ("--tasks", "kv_retrieval,passage_count", "--lengths", "2k")
    plain = generate(tmp_path / "plain", *common)
    named = generate(tmp_path / "named", "--suite", DEFAULT_SUITE, *common)
    assert tree(tmp_path / "plain") == tree(tmp_path / "named")
    assert plain == named and plain["suite"]["name"] == DEFAULT_SUITE
    assert plain["suite"]["sha256"] == load_suite(DEFAULT_SUITE).sha256 == plain["options"]["suite"]["sha256"]


def test_generate_with_a_user_suite_takes_its_tasks_lengths_and_metrics(tmp_path):
    path = write_suite(tmp_path, 'judge_style = "helmet"\n' + VALID.replace('metric = "accuracy"', 'metric = "qa_judge"'))
    manifest = generate(tmp_path / "out", "--suite", str(path))
    assert manifest["suite"]["judge_style"] == "helmet"  # score's default --judge-style for this folder
    assert sorted(manifest["tasks"]) == ["kv_retrieval", "passage_count"]
    assert list(manifest["lengths"]) == ["2k", "3k"]
    assert manifest["suite"]["name"] == "retrieval-pair"
    assert manifest["suite"]["base_lengths"] == ["2k"]
    record = json.loads((tmp_path / "out" / "passage_count" / "3k.jsonl").read_text().splitlines()[0])
    assert record["metric"] == "qa_judge" and record["prompt_tokens"] <= 3072


def add_suite(data: Path, record: dict) -> None:
    """Record a suite in a test data folder's manifest, as ``generate`` does."""
    manifest = json.loads((data / "manifest.json").read_text())
    (data / "manifest.json").write_text(json.dumps({**manifest, "suite": record}), encoding="utf-8")


def score(data: Path, out: Path, *args: str) -> dict:
    predictions = write_predictions(out.parent / f"pred-{out.stem}", data)
    result = invoke("score", "--n-boot", "10", "--data", str(data), "--predictions", str(predictions), "--out", str(out), *args)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_score_takes_base_lengths_from_the_data_suite_unless_given(tmp_path):
    tasks = ("kv_retrieval", "passage_count")
    data = write_dataset(tmp_path / "data", tasks=tasks, labels=("2k", "4k", "8k"), rows=2)
    add_suite(data, {**load_suite(str(write_suite(tmp_path))).record(), "base_lengths": ["4k"]})
    from_suite = score(data, tmp_path / "a.json")
    assert from_suite["settings"]["base_lengths"] == ["4k"] and from_suite["base_labels"] == ["4k"]
    assert from_suite["settings"]["suite"] == "retrieval-pair"
    explicit = score(data, tmp_path / "b.json", "--base-lengths", "2k,4k")
    assert explicit["settings"]["base_lengths"] == ["2k", "4k"]


def test_score_without_a_recorded_suite_keeps_the_paper_base_lengths(tmp_path):
    data = write_dataset(tmp_path / "data", tasks=("kv_retrieval",), labels=("2k", "8k"), rows=2)
    results = score(data, tmp_path / "r.json")
    assert results["settings"]["base_lengths"] == ["2k", "4k", "6k"] and results["settings"]["suite"] is None
    assert list(results["aggregates"]["suites"]) == [DEFAULT_SUITE]


def test_tasks_outside_the_data_suite_group_under_their_packaged_suite():
    recorded = load_suite(DEFAULT_SUITE).record() | {"name": "mine", "tasks": ["kv_retrieval"]}
    assert group_by_suite(["kv_retrieval", "single_doc_qa"], recorded) == {"mine": ["kv_retrieval"], DEFAULT_SUITE: ["single_doc_qa"]}
    assert group_by_suite(["kv_retrieval"], None) == {DEFAULT_SUITE: ["kv_retrieval"]}
    assert NO_SUITE not in group_by_suite(list(TASKS), None)


def test_a_suite_overall_averages_only_its_overall_tasks():
    samples = model_samples({"2k": 80, "8k": 40}, tasks=["kv_retrieval"]) + model_samples({"2k": 50, "8k": 50}, tasks=["passage_count"])
    recorded = {"name": "mine", "tasks": ["kv_retrieval", "passage_count"], "overall": {"method": "mean", "tasks": ["kv_retrieval"]}}
    blocks = suite_blocks(samples, ["2k"], recorded, n_boot=0, seed=0)
    only_kv = aggregate([s for s in samples if s.task == "kv_retrieval"], ["2k"], n_boot=0)["overall"]
    assert blocks["mine"]["tasks"] == ["kv_retrieval", "passage_count"]
    assert blocks["mine"]["overall"]["avg_lc"] == only_kv["avg_lc"] == pytest.approx(-50.0)


def test_a_category_mean_overall_counts_every_category_once():
    samples = (model_samples({"2k": 80, "8k": 40}, tasks=["kv_retrieval"]) + model_samples({"2k": 80, "8k": 40}, tasks=["counting_stars"])
               + model_samples({"2k": 50, "8k": 50}, tasks=["passage_count"]))
    overall = {"method": "category_mean", "tasks": ["kv_retrieval", "counting_stars", "passage_count"],
               "categories": {"a": ["kv_retrieval", "counting_stars"], "b": ["passage_count"]}}
    recorded = {"name": "mine", "tasks": ["kv_retrieval", "counting_stars", "passage_count"], "overall": overall}
    blocks = suite_blocks(samples, ["2k"], recorded, n_boot=0, seed=0)
    # categories weigh equally: S_8k = (40 + 50) / 2 = 45, Base = (80 + 50) / 2 = 65, LC = (45 - 65) / 65;
    # a plain task mean weighs category a twice: S_8k = 130 / 3, Base = 210 / 3, LC = (130 - 210) / 210
    assert blocks["mine"]["overall"]["avg_lc"] == pytest.approx(100 * (45 - 65) / 65) and blocks["mine"]["method"] == "category_mean"
    assert aggregate(samples, ["2k"], n_boot=0)["overall"]["avg_lc"] == pytest.approx(100 * (130 - 210) / 210)


def test_the_helmet_suite_averages_its_six_categories():
    suite = load_suite("helmet")
    assert suite.overall_method == "category_mean"
    assert list(suite.categories) == ["recall", "rag", "rerank", "icl", "longqa", "summ"]
    assert sorted(task for members in suite.categories.values() for task in members) == sorted(suite.tasks)


@pytest.mark.parametrize("overall, message", [
    ('method = "category_mean"', "needs overall.categories"),
    ('method = "category_mean"\ncategories = { a = ["kv_retrieval"] }', "without a category: counting_stars"),
    ('method = "mean"\ncategories = { a = ["kv_retrieval"] }', "used only with method"),
])
def test_category_rules_are_checked_in_one_line(tmp_path, overall, message):
    text = ('name = "mine"\nlengths = ["2k", "4k"]\nbase_lengths = ["2k"]\n[overall]\n' + overall +
            '\n[tasks.kv_retrieval]\nmetric = "default"\n[tasks.counting_stars]\nmetric = "default"\n')
    with pytest.raises(UserError, match=message):
        parse_suite_file(write_suite(tmp_path, text))


def test_report_has_one_table_set_per_suite(tmp_path):
    tasks = ("kv_retrieval", "single_doc_qa")
    data = write_dataset(tmp_path / "data", tasks=tasks, labels=("2k", "4k", "6k", "8k"), rows=2)
    add_suite(data, load_suite(str(write_suite(tmp_path))).record())  # its suite holds kv_retrieval, not single_doc_qa
    results = score(data, tmp_path / "two.json")
    assert {name: block["tasks"] for name, block in results["aggregates"]["suites"].items()} == {
        "retrieval-pair": ["kv_retrieval"], DEFAULT_SUITE: ["single_doc_qa"]}
    report = invoke("report", str(tmp_path / "two.json"), "--out", str(tmp_path / "rep"), "--n-boot", "10")
    assert report.exit_code == 0, report.output
    text = (tmp_path / "rep" / "report.md").read_text()
    assert text.index("## Suite retrieval-pair") < text.index("### kv_retrieval") < text.index(f"## Suite {DEFAULT_SUITE}") < text.index("### single_doc_qa")
    assert "## Per task" not in text

    plain = write_dataset(tmp_path / "plain", tasks=tasks, labels=("2k", "4k", "6k", "8k"), rows=2)
    score(plain, tmp_path / "one.json")
    single = invoke("report", str(tmp_path / "one.json"), "--out", str(tmp_path / "rep1"), "--n-boot", "10")
    assert single.exit_code == 0, single.output
    text = (tmp_path / "rep1" / "report.md").read_text()
    assert "## Per task" in text and "## Suite" not in text


def test_generate_and_inspect_use_the_suite_base_lengths_and_group_by_suite(tmp_path):
    path = write_suite(tmp_path, VALID.replace('base_lengths = ["2k"]', 'base_lengths = ["3k"]'))
    result = invoke("generate", "--sources", "demo", "--out", str(tmp_path / "out"), "--rows", "1", "--workers", "1",
                    "--quiet", "--suite", str(path), "--tasks", "kv_retrieval", "--lengths", "3k,5k")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output  # the default 2k, 4k, 6k would all be missing
    inspected = invoke("inspect", str(tmp_path / "out"))
    assert inspected.exit_code == 0, inspected.output
    assert inspected.output.splitlines()[1] == "suite retrieval-pair" and "warning" not in inspected.output
    plain = invoke("generate", "--sources", "demo", "--out", str(tmp_path / "plain"), "--rows", "1", "--workers", "1",
                   "--quiet", "--tasks", "kv_retrieval", "--lengths", "3k")
    assert "warning: none of the base lengths (2k, 4k, 6k)" in plain.output


def test_malformed_suite_aggregates_are_a_one_line_user_error(tmp_path):
    from tests.test_report import GOOD, write_results

    path = write_results(tmp_path / "a.json", "a", model_samples(GOOD))
    data = json.loads(path.read_text())
    data["aggregates"]["suites"] = {"mine": {"tasks": "kv_retrieval", "overall": None}}
    path.write_text(json.dumps(data))
    result = invoke("report", str(path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "aggregates.suites must map suite" in result.output


def test_score_grades_with_the_metric_family_the_suite_chose(tmp_path):
    data = write_dataset(tmp_path / "data", tasks=("kv_retrieval", "single_doc_qa"), labels=("2k", "8k"), rows=2)
    record = load_suite(DEFAULT_SUITE).record()
    add_suite(data, record)
    assert score(data, tmp_path / "a.json")["settings"]["metrics"] == {"kv_retrieval": "accuracy", "single_doc_qa": "qa_f1"}
    add_suite(data, {**record, "metrics": {**record["metrics"], "kv_retrieval": "qa_judge"}})
    assert score(data, tmp_path / "b.json")["settings"]["metrics"] == {"kv_retrieval": "qa_f1", "single_doc_qa": "qa_f1"}
