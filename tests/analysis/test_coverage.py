"""Information coverage: by construction on generated mirror data (recounted here from the prompt text),
by an evaluator against the local OpenAI stub (scripted replies, garbage included), --input files,
dry runs, cache reuse and errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.suites import DEFAULT_SUITE, load_suite
from longbench100.cli import main
from longbench100.judge.coverage_rubric import parse_coverage
from longbench100.judge.setup import PREFLIGHT_PROMPT
from longbench100.text.chunks import chunk_spans
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate_in_process
from tests.support.openai_stub import OpenAIStub, prompt_text

PAPER_TASKS = load_suite(DEFAULT_SUITE).tasks  # the eight tasks of the paper

# Where the packaged templates' closing part starts, written out here independently of the library.
TAILS = (
    "\n\nUsing only Passage",
    "\n\nCombine what Passages",
    "\n\nWrite a concise summary",
    "\n\nWrite one concise summary",
    "\n\nSummary:\n",
    "\n\nTask: find the record whose key is",
    "\n\nQuestion: which list gives",
    "\n\nHow many distinct paragraphs",
)


@pytest.fixture(scope="module")
def data(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("coverage") / "data"
    generate_in_process(out, PAPER_TASKS, (("2k", 2048),), 2, sources=str(mirror), seed=5)
    return out


def _records(data: Path) -> list[dict]:
    return [
        json.loads(line)
        for task in PAPER_TASKS
        for line in (data / task / "2k.jsonl").read_text().splitlines()
    ]


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["coverage", *args])
    return result.exit_code, result.output


def _context_and_gold(record: dict) -> tuple[str, list[str]]:
    """The context of a stored prompt and its gold texts, cut by hand from the prompt."""
    prompt = record["prompt"]
    starts = [
        prompt.find(marker)
        for marker in ("\n\nPassage 1:\n", "\n\nParagraph 1:\n", "\n\nRecord: the key")
    ]
    start = min(index for index in starts if index >= 0) + 2
    end = max(prompt.rfind(tail) for tail in TAILS)
    context = prompt[start:end]
    task, gold = record["task"], record["gold"]
    if task == "passage_count":
        return context, [context]
    if task == "counting_stars":
        return context, [f"The little penguin counted {count} stars." for count in gold["counts"]]
    if task == "kv_retrieval":
        chain = gold["chain"][: gold["lookups"] + 1]  # the records looked up: one, k0 -> k1
        return context, [
            f'Record: the key "{key}" has the value "{value}".'
            for key, value in zip(chain, chain[1:])
        ]
    texts = []
    for number in gold["passages"]:
        begin = context.index(f"Passage {number}:\n")
        following = context.find(f"\n\nPassage {number + 1}:\n", begin)
        texts.append(context[begin : following if following >= 0 else len(context)])
    return context, texts


def test_construction_ic_is_gold_tokens_over_context_tokens_recounted_from_the_prompt(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "coverage.json"
    code, output = _invoke("--data", str(data), "--out", str(out))
    assert code == 0, output
    report = json.loads(out.read_text())
    tokenizer = load_tokenizer("cl100k_base")
    by_id = {row["id"]: row for row in report["samples"]}
    records = _records(data)
    assert len(by_id) == len(records) == 2 * len(PAPER_TASKS)
    for record in records:
        context, gold = _context_and_gold(record)
        for text in gold:
            assert text in context, (record["id"], text[:60])
        expected = round(
            min(sum(tokenizer.count(text) for text in gold) / tokenizer.count(context), 1.0), 4
        )
        row = by_id[record["id"]]
        assert row["ic"] == expected, record["id"]
        assert row["context_tokens"] == tokenizer.count(context)
    table = report["construction"]
    assert table["passage_count"]["2k"]["ic"] == 1.0
    for task in ("kv_retrieval", "counting_stars"):
        assert table[task]["2k"]["ic"] < 0.15
    assert "passage_count" in output and "100.0%" in output
    assert report["evaluator"] is None


def test_same_data_gives_identical_bytes(data: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert _invoke("--data", str(data), "--out", str(first))[0] == 0
    assert _invoke("--data", str(data), "--out", str(second))[0] == 0
    assert first.read_bytes() == second.read_bytes()


def _fragment(body: dict) -> tuple[str, str]:
    prompt = prompt_text(body)
    fragment = prompt.split("[Fragment of a longer text]\n", 1)[1].split("\n[End of fragment]", 1)[
        0
    ]
    query = prompt.split("[Query]\n", 1)[1].split("\n[End of query]", 1)[0]
    return fragment, query


def oracle(body: dict) -> str:
    """Says 1 for a fragment holding the heading of the passage the query names, 0 otherwise;
    a fragment holding the first heading gets a reply with no score at all."""
    if prompt_text(body) == PREFLIGHT_PROMPT:
        return "OK"
    fragment, query = _fragment(body)
    if "Passage 1:\n" in fragment or "Paragraph 1:\n" in fragment:
        return "I am not sure what you mean."
    named = re.search(r"Using only Passage (\d+)", query)
    needed = named is not None and f"Passage {named.group(1)}:\n" in fragment
    return (
        "Query understanding: a question.\nFragment understanding: some passages.\nAssessment: see above.\n"
        f"**Final score:** {int(needed)}"
    )


def test_evaluator_decides_each_chunk_leaves_garbage_undecided_and_is_validated(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "coverage.json"
    with OpenAIStub(oracle) as server:
        code, output = _invoke(
            "--data",
            str(data),
            "--tasks",
            "single_doc_qa,passage_count",
            "--chunk-tokens",
            "300",
            "--evaluator-model",
            "stub-model",
            "--evaluator-base-url",
            server.base_url,
            "--out",
            str(out),
        )
        assert code == 0, output
        bodies = [body for body in server.bodies if prompt_text(body) != PREFLIGHT_PROMPT]
    report = json.loads(out.read_text())
    tokenizer = load_tokenizer("cl100k_base")
    fragments = [_fragment(body)[0] for body in bodies]
    assert fragments and all(tokenizer.count(fragment) <= 300 for fragment in fragments)
    rows = report["samples"]
    sent = [prompt_text(body) for body in bodies]
    assert (
        len(set(sent)) == len(sent) == report["evaluator"]["calls"]
    )  # each distinct chunk prompt is asked once
    assert all(len(row["decisions"]) == row["chunks"] for row in rows)
    assert sum(row["chunks"] for row in rows) >= len(
        bodies
    )  # samples sharing a chunk and query share its call
    records = {record["id"]: record for record in _records(data)}
    for row in rows:
        context, _ = _context_and_gold(records[row["id"]])
        assert row["chunks"] >= tokenizer.count(context) // 300
        undecided = row["decisions"].count(None)
        assert undecided == 1  # the chunk holding the first heading
        assert row["undecided"] == [
            {
                "chunk": row["decisions"].index(None),
                "reason": "invalid reply",
                "reply": "I am not sure what you mean.",
            }
        ]
        decided = [d for d in row["decisions"] if d is not None]
        assert row["evaluator_ic"] == round(sum(decided) / len(decided), 4)
    validation = report["evaluator"]["validation"]
    single = validation["single_doc_qa"]
    assert single["precision"] == 1.0  # a chunk with the named passage's heading always overlaps it
    assert (
        single["tp"] >= 1 and single["undecided"] == 2
    )  # a named heading may share the undecided first chunk
    assert single["recall"] == round(single["tp"] / (single["tp"] + single["fn"]), 4)
    counting = validation["passage_count"]
    assert (
        counting["tp"] == 0
        and counting["recall"] == 0.0
        and counting["fn"] == counting["gold_chunks"] > 0
    )
    assert report["evaluator"]["tasks"]["single_doc_qa"]["2k"]["undecided"] == 2
    assert report["evaluator"]["invalid_replies"] == 4
    assert "precision 100.0%" in output


def test_cached_decisions_are_reused_and_dry_run_sends_nothing(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    args = (
        "--data",
        str(data),
        "--tasks",
        "single_doc_qa",
        "--limit",
        "1",
        "--evaluator-model",
        "stub-model",
    )
    with OpenAIStub(oracle) as server:
        code, output = _invoke(*args, "--evaluator-base-url", server.base_url, "--dry-run")
        assert code == 0, output
        assert not server.bodies
        calls = int(re.search(r"(\d+) calls to send", output).group(1))
        tokens = int(re.search(r"(\d+) prompt tokens", output).group(1))
        assert calls >= 4 and tokens > 2000
        first = tmp_path / "first.json"
        assert _invoke(*args, "--evaluator-base-url", server.base_url, "--out", str(first))[0] == 0
        sent = [body for body in server.bodies if prompt_text(body) != PREFLIGHT_PROMPT]
        assert len(sent) == calls
        before = len(server.bodies)
        second = tmp_path / "second.json"
        assert _invoke(*args, "--evaluator-base-url", server.base_url, "--out", str(second))[0] == 0
        resent = [body for body in server.bodies[before:] if prompt_text(body) != PREFLIGHT_PROMPT]
        unreadable = [body for body in sent if "Passage 1:\n" in _fragment(body)[0]]
        assert unreadable and len(resent) == len(
            unreadable
        )  # only the unreadable replies are asked again
        assert all("Passage 1:\n" in _fragment(body)[0] for body in resent)
        code, output = _invoke(*args, "--evaluator-base-url", server.base_url, "--dry-run")
        assert f"{calls - len(unreadable)} cached, {len(unreadable)} calls to send" in output
    assert json.loads(first.read_text())["samples"] == json.loads(second.read_text())["samples"]


def test_input_jsonl_from_elsewhere(tmp_path: Path) -> None:
    lines = [
        {
            "key": "a",
            "text": "The lighthouse keeper rowed out at dawn. " * 60
            + "Gulls circled over the quay. " * 60,
            "q": "Who rowed?",
        },
        {"key": "b", "text": "Gulls circled over the quay. " * 30, "q": "Who rowed?"},
    ]
    path = tmp_path / "other.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    def lighthouse(body: dict) -> str:
        if prompt_text(body) == PREFLIGHT_PROMPT:
            return "OK"
        return f"Final score: {int('lighthouse' in _fragment(body)[0])}"

    out = tmp_path / "coverage.json"
    with OpenAIStub(lighthouse) as server:
        code, output = _invoke(
            "--input",
            str(path),
            "--context-field",
            "text",
            "--query-field",
            "q",
            "--id-field",
            "key",
            "--chunk-tokens",
            "100",
            "--evaluator-model",
            "m",
            "--evaluator-base-url",
            server.base_url,
            "--out",
            str(out),
        )
    assert code == 0, output
    report = json.loads(out.read_text())
    first, second = report["samples"]
    assert (first["id"], second["id"]) == ("a", "b")
    assert 0.3 < first["evaluator_ic"] < 0.7 and second["evaluator_ic"] == 0.0
    assert report["construction"] is None and report["evaluator"]["validation"] is None
    assert report["evaluator"]["tasks"]["input"]["all"]["samples"] == 2


@pytest.mark.parametrize(
    "content, args, message",
    [
        (
            '{"text": "x", "q": "y"}\n{"text": \n',
            ("--context-field", "text", "--query-field", "q"),
            "other.jsonl:2: not valid JSON",
        ),
        (
            '{"text": "x"}\n',
            ("--context-field", "text", "--query-field", "q"),
            "other.jsonl:1: no field 'q'",
        ),
        (
            '{"text": 3, "q": "y"}\n',
            ("--context-field", "text", "--query-field", "q"),
            "must be strings",
        ),
        (
            '{"text": "x", "q": "y"}\n',
            ("--context-field", "text"),
            "--input needs --context-field and --query-field",
        ),
    ],
)
def test_input_errors_are_one_line(tmp_path: Path, content: str, args: tuple, message: str) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text(content)
    code, output = _invoke(
        "--input",
        str(path),
        *args,
        "--evaluator-model",
        "m",
        "--evaluator-base-url",
        "http://127.0.0.1:9/v1",
    )
    assert code == 2 and message in output and "Traceback" not in output
    assert len(output.strip().splitlines()) == 1


def test_usage_errors_and_a_dead_evaluator(data: Path, tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text('{"text": "x", "q": "y"}\n')
    code, output = _invoke("--input", str(path), "--context-field", "text", "--query-field", "q")
    assert code == 2 and "give --evaluator-model" in output
    code, output = _invoke("--data", str(data), "--input", str(path))
    assert code == 2 and "exactly one of --data" in output
    code, output = _invoke("--data", str(data), "--dry-run")
    assert code == 2 and "--dry-run" in output
    (tmp_path / "not-data").mkdir()
    code, output = _invoke("--data", str(tmp_path / "not-data"), "--out", str(tmp_path / "c.json"))
    assert code == 2 and "no <task>/<label>.jsonl files" in output
    assert not (tmp_path / "c.json").exists()
    from longbench100 import CoverageOptions, run_coverage
    from longbench100.core.errors import UserError

    with pytest.raises(UserError, match="must be a file in an existing folder"):
        run_coverage(CoverageOptions(data_dir=data, out=tmp_path / "missing" / "c.json"))
    out = tmp_path / "dead.json"
    code, output = _invoke(
        "--data",
        str(data),
        "--tasks",
        "kv_retrieval",
        "--limit",
        "1",
        "--evaluator-model",
        "m",
        "--evaluator-base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        str(out),
    )
    assert (
        code == 2
        and "evaluator server http://127.0.0.1:9/v1: cannot reach it" in output
        and not out.exists()
    )


def test_chunks_tile_the_text_and_keep_to_the_limit() -> None:
    tokenizer = load_tokenizer("cl100k_base")
    text = (
        "Short one. " * 40
        + "x" * 3000
        + " tail words here.\n\n"
        + "Another sentence follows. " * 50
    )
    spans = chunk_spans(text, tokenizer, 64)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(0 < tokenizer.count(text[a:b]) <= 64 for a, b in spans)
    assert chunk_spans("", tokenizer) == []


@pytest.mark.parametrize(
    "reply, score",
    [
        (
            "Query understanding: who.\nPassage understanding: a list.\nAssessment: needed.\nFinal score: 1",
            1.0,
        ),
        ("**Final score:** 0", 0.0),
        ("Final Score: [1].", 1.0),
        ("<think>Final score: 0</think>\nFinal score: 1", 1.0),
        ("1", 1.0),
        ("Final score: 0.5", None),
        (
            "Fragment understanding: The passage contains information.\nQuery: What?\n\nFinal score: 0 or 1",
            None,
        ),  # SmolLM2
        ("Final score: <0 or 1>", None),
        ("Final score: 1 because it names the passage.", 1.0),
        ("Final score: yes", None),
        ("Final score: 1\nFinal score: 0", None),
        ("The fragment seems relevant.", None),
        ("", None),
    ],
)
def test_reply_parsing(reply: str, score: float | None) -> None:
    assert parse_coverage(reply) == score


def test_report_shows_coverage_of_the_data_and_inspect_has_a_column(
    data: Path, tmp_path: Path
) -> None:
    from longbench100.folders.data_records import manifest_sha256
    from tests.report.test_run import model_samples, write_results

    samples = model_samples({"2k": 80, "4k": 80, "6k": 80, "8k": 70})
    results = write_results(
        tmp_path / "m.json", "m", samples, manifest_sha256=manifest_sha256(data)
    )
    result = CliRunner().invoke(
        main,
        [
            "report",
            str(results),
            "--out",
            str(tmp_path / "rep"),
            "--n-boot",
            "0",
            "--data",
            str(data),
        ],
    )
    assert result.exit_code == 0, result.output
    report = (tmp_path / "rep" / "report.md").read_text()
    assert (
        "## Information coverage by construction" in report
        and "| passage_count | 100.0% |" in report
    )
    other = write_results(tmp_path / "o.json", "o", samples, manifest_sha256="d" * 64)
    result = CliRunner().invoke(
        main, ["report", str(other), "--out", str(tmp_path / "rep2"), "--data", str(data)]
    )
    assert result.exit_code == 2 and "was scored on other data" in result.output
    result = CliRunner().invoke(main, ["inspect", str(data)])
    assert result.exit_code == 0 and " IC" in result.output.splitlines()[0]
    assert re.search(r"^passage_count .* 100\.0%$", result.output, re.MULTILINE)
