"""ETHIC's one-document tasks (recalling, organizing, section_summarizing) against a stub annotator: the
prompt re-read independently of the builder (one document's consecutive chunks, labels from the stub),
budgets, pairing, caching, --dry-run, refusals and loud failures, and the recalling metric."""

import itertools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.data_records import DataRecord
from longbench100.judge.annotation_rubric import read_mentions, read_summary
from longbench100.scoring.metrics.name_sets import name_set_f1, reply_names
from longbench100.sources.cleaning import strip_gutenberg_frame
from longbench100.text.tokenization import load_tokenizer
from tests.support.fixture_mirror import BOOKS, PEOPLE, WORDS
from tests.support.generate_helpers import (
    assert_examples_cover,
    generate_annotated,
    record_template_variables,
    records,
    tree,
)
from tests.support.openai_stub import OpenAIStub, prompt_text

TASKS = ("recalling", "organizing", "section_summarizing")
LENGTHS = (("4k", 4096), ("8k", 8192), ("16k", 16384))
PASSAGE = re.compile(r"<passage>\n(.*)\n</passage>", re.DOTALL)
SECTION = re.compile(r"^Section (\d+):\n", re.MULTILINE)
UNGROUNDED = "Zed Nobody"  # a name the stub adds that no chunk contains: it must be dropped


def stub_summary(chunk: str) -> str:
    """What the stub annotator answers for a chunk's summary (re-derivable from the chunk alone)."""
    words = chunk.split()
    return f"A part of {len(words)} words that opens with {' '.join(words[:4])} and closes with {' '.join(words[-3:])}"


def stub_names(chunk: str) -> list[str]:
    """The people the stub finds in a chunk, in a fixed order."""
    return [name for name in PEOPLE if name in chunk]


def sentence_opener(chunk: str) -> list[str]:
    """A common word that opens a sentence of the chunk, capitalised (a weak annotator's mistake the gold must
    drop: the book writes it in lower case inside sentences)."""
    openers = re.findall(r"\. ([A-Z][a-z]+) ", chunk)
    return [word for word in openers if word.lower() in WORDS][:1]


def annotator(body: dict) -> str:
    text = prompt_text(body)
    match = PASSAGE.search(text)
    if match is None:
        return "OK"  # the preflight
    chunk = match.group(1)
    if "List every person" in text:
        return (
            "; ".join(stub_names(chunk) + sentence_opener(chunk) + [UNGROUNDED])
            if stub_names(chunk)
            else "NONE"
        )
    return stub_summary(chunk)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["generate", "--quiet", *args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub(annotator) as server:
        yield server


@pytest.fixture(scope="module")
def data(mirror, stub, tmp_path_factory) -> Path:
    return generate_annotated(
        tmp_path_factory,
        "one_document",
        "lb100-cache",
        stub.base_url,
        "--tasks",
        ",".join(TASKS),
        "--sources",
        str(mirror),
        "--rows",
        "4",
        "--lengths",
        ",".join(label for label, _ in LENGTHS),
    )


def books(mirror: Path) -> dict[str, str]:
    """The mirror's books, cleaned the way the registry says, by document id."""
    import pyarrow.parquet as pq

    rows = pq.read_table(
        next((mirror / "manu" / "project_gutenberg" / "data").glob("*.parquet"))
    ).to_pylist()
    return {f"project_gutenberg/{row['id']}": strip_gutenberg_frame(row["text"]) for row in rows}


def sections(prompt: str, end: str) -> list[str]:
    marks = list(SECTION.finditer(prompt))
    assert [int(mark.group(1)) for mark in marks] == list(range(1, len(marks) + 1))
    ends = [mark.start() for mark in marks[1:]] + [prompt.index(end, marks[-1].end())]
    return [prompt[mark.end() : stop].rstrip("\n") for mark, stop in zip(marks, ends)]


def test_refused_without_an_annotator_in_one_line(mirror, tmp_path):
    code, output = run(
        "--suite",
        "ethic",
        "--tasks",
        "organizing",
        "--sources",
        str(mirror),
        "--out",
        str(tmp_path / "out"),
    )
    assert code != 0
    assert (
        "--annotator-model" in output
        and "Traceback" not in output
        and len(output.strip().splitlines()) == 1
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("task", TASKS)
def test_prompt_and_answer_room_fit_and_fill(data, task):
    tokenizer = load_tokenizer("cl100k_base")
    for label, length in LENGTHS:
        rows = records(data, task, label)
        assert (
            BOOKS <= len(rows) <= 4
        )  # a row whose window would mostly repeat another row's is left out
        for row in rows:
            assert tokenizer.count(row["prompt"]) == row["prompt_tokens"]
            assert row["prompt_tokens"] + row["gold"]["answer_tokens"] <= length
            assert (
                row["prompt_tokens"] + row["gold"]["answer_tokens"] > length - 1024 - 300
            )  # cut at a chunk boundary


@pytest.mark.parametrize("task", ("organizing", "section_summarizing"))
def test_sections_are_consecutive_text_of_one_book(data, mirror, task):
    texts = books(mirror)
    end = "Summaries, shuffled:" if task == "organizing" else "\nSummarise each of"
    for label, _ in LENGTHS:
        for row in records(data, task, label):
            found = sections(row["prompt"], end)
            book = texts[row["gold"]["doc_ids"][0]]
            assert len(found) == row["gold"]["sections"] >= 2
            position = 0
            for (
                text
            ) in found:  # each section is the book's text, in order, with only whitespace between
                start = book.index(text, position)
                assert not book[position:start].strip() or position == 0
                position = start + len(text)


def test_organizing_gold_maps_each_section_to_its_own_summary(data):
    for label, _ in LENGTHS:
        for row in records(data, "organizing", label):
            prompt = row["prompt"]
            found = sections(prompt, "Summaries, shuffled:")
            shown = dict(
                re.findall(
                    r"^\[([A-Z]{1,2})\] (.*)$",
                    prompt[prompt.index("Summaries, shuffled:") :],
                    re.MULTILINE,
                )
            )
            expected = [
                next(letter for letter, text in shown.items() if text == stub_summary(section))
                for section in found
            ]
            assert row["gold"]["order"] == expected
            assert row["answers"] == [" > ".join(expected)]
            assert len(shown) == len(found)


def test_section_summarizing_references_are_the_chunk_summaries(data):
    for row in records(data, "section_summarizing", "8k"):
        found = sections(row["prompt"], "\nSummarise each of")
        assert row["gold"]["references"] == [stub_summary(section) for section in found]
        assert "at most 5 sentences" in row["prompt"]


def test_recalling_gold_is_the_union_of_names_found_in_the_prompt(data):
    for label, _ in LENGTHS:
        for row in records(data, "recalling", label):
            context = row["prompt"][row["prompt"].index("<text>") : row["prompt"].index("</text>")]
            mentions = row["gold"]["mentions"]
            assert UNGROUNDED not in mentions
            assert sorted(mentions) == sorted(
                name for name in PEOPLE if name in context
            )  # no sentence opener
            assert row["gold"]["dropped_mentions"] > 0
            assert (
                name_set_f1(
                    row["answers"][0],
                    DataRecord(
                        row["id"],
                        "recalling",
                        label,
                        row["length"],
                        0,
                        tuple(row["answers"]),
                        None,
                        None,
                        gold=row["gold"],
                    ),
                )
                == 1.0
            )
            assert_gold_spans_are_the_chunks_naming_a_gold_item(row)


def assert_gold_spans_are_the_chunks_naming_a_gold_item(row: dict) -> None:
    """IC by construction: every gold span names a gold item (a whole word), and no context outside them does."""
    names = re.compile("|".join(rf"\b{re.escape(name)}\b" for name in row["gold"]["mentions"]))
    spans = row["gold"]["spans"]
    outside, at = [], spans["context"][0]
    for start, end in spans["gold"]:
        assert names.search(row["prompt"][start:end])
        outside.append(row["prompt"][at:start])
        at = end
    outside.append(row["prompt"][at : spans["context"][1]])
    assert not any(names.search(text) for text in outside)


def test_recalling_coverage_counts_chunks_the_annotator_passed_over(mirror, tmp_path_factory):
    def forgetful(body: dict) -> str:  # names nobody in every other chunk, as a weak annotator does
        chunk = PASSAGE.search(prompt_text(body))
        if chunk is None:
            return "OK"
        names = stub_names(chunk.group(1))
        return "; ".join(names) if names and len(chunk.group(1)) % 2 else "NONE"

    with OpenAIStub(forgetful) as server:
        out = generate_annotated(
            tmp_path_factory,
            "forgetful",
            "lb100-cache-forgetful",
            server.base_url,
            "--tasks",
            "recalling",
            "--sources",
            str(mirror),
            "--rows",
            "2",
            "--lengths",
            "8k",
        )
        asked = [
            match.group(1)
            for request in server.requests
            if (match := PASSAGE.search(prompt_text(request.body)))
        ]
    passed_over = {chunk for chunk in asked if not len(chunk) % 2}
    rows = records(out, "recalling", "8k")
    for row in rows:
        assert_gold_spans_are_the_chunks_naming_a_gold_item(row)
    gold_texts = {
        row["prompt"][start:end] for row in rows for start, end in row["gold"]["spans"]["gold"]
    }
    assert gold_texts & passed_over  # a chunk the annotator named nobody in still holds a gold name


def test_rows_are_paired_prefixes_of_the_same_document(data):
    """A row recorded as paired reads the same document from the same start at every length where it is paired,
    a longer opening at each; a row that reads another document or start somewhere says it is unpaired there."""
    for task in TASKS:
        by_label = {label: records(data, task, label) for label, _ in LENGTHS}
        paired_somewhere = 0
        for row in range(4):
            reads = [
                record for label, _ in LENGTHS for record in by_label[label] if record["row"] == row
            ]
            paired = [record for record in reads if record["gold"]["paired"]]
            starts = {
                (record["gold"]["doc_ids"][0], record["gold"]["chunk_chars"][0][0])
                for record in paired
            }
            assert len(starts) <= 1
            spans = [record["gold"]["chunk_chars"] for record in paired]
            assert all(
                shorter == longer[: len(shorter)] for shorter, longer in itertools.pairwise(spans)
            )
            paired_somewhere += bool(paired)
        assert paired_somewhere  # the fixture's books hold some rows at every length
        manifest = json.loads((data / "manifest.json").read_text())["tasks"][task]
        for label, _ in LENGTHS:  # what inspect shows is what the records say
            assert manifest["lengths"][label]["paired_rows"] == sum(
                record["gold"]["paired"] for record in by_label[label]
            )


def test_manifest_records_the_annotator_and_a_rerun_is_free(data, mirror, stub, tmp_path):
    manifest = json.loads((data / "manifest.json").read_text())
    annotator_info = manifest["annotator"]
    assert annotator_info["model"] == "stub-model" and annotator_info["prompt_versions"] == {
        "mentions": 2,
        "summary": 3,
    }
    assert annotator_info["names_not_in_chunk"] > 0
    before = len(stub.requests)
    again = tmp_path / "again"
    code, output = run(
        "--suite",
        "ethic",
        "--tasks",
        ",".join(TASKS),
        "--sources",
        str(mirror),
        "--rows",
        "4",
        "--lengths",
        "4k,8k,16k",
        "--out",
        str(again),
        "--annotator-model",
        "stub-model",
        "--annotator-base-url",
        stub.base_url,
        "--workers",
        "2",
    )
    assert code == 0, output
    assert len(stub.requests) == before  # every label cached: not even the preflight is sent
    assert json.loads((again / "manifest.json").read_text())["annotator"]["calls"] == 0
    assert tree(again, skip=("manifest.json",)) == tree(data, skip=("manifest.json",))


def test_dry_run_counts_calls_and_writes_nothing(mirror, stub, tmp_path):
    before = len(stub.requests)
    out = tmp_path / "dry"
    code, output = run(
        "--suite",
        "ethic",
        "--tasks",
        "recalling",
        "--sources",
        str(mirror),
        "--rows",
        "2",
        "--lengths",
        "4k",
        "--seed",
        "5",
        "--out",
        str(out),
        "--annotator-model",
        "other-model",
        "--annotator-base-url",
        stub.base_url,
        "--dry-run",
    )
    assert code == 0, output
    assert re.search(
        r"annotator dry run \(other-model\): (\d+) chunk prompts .* 0 cached, \1 calls to send, \d+ prompt tokens "
        r"\(cl100k_base\), plus one call for each reply that loops to the budget",
        output,
    )
    assert len(stub.requests) == before and not out.exists()


def test_unreadable_labels_stop_the_run_before_writing(mirror, tmp_path):
    def empty_summaries(body: dict) -> str:
        return "OK" if PASSAGE.search(prompt_text(body)) is None else "   "

    with OpenAIStub(empty_summaries) as server:
        out = tmp_path / "out"
        code, output = run(
            "--suite",
            "ethic",
            "--tasks",
            "organizing",
            "--sources",
            str(mirror),
            "--rows",
            "1",
            "--lengths",
            "4k",
            "--out",
            str(out),
            "--annotator-model",
            "empty-model",
            "--annotator-base-url",
            server.base_url,
        )
    assert (
        code != 0 and "got no usable label (invalid reply" in output and "Traceback" not in output
    )
    assert "--allow-unlabelled" in output
    assert not list(out.glob("*/*.jsonl"))


def test_annotation_replies_are_read_strictly():
    chunk = "Mr. Darcy bowed. Elizabeth smiled at Jane in Meryton."
    assert read_mentions("Mr. Darcy; Elizabeth; Bingley", chunk) == {
        "mentions": ["Mr. Darcy", "Elizabeth"],
        "dropped": 1,
    }
    assert read_mentions("Names: 1. Elizabeth\n2. Jane\n3. elizabeth", chunk) == {
        "mentions": ["Elizabeth", "Jane"],
        "dropped": 0,
    }
    assert read_mentions("NONE", chunk) == {"mentions": [], "dropped": 0}
    assert read_mentions("", chunk) is None
    assert read_summary("Summary: Darcy bows to Elizabeth.\nThey talk.") == {
        "summary": "Darcy bows to Elizabeth. They talk."
    }
    assert read_summary("<think>hmm</think> OK") is None
    assert read_summary("<p>Darcy bows to Elizabeth.</p>\n<passage> They talk.") == {
        "summary": "Darcy bows to Elizabeth. They talk."
    }
    assert read_summary("Darcy finds that x<y and z>w holds.") == {
        "summary": "Darcy finds that x<y and z>w holds."
    }


def test_name_set_f1_on_reply_shapes():
    record = DataRecord(
        "r",
        "recalling",
        "8k",
        8192,
        0,
        ("Mr. Darcy; Elizabeth",),
        None,
        None,
        gold={"mentions": ["Mr. Darcy", "Elizabeth", "Jane"]},
    )
    assert reply_names("Names: mr darcy, Elizabeth;\n- Jane") == {"mr darcy", "elizabeth", "jane"}
    assert name_set_f1("Mr. Darcy; Elizabeth; Jane", record) == 1.0
    assert name_set_f1("Elizabeth", record) == pytest.approx(0.5)
    assert name_set_f1("Elizabeth; Kitty; Lydia", record) == pytest.approx(1 / 3)
    assert name_set_f1("", record) == 0.0


def test_template_examples_cover_every_variable_these_builders_pass(
    mirror, stub, tmp_path, monkeypatch
):
    passed = record_template_variables(monkeypatch)
    code, output = run(
        "--suite",
        "ethic",
        "--tasks",
        ",".join(TASKS),
        "--sources",
        str(mirror),
        "--rows",
        "1",
        "--lengths",
        "4k",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "out"),
        "--annotator-model",
        "stub-model",
        "--annotator-base-url",
        stub.base_url,
    )
    assert code == 0, output
    assert set(passed) == set(TASKS)
    assert_examples_cover(passed)


def section_judge(body: dict) -> str:
    """A judge stub: full marks when the summary is the annotator's summary of that very section, else the lowest."""
    text = prompt_text(body)
    if "<<<SECTION" not in text:
        return "OK"
    section = text.split("<<<SECTION\n", 1)[1].split("\nSECTION>>>", 1)[0]
    summary = text.split("<<<SUMMARY\n", 1)[1].split("\nSUMMARY>>>", 1)[0]
    mark = 5 if summary == stub_summary(section) else 1
    return f'The summary was compared with the section.\n{{"consistency": {mark}, "relevance": {mark}, "faithfulness": {mark}}}'


def swapped_first_two(reply: str) -> str:
    lines = reply.splitlines()
    first, second = lines[0].split(": ", 1), lines[1].split(": ", 1)
    return "\n".join([f"{first[0]}: {second[1]}", f"{second[0]}: {first[1]}", *lines[2:]])


def test_section_summaries_are_judged_section_by_section_against_their_text(data, tmp_path):
    rows = records(data, "section_summarizing", "8k")
    single = tmp_path / "data"
    (single / "section_summarizing").mkdir(parents=True)
    (single / "section_summarizing" / "8k.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows)
    )
    replies = {
        rows[0]["id"]: rows[0]["answers"][0],  # ideal: 1
        rows[1]["id"]: swapped_first_two(rows[1]["answers"][0]),  # two sections wrong: (K - 2) / K
        rows[2]["id"]: rows[2]["answers"][0].splitlines()[0],  # one section only: 1 / K
        rows[3]["id"]: "I cannot summarise this.",
    }  # none: 0
    predictions = tmp_path / "pred" / "section_summarizing"
    predictions.mkdir(parents=True)
    (predictions / "8k.jsonl").write_text(
        "".join(
            json.dumps({"id": key, "prediction": value, "error": None}) + "\n"
            for key, value in replies.items()
        )
    )
    with OpenAIStub(section_judge) as server:
        result = CliRunner().invoke(
            main,
            [
                "score",
                "--n-boot",
                "20",
                "--data",
                str(single),
                "--predictions",
                str(tmp_path / "pred"),
                "--out",
                str(tmp_path / "judged.json"),
                "--base-lengths",
                "8k",
                "--judge-model",
                server.model,
                "--judge-base-url",
                server.base_url,
            ],
        )
        assert result.exit_code == 0, result.output
        judged_calls = sum("<<<SECTION" in prompt_text(body) for body in server.bodies)
    sections = [row["gold"]["sections"] for row in rows]
    assert judged_calls == sections[0] + sections[1] + 1  # a missing summary is not sent
    results = json.loads((tmp_path / "judged.json").read_text())
    assert results["metrics"] == {"section_summarizing": "section_judge"}
    scores = {sample["id"]: sample["score"] for sample in results["samples"]}
    assert scores[rows[0]["id"]] == 1.0
    assert scores[rows[1]["id"]] == pytest.approx((sections[1] - 2) / sections[1])
    assert scores[rows[2]["id"]] == pytest.approx(1 / sections[2])
    assert scores[rows[3]["id"]] == 0.0
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "20",
            "--data",
            str(single),
            "--predictions",
            str(tmp_path / "pred"),
            "--out",
            str(tmp_path / "classic.json"),
            "--base-lengths",
            "8k",
            "--metric",
            "classic",
        ],
    )
    assert result.exit_code == 0, result.output
    classic = json.loads((tmp_path / "classic.json").read_text())
    assert classic["metrics"] == {"section_summarizing": "section_rouge"}
    assert {sample["id"]: sample["score"] for sample in classic["samples"]}[
        rows[0]["id"]
    ] == pytest.approx(1.0)


def test_section_judge_replies_are_read_strictly():
    from longbench100.judge.parse import section_parts, section_score

    assert section_parts('ok\n{"consistency": 4, "relevance": "5", "faithfulness": 3}') == {
        "consistency": 4,
        "relevance": 5,
        "faithfulness": 3,
    }
    assert section_parts("Consistency: 2\nRelevance (1-5): 3\n**Faithfulness**: 4") == {
        "consistency": 2,
        "relevance": 3,
        "faithfulness": 4,
    }
    assert section_parts('{"consistency": 0, "relevance": 5, "faithfulness": 5}') is None
    assert section_parts('{"consistency": 4, "relevance": 5}') is None
    assert section_score({"consistency": 5, "relevance": 3, "faithfulness": 1}) == 0.5


def logprob_judge(body: dict):
    """A judge stub whose server sends logprobs: each rating digit is a token of its own, with alternatives."""
    import math

    text = prompt_text(body)
    if "<<<SECTION" not in text:
        return "OK"
    pieces = [
        'The summary fits.\n{"consistency": ',
        "4",
        ', "relevance": ',
        "5",
        ', "faithfulness": ',
        "3",
        "}",
    ]
    alternatives = {"4": {"4": 0.6, "5": 0.4}, "5": {"5": 0.9, "2": 0.1}, "3": {"3": 0.5, "1": 0.5}}
    content = [
        {
            "token": piece,
            "logprob": 0.0,
            "top_logprobs": [
                {"token": token, "logprob": math.log(p)}
                for token, p in alternatives.get(piece, {}).items()
            ],
        }
        for piece in pieces
    ]
    reply = "".join(pieces)
    return 200, {
        "id": "x",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
                "logprobs": {"content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17},
    }


def test_section_ratings_are_weighted_by_the_judges_logprobs_when_sent(data, tmp_path):
    row = records(data, "section_summarizing", "8k")[0]
    single = tmp_path / "data" / "section_summarizing"
    single.mkdir(parents=True)
    (single / "8k.jsonl").write_text(json.dumps(row) + "\n")
    predictions = tmp_path / "pred" / "section_summarizing"
    predictions.mkdir(parents=True)
    (predictions / "8k.jsonl").write_text(
        json.dumps({"id": row["id"], "prediction": row["answers"][0], "error": None}) + "\n"
    )
    arguments = [
        "score",
        "--n-boot",
        "20",
        "--data",
        str(tmp_path / "data"),
        "--predictions",
        str(tmp_path / "pred"),
        "--base-lengths",
        "8k",
    ]
    with OpenAIStub(logprob_judge) as server:
        result = CliRunner().invoke(
            main,
            [
                *arguments,
                "--out",
                str(tmp_path / "first.json"),
                "--judge-model",
                server.model,
                "--judge-base-url",
                server.base_url,
            ],
        )
        assert result.exit_code == 0, result.output
        rated = [body for body in server.bodies if "<<<SECTION" in prompt_text(body)]
        assert rated and all(
            body["logprobs"] is True and body["top_logprobs"] == 5 for body in rated
        )
        again = CliRunner().invoke(
            main,
            [
                *arguments,
                "--out",
                str(tmp_path / "again.json"),
                "--judge-model",
                server.model,
                "--judge-base-url",
                server.base_url,
            ],
        )
        assert again.exit_code == 0, again.output
        assert len([body for body in server.bodies if "<<<SECTION" in prompt_text(body)]) == len(
            rated
        )  # all cached
    weighted = (
        (4 * 0.6 + 5 * 0.4) + (5 * 0.9 + 2 * 0.1) + (3 * 0.5 + 1 * 0.5)
    ) / 3  # mean expected rating
    for name in ("first.json", "again.json"):
        results = json.loads((tmp_path / name).read_text())
        assert results["samples"][0]["score"] == pytest.approx((weighted - 1) / 4, abs=1e-4)
        assert results["judge"]["section_ratings"] == {
            "probability-weighted": row["gold"]["sections"]
        }
    assert "probability-weighted" in result.output


def test_ratings_are_weighted_only_where_each_digit_is_a_token_of_its_own():
    from longbench100.judge.parse import weighted_section_parts

    def token(text, alternatives=()):
        return {
            "token": text,
            "logprob": 0.0,
            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in alternatives],
        }

    reply = '{"consistency": 4, "relevance": 5, "faithfulness": 3}'
    digits = [
        token('{"consistency": '),
        token("4", [("4", 0.0)]),
        token(', "relevance": '),
        token(" 5"[1:], [("5", 0.0)]),
        token(', "faithfulness": '),
        token("3", [("3", -1.0), ("2", -1.0), ("x", 0.0)]),
        token("}"),
    ]
    assert weighted_section_parts(reply, digits) == {
        "consistency": 4.0,
        "relevance": 5.0,
        "faithfulness": 2.5,
    }
    glued = digits[:5] + [token("3}", [("3}", 0.0)])]
    assert weighted_section_parts(reply, glued) is None  # the digit shares its token: plain ratings
    assert weighted_section_parts(reply + " ", digits) is None  # the tokens do not spell the reply


def test_inspect_says_who_labelled_the_chunks(data):
    result = CliRunner().invoke(main, ["inspect", str(data)])
    assert result.exit_code == 0, result.output
    line = next(
        line for line in result.output.splitlines() if line.startswith("chunk labels by annotator")
    )
    assert "stub-model (mentions v2, summary v3)" in line and "listed items dropped" in line


def used_chunks(row: dict, book: str) -> list[str]:
    """The chunk texts a row's prompt holds, from its recorded character spans in the book."""
    return [book[start:end].strip() for start, end in row["gold"]["chunk_chars"]]


def test_allow_unlabelled_leaves_out_exactly_the_rows_that_need_a_failed_chunk(
    data, mirror, tmp_path
):
    texts = books(mirror)
    first = records(data, "organizing", "8k")[0]
    failing = used_chunks(first, texts[first["gold"]["doc_ids"][0]])[
        1
    ]  # organizing row 0's second section, at every length

    def patchy(body: dict) -> str:
        match = PASSAGE.search(prompt_text(body))
        if match is not None and match.group(1) == failing:
            return "   "  # no label, for every kind asked of this chunk
        return annotator(body)

    lengths = ",".join(label for label, _ in LENGTHS)
    args = (
        "--suite",
        "ethic",
        "--tasks",
        ",".join(TASKS),
        "--sources",
        str(mirror),
        "--rows",
        "4",
        "--lengths",
        lengths,
        "--annotator-model",
        "patchy-model",
        "--workers",
        "2",
    )
    with OpenAIStub(patchy) as server:
        code, output = run(
            *args, "--out", str(tmp_path / "stopped"), "--annotator-base-url", server.base_url
        )
        assert (
            code != 0
            and "--allow-unlabelled" in output
            and not list((tmp_path / "stopped").glob("*/*.jsonl"))
        )
        out = tmp_path / "out"
        code, output = run(
            *args, "--out", str(out), "--annotator-base-url", server.base_url, "--allow-unlabelled"
        )
    assert code == 0, output
    assert re.search(
        r"warning: annotator patchy-model: \d+ of \d+ chunks got no usable label \(invalid reply \d+\)",
        output,
    )
    manifest = json.loads((out / "manifest.json").read_text())
    expected_left_out = {}
    for task in TASKS:
        for label, _ in LENGTHS:
            full = records(data, task, label)
            needing = [
                row["row"]
                for row in full
                if failing in used_chunks(row, texts[row["gold"]["doc_ids"][0]])
            ]
            written = records(out, task, label)
            assert [row["row"] for row in written] == [
                row["row"] for row in full if row["row"] not in needing
            ]
            assert all(
                row == next(f for f in full if f["id"] == row["id"]) for row in written
            )  # the other rows, unchanged
            entry = manifest["tasks"][task]["lengths"][label]
            assert entry.get("unlabelled_rows", []) == needing
            if needing:
                expected_left_out.setdefault(task, {})[label] = len(needing)
                verb = "needs" if len(needing) == 1 else "need"
                line = f"shortfall: {task} {label}: {len(written)} of 4 rows ({len(needing)} row{'s' if len(needing) > 1 else ''} {verb} a chunk"
                assert line in output
    assert (
        expected_left_out.get("organizing", {}).get("8k") == 1
    )  # the test exercises what it means to
    assert {
        task: {label: n for label, n in by_label.items() if n}
        for task, by_label in manifest["annotator"]["rows_left_out"].items()
    } == expected_left_out
    assert manifest["options"]["annotator"]["allow_unlabelled"] is True
    inspected = CliRunner().invoke(main, ["inspect", str(out)])
    assert (
        f"{sum(n for by in expected_left_out.values() for n in by.values())} rows left out (--allow-unlabelled)"
        in inspected.output
    )
    with OpenAIStub(
        annotator
    ) as server:  # every label comes now; the finished files keep their left-out rows, and say so
        code, output = run(
            *args,
            "--out",
            str(out),
            "--annotator-base-url",
            server.base_url,
            "--allow-unlabelled",
            "--resume",
        )
    assert code == 0, output
    resumed = json.loads((out / "manifest.json").read_text())
    assert (
        "unlabelled" not in resumed["annotator"]
        and resumed["annotator"]["rows_left_out"] == manifest["annotator"]["rows_left_out"]
    )
    assert resumed["shortfalls"] == manifest["shortfalls"]


def test_resume_with_other_options_is_refused_before_any_annotator_call(mirror, stub, tmp_path):
    out = tmp_path / "out"
    args = (
        "--suite",
        "ethic",
        "--tasks",
        "organizing",
        "--sources",
        str(mirror),
        "--rows",
        "1",
        "--lengths",
        "4k",
        "--out",
        str(out),
        "--annotator-base-url",
        stub.base_url,
    )
    code, output = run(*args, "--annotator-model", "stub-model")
    assert code == 0, output
    before = len(stub.requests)
    code, output = run(*args, "--annotator-model", "another-model", "--resume")
    assert code != 0 and "changed --annotator-model" in output and "Traceback" not in output
    assert (
        len(stub.requests) == before
    )  # not even the preflight: the labels of another model would be paid for nothing


def test_a_reply_that_loops_to_the_budget_is_asked_again_with_the_loop_penalty(
    data, mirror, tmp_path, isolated_cache
):
    texts = books(mirror)
    first = records(data, "organizing", "8k")[0]
    looping = used_chunks(first, texts[first["gold"]["doc_ids"][0]])[1]

    def loops_unless_penalised(body: dict) -> str:
        match = PASSAGE.search(prompt_text(body))
        if match is not None and match.group(1) == looping and not body.get("frequency_penalty"):
            return " ".join(
                ["and"] * (body["max_tokens"] + 5)
            )  # runs to the budget: no sentence, no name
        return annotator(body)

    lengths = ",".join(label for label, _ in LENGTHS)
    args = (
        "--suite",
        "ethic",
        "--tasks",
        ",".join(TASKS),
        "--sources",
        str(mirror),
        "--rows",
        "4",
        "--lengths",
        lengths,
        "--annotator-model",
        "looping-model",
        "--workers",
        "2",
    )
    with OpenAIStub(loops_unless_penalised) as server:
        code, output = run(
            *args,
            "--out",
            str(tmp_path / "once"),
            "--annotator-base-url",
            server.base_url,
            "--annotator-loop-penalty",
            "0",
        )
        assert code != 0 and "got no usable label (truncated reply" in output
        assert not any("frequency_penalty" in body for body in server.bodies)
        asked_before = len(server.bodies)
        out = tmp_path / "out"
        code, output = run(*args, "--out", str(out), "--annotator-base-url", server.base_url)
        assert code == 0, output
        second = [body for body in server.bodies[asked_before:] if "frequency_penalty" in body]
    kinds = {"List every person" in prompt_text(body) for body in second}
    assert second and all(
        body["frequency_penalty"] == 1.0 and body["temperature"] == 0 for body in second
    )
    assert all(PASSAGE.search(prompt_text(body)).group(1) == looping for body in second) and len(
        second
    ) == len(kinds)
    annotator_info = json.loads((out / "manifest.json").read_text())["annotator"]
    assert annotator_info["loop_penalty"] == 1.0
    assert annotator_info["second_asks"] == annotator_info["usable_second_replies"] == len(second)
    same = ("manifest.json", ".longbench100-run.json")  # both name the model
    assert tree(out, skip=same) == tree(
        data, skip=same
    )  # the same labels as a model that never looped
    inspected = CliRunner().invoke(main, ["inspect", str(out)]).output
    assert (
        f"; {len(second)} looping replies asked again (frequency penalty 1.0), {len(second)} usable"
        in inspected
    )
    cached = [
        json.loads(path.read_text())
        for path in (isolated_cache / "annotator").glob("looping-model-*/**/*.json")
    ]
    assert sum(entry.get("frequency_penalty") == 1.0 for entry in cached) == len(second)
    with OpenAIStub(
        loops_unless_penalised
    ) as server:  # a cached label a second ask got is not one a run without it would get
        code, output = run(
            *args,
            "--out",
            str(tmp_path / "again"),
            "--annotator-base-url",
            server.base_url,
            "--annotator-loop-penalty",
            "0",
        )
        assert code != 0 and f"{len(second)} of " in output and "(truncated reply" in output
        assert all("frequency_penalty" not in body for body in server.bodies) and len(
            server.bodies
        ) == len(second)
        assert server.test_bodies  # the server check, answered by the stub itself


def test_a_server_that_refuses_the_second_ask_is_named_with_the_way_out(mirror, tmp_path):
    def refuses_penalties(body: dict):
        if body.get("frequency_penalty"):
            return 400, {
                "error": {
                    "message": "Unsupported parameter: 'frequency_penalty'",
                    "type": "invalid_request_error",
                }
            }
        return (
            " ".join(["and"] * (body["max_tokens"] + 5))
            if PASSAGE.search(prompt_text(body))
            else "OK"
        )

    with OpenAIStub(refuses_penalties) as server:
        code, output = run(
            "--suite",
            "ethic",
            "--tasks",
            "organizing",
            "--sources",
            str(mirror),
            "--rows",
            "1",
            "--lengths",
            "4k",
            "--out",
            str(tmp_path / "out"),
            "--annotator-model",
            "strict-model",
            "--annotator-base-url",
            server.base_url,
        )
    assert code != 0 and "Traceback" not in output
    assert (
        "(truncated reply; second ask failed (HTTP 400" in output
        and "--annotator-loop-penalty 0" in output
    )
    assert not list((tmp_path / "out").glob("*/*.jsonl"))


def test_the_api_annotator_options_default_as_generate_does():
    import click

    from longbench100.llm.options import JudgeOptions

    defaults = {
        param.name: param.default
        for param in main.get_command(click.Context(main), "generate").params
    }
    options = JudgeOptions.for_annotator("m")
    assert (
        options.loop_penalty,
        options.concurrency,
        options.max_tokens,
        options.base_url,
        options.api_key_env,
    ) == (
        defaults["annotator_loop_penalty"],
        defaults["annotator_concurrency"],
        defaults["annotator_max_tokens"],
        defaults["annotator_base_url"],
        defaults["annotator_api_key_env"],
    )
    assert options.loop_penalty > 0 and JudgeOptions("m").loop_penalty == 0  # a judge asks once


def test_every_sample_has_its_control_twins(data: Path) -> None:
    for task in TASKS:
        for label, _ in LENGTHS:
            real = records(data, task, label)
            twins = records(data / "controls", task, label)
            assert sorted((twin["twin_of"], twin["control"]) for twin in twins) == sorted(
                (record["id"], kind)
                for record in real
                for kind in ("gold_removed", "context_swapped")
            )
            prompts = {record["id"]: record["prompt"] for record in real}
            assert all(twin["prompt"] != prompts[twin["twin_of"]] for twin in twins)
            for twin in twins:  # the gold-removed twin holds no part of the row's own document
                if twin["control"] == "gold_removed":
                    assert twin["filled_from"]
                    assert not {entry["id"] for entry in twin["filled_from"]} & set(
                        twin["gold"]["doc_ids"]
                    )
