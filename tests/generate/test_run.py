"""The generator on the synthetic mirror: budgets, answers, determinism, pairing, resume and errors."""

from __future__ import annotations

import json
import random
import re
import shutil
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.suites import DEFAULT_SUITE, load_suite
from longbench100.catalog.task_info import TASKS
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.core.paths import packaged_dir
from longbench100.generate import run as run_module
from longbench100.generate.manifest import FINISHED_LOG
from longbench100.generate.options import GenerateOptions, LengthResult
from longbench100.generate.planner import LengthPlan
from longbench100.generate.run import _report_shortfall, run_generate
from longbench100.sources.corpus import load_corpus
from longbench100.sources.locations import resolve_location
from longbench100.sources.registry import load_registry
from longbench100.text.tokenization import load_tokenizer
from tests.support.fixture_mirror import write_mirror
from tests.support.generate_helpers import reseal

PAPER_TASKS = load_suite(DEFAULT_SUITE).tasks  # the eight tasks of the paper

LENGTHS = (("2k", 2048), ("3000", 3000))


def _options(mirror: Path, out: Path, **changes) -> GenerateOptions:
    base = dict(
        tasks=PAPER_TASKS,
        lengths=LENGTHS,
        rows=4,
        seed=11,
        tokenizer="cl100k_base",
        out=out,
        sources=str(mirror),
        workers=1,
    )
    base.update(changes)
    return GenerateOptions(**base)


def _records(out: Path, task: str, label: str) -> list[dict]:
    return [json.loads(line) for line in (out / task / f"{label}.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def generated(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "out"
    run_generate(_options(mirror, out), echo=lambda _: None, progress=False)
    return out


def _passages(prompt: str, word: str = "Passage") -> dict[int, str]:
    """Numbered blocks of a prompt whose passages are single paragraphs (passage_count's synthetic ones are not: see below)."""
    parts = re.split(rf"(?m)^{word} (\d+):\n", prompt)
    bodies = [body for body in parts[2::2]]
    return {
        int(number): body.rsplit("\n\n", 1)[0] if index < len(bodies) - 1 else body
        for index, (number, body) in enumerate(zip(parts[1::2], bodies))
    }


def test_every_prompt_is_within_budget_recounted_and_fills_it(generated: Path) -> None:
    tokenizer = load_tokenizer()
    for task in PAPER_TASKS:
        for label, budget in LENGTHS:
            records = _records(generated, task, label)
            assert len(records) == 4, (task, label)
            fills = []
            for record in records:
                recount = tokenizer.count(record["prompt"])
                assert recount == record["prompt_tokens"] <= budget == record["length"]
                fills.append(recount / budget)
            assert min(fills) > 0.9 and statistics.median(fills) >= 0.98, (task, label, fills)


def test_records_follow_the_schema(generated: Path) -> None:
    record = _records(generated, "single_doc_qa", "2k")[1]
    assert list(record) == [
        "id",
        "task",
        "length",
        "label",
        "row",
        "prompt",
        "prompt_tokens",
        "answers",
        "closed_book_prompt",
        "metric",
        "question",
        "gold",
        "distractors",
        "seed",
    ]
    assert (
        record["id"] == "single_doc_qa-2k-0001"
        and record["metric"] == "qa_judge"
        and record["seed"] == 11
    )
    assert 0 <= record["gold"]["depth"] <= 1
    assert all(set(d) == {"source", "id", "truncated"} for d in record["distractors"])
    manifest = json.loads((generated / "manifest.json").read_text())
    assert manifest["files"]["single_doc_qa/2k.jsonl"]["rows"] == 4
    assert manifest["tokenizer"]["identity"] == "tiktoken:cl100k_base"
    assert set(manifest["sources"]["hotpotqa"]["files"]) == {"data.zip:data/hotpotqa.jsonl"}
    assert manifest["sources"]["hotpotqa"]["clean"] == ["html", "wiki_markup", "detokenize"]
    assert (
        manifest["sources"]["cnn_dailymail"]["clean"] == ["detokenize"]
        and manifest["sources"]["cnn_dailymail"]["answerable"] == []
    )
    assert manifest["sources"]["hotpotqa"]["answerable"] == [
        "question_standalone",
        "answer_grounded",
        "answer_not_in_question",
    ]
    assert all(isinstance(facts["unanswerable"], dict) for facts in manifest["sources"].values())


def test_passage_count_answer_is_the_number_of_distinct_paragraphs(generated: Path) -> None:
    for record in _records(generated, "passage_count", "3000"):
        blocks = re.split(
            r"(?m)^Paragraph \d+:\n", record["prompt"].rsplit("\n\nHow many distinct", 1)[0]
        )[1:]
        texts = [block.removesuffix("\n\n") for block in blocks]
        assert len(texts) == record["gold"]["total"] > record["gold"]["distinct"]
        assert int(record["answers"][0]) == len(set(texts)) == record["gold"]["distinct"]


def test_gold_passages_hold_the_ground_truth_and_instructions_name_them(
    generated: Path, mirror: Path
) -> None:
    from longbench100.sources.corpus import load_corpus
    from longbench100.sources.locations import resolve_location

    corpus = load_corpus(resolve_location(str(mirror)), load_tokenizer(), progress=False)
    items = {item.id: item for data in corpus.sources.values() for item in data.items}
    for task in (
        "passage_retrieval",
        "single_doc_qa",
        "multi_doc_qa",
        "single_doc_sum",
        "multi_doc_sum",
    ):
        for record in _records(generated, task, "2k"):
            item = items[record["gold"]["item_ids"][0]]
            assert sorted(record["gold"]["doc_ids"]) == sorted(item.doc_ids)
            gold_texts = [corpus.documents[doc_id].text for doc_id in record["gold"]["doc_ids"]]
            for number, text in zip(record["gold"]["passages"], gold_texts):
                assert f"Passage {number}:\n{text}\n\n" in record["prompt"]
            distractor_ids = [d["id"] for d in record["distractors"]]
            assert len(distractor_ids) == len(set(distractor_ids)), "a document appears twice"
            assert not set(distractor_ids) & set(item.doc_ids)
            for d in record["distractors"]:
                if not d["truncated"]:
                    assert record["prompt"].count(corpus.documents[d["id"]].text) == 1
            if task == "passage_retrieval":
                assert (
                    record["answers"] == [str(record["gold"]["passages"][0])]
                    and record["question"] == item.summary
                )
            numbers = record["gold"]["passages"]
            named = (
                f"Passage {numbers[0]}"
                if len(numbers) == 1
                else f"Passages {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"
            )
            query_focused = bool(item.question) and not item.question.startswith(
                "Please summarize"
            )  # the mirror's generic request
            instruction = {
                "single_doc_qa": f"Using only {named}, answer the question",
                "single_doc_sum": f"Using only {named}, respond to this request: {item.question}"
                if query_focused
                else f"Write a concise summary of {named},",
                "multi_doc_qa": f"Combine what {named} say"
                if len(numbers) > 1
                else f"Using only {named}, answer the question",
                "multi_doc_sum": f"Using only {named}, respond to this request: {item.question}"
                if query_focused
                else f"combines the news in {named},"
                if len(numbers) > 1
                else f"summary of the news in {named},",
            }.get(task)
            if instruction:
                assert instruction in record["prompt"], (task, instruction)
            if task.endswith("_sum"):
                assert (
                    record["question"] == item.question
                    if query_focused
                    else record["question"].startswith("Summarise") and named in record["question"]
                )
                assert "address this request" not in record["prompt"]
            if task == "single_doc_sum":
                assert ("covering its main points" in record["prompt"]) != query_focused
            if TASKS[task].closed_book:
                assert (
                    item.question in record["closed_book_prompt"]
                    and "Passage 1:" not in record["closed_book_prompt"]
                )
                assert record["answers"] == list(item.answers)


def test_rows_are_paired_across_lengths(generated: Path) -> None:
    for task in ("single_doc_qa", "multi_doc_qa", "passage_retrieval"):
        short, long = _records(generated, task, "2k"), _records(generated, task, "3000")
        for a, b in zip(short, long):
            assert a["gold"]["paired"] and a["gold"]["item_ids"] == b["gold"]["item_ids"]
    kv_short, kv_long = (
        _records(generated, "kv_retrieval", "2k"),
        _records(generated, "kv_retrieval", "3000"),
    )
    assert [r["gold"]["chain"] for r in kv_short] == [r["gold"]["chain"] for r in kv_long]


def test_manifest_counts_rows_per_source_and_every_source_gets_its_share(generated: Path) -> None:
    manifest = json.loads((generated / "manifest.json").read_text())
    for task in PAPER_TASKS:
        for label, _ in LENGTHS:
            facts = manifest["tasks"][task]["lengths"][label]
            records = _records(generated, task, label)
            if facts["eligible_items"] is None:
                assert facts["sources"] is None
                continue
            counted = {name: 0 for name in facts["sources"]}
            for record in records:
                counted[record["gold"]["sources"][0]] += 1
            assert facts["sources"] == counted and sum(counted.values()) == facts["rows"], (
                task,
                label,
            )
    # multi_doc_qa has four real sources on the mirror and every item fits: one row each of the four rows
    assert manifest["tasks"]["multi_doc_qa"]["lengths"]["2k"]["sources"] == {
        "2wikimqa": 1,
        "hotpotqa": 1,
        "musique": 1,
        "rag_mini_bioasq": 1,
    }


def test_inspect_shows_sources_gold_passages_and_warns_about_a_base_length_without_rows(
    generated: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(main, ["inspect", str(generated)])
    assert result.exit_code == 0, result.output
    assert (
        "rows per source (2k/3000): 2wikimqa 1/1, hotpotqa 1/1, musique 1/1, rag_mini_bioasq 1/1"
        in result.output
    )
    assert (
        "has no rows" not in result.output
    )  # every task has rows at the one base length generated (2k)
    gold = {
        line.split()[0]: line.split()[9]
        for line in result.output.splitlines()
        if line.startswith("multi_doc_qa") or line.startswith("kv_retrieval")
    }
    assert gold["kv_retrieval"] == "0/0/0" and int(gold["multi_doc_qa"].split("/")[0]) >= 1
    emptied = tmp_path / "emptied"
    shutil.copytree(generated, emptied)
    (emptied / "single_doc_qa" / "2k.jsonl").write_text("")
    reseal(emptied)  # as a run that got no row at 2k
    result = CliRunner().invoke(main, ["inspect", str(emptied)])
    assert result.exit_code == 0, result.output
    assert (
        "warning: single_doc_qa has no rows at any base length (2k), so it gets no Base Ability or LongScore: "
        "score it with --base-lengths 3000, or generate a length its items fit"
    ) in result.output


def test_same_options_give_identical_bytes_whatever_the_workers(
    generated: Path, mirror: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(run_module, "SERIAL_BELOW", 0)  # two processes, however small the run
    again = tmp_path / "again"
    run_generate(_options(mirror, again, workers=2), echo=lambda _: None, progress=False)
    for path in sorted(generated.rglob("*")):
        if path.is_file():
            assert path.read_bytes() == (again / path.relative_to(generated)).read_bytes(), path


def test_each_row_is_rebuilt_alone_whatever_the_row_count(
    generated: Path, mirror: Path, tmp_path: Path
) -> None:
    fewer = tmp_path / "fewer"
    run_generate(_options(mirror, fewer, rows=2), echo=lambda _: None, progress=False)
    for path in sorted(fewer.glob("*/*.jsonl")):
        assert (
            path.read_text().splitlines()
            == (generated / path.relative_to(fewer)).read_text().splitlines()[:2]
        ), path


def test_resume_after_a_crash_loses_and_duplicates_nothing(
    generated: Path, mirror: Path, tmp_path: Path
) -> None:
    crashed = tmp_path / "crashed"
    shutil.copytree(generated, crashed)
    (crashed / "manifest.json").unlink()
    final = crashed / "multi_doc_qa" / "3000.jsonl"
    data = final.read_bytes()
    torn = (
        data[: data.index(b"\n", data.index(b"\n") + 1) + 1] + data[data.index(b"\n") + 1 :][:100]
    )
    final.unlink()
    (crashed / "multi_doc_qa" / "3000.jsonl.partial").write_bytes(torn)
    for later in ("single_doc_sum", "multi_doc_sum"):
        shutil.rmtree(crashed / later)
    with pytest.raises(Exception, match="--resume"):
        run_generate(_options(mirror, crashed), echo=lambda _: None, progress=False)
    with pytest.raises(Exception, match="different options"):
        run_generate(
            _options(mirror, crashed, seed=12, resume=True), echo=lambda _: None, progress=False
        )
    run_generate(_options(mirror, crashed, resume=True), echo=lambda _: None, progress=False)
    for path in sorted(generated.rglob("*")):
        # the run's note of finished files is left out: the crash cut two of its lines off
        if path.is_file() and path.name != FINISHED_LOG:
            assert path.read_bytes() == (crashed / path.relative_to(generated)).read_bytes(), path
    assert not list(crashed.rglob("*.partial"))


def test_resume_refuses_a_finished_file_edited_since(
    generated: Path, mirror: Path, tmp_path: Path
) -> None:
    """Issue 47: --resume hashed an edited file into the manifest, and a deleted row came back as a
    shortfall."""
    edited = tmp_path / "edited"
    shutil.copytree(generated, edited)
    final = edited / "multi_doc_qa" / "3000.jsonl"
    final.write_bytes(b"".join(final.read_bytes().splitlines(keepends=True)[1:]))  # one row deleted
    before = {path: path.read_bytes() for path in edited.rglob("*") if path.is_file()}
    changed = r"--resume: .*multi_doc_qa/3000.jsonl changed since this run wrote it"
    with pytest.raises(Exception, match=changed):
        run_generate(_options(mirror, edited, resume=True), echo=lambda _: None, progress=False)
    assert {path: path.read_bytes() for path in edited.rglob("*") if path.is_file()} == before


def test_whole_documents_never_truncates(mirror: Path, tmp_path: Path) -> None:
    out = tmp_path / "whole"
    run_generate(
        _options(mirror, out, tasks=("single_doc_qa", "passage_count"), whole_documents=True),
        echo=lambda _: None,
        progress=False,
    )
    for task in ("single_doc_qa", "passage_count"):
        for record in _records(out, task, "2k"):
            assert not any(d["truncated"] for d in record["distractors"])
            assert record["prompt_tokens"] <= 2048


def test_user_templates_replace_the_packaged_ones(mirror: Path, tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "passage_count.j2").write_text(
        "CUSTOM\n{% for b in blocks %}P{{ b.number }}: {{ b.text }}\n{% endfor %}How many?"
    )
    out = tmp_path / "custom"
    run_generate(
        _options(mirror, out, tasks=("passage_count",), templates=folder),
        echo=lambda _: None,
        progress=False,
    )
    record = _records(out, "passage_count", "2k")[0]
    assert record["prompt"].startswith("CUSTOM\nP1: ") and record["prompt_tokens"] <= 2048


def _chat_tokenizer(tmp_path: Path) -> str:
    """A tiny trained tokenizer with a chat template, saved under ``tmp_path``; returns its ``hf:`` spec."""
    from transformers import PreTrainedTokenizerFast

    from tests.text.test_tokenization import _train_tiny_tokenizer

    path = _train_tiny_tokenizer(tmp_path)
    fast = PreTrainedTokenizerFast(
        tokenizer_file=str(path), bos_token="[BOS]", eos_token="[EOS]", unk_token="[UNK]"
    )
    fast.chat_template = "{% for m in messages %}[BOS] user: {{ m['content'] }} [EOS]{% endfor %}{% if add_generation_prompt %}[BOS] assistant:{% endif %}"
    fast.save_pretrained(tmp_path / "model")
    return f"hf:{tmp_path / 'model'}"


def test_chat_template_and_reserved_output_are_counted(mirror: Path, tmp_path: Path) -> None:
    spec = _chat_tokenizer(tmp_path)
    out = tmp_path / "chat"
    run_generate(
        _options(
            mirror,
            out,
            tasks=("kv_retrieval",),
            tokenizer=spec,
            chat_template=True,
            reserve_output=100,
        ),
        echo=lambda _: None,
        progress=False,
    )
    tokenizer = load_tokenizer(spec, chat=True)
    for record in _records(out, "kv_retrieval", "2k"):
        assert record["prompt"].startswith("[BOS] user: ") and record["prompt"].endswith(
            "[BOS] assistant:"
        )
        assert tokenizer.count_rendered(record["prompt"]) == record["prompt_tokens"] <= 2048 - 100
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["tokenizer"]["chat_template"] is True
        and manifest["tokenizer"]["reserve_output"] == 100
    )


def test_coverage_spans_follow_the_chat_template(mirror: Path, tmp_path: Path) -> None:
    spec = _chat_tokenizer(tmp_path)
    texts = {}
    for chat in (False, True):
        out = tmp_path / f"chat-{chat}"
        run_generate(
            _options(
                mirror,
                out,
                tasks=("rag_hard",),
                tokenizer=spec,
                chat_template=chat,
                reserve_output=100,
            ),
            echo=lambda _: None,
            progress=False,
        )
        # the gold passages and the first characters of the context (the fit may place fewer negatives under the template)
        texts[chat] = [
            [
                record["prompt"][slice(*record["gold"]["spans"]["context"])][:40],
                *(record["prompt"][slice(*span)] for span in record["gold"]["spans"]["gold"]),
            ]
            for record in _records(out, "rag_hard", "2k")
        ]
    assert texts[True] and texts[True] == texts[False]


def test_lengths_nothing_fits_give_fewer_rows_and_say_so(mirror: Path, tmp_path: Path) -> None:
    out = tmp_path / "tiny"
    messages: list[str] = []
    run_generate(
        _options(mirror, out, tasks=("single_doc_sum",), lengths=(("100", 100),)),
        echo=messages.append,
        progress=False,
    )
    assert any("shortfall: single_doc_sum 100: 0 of 4 rows" in m for m in messages)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["shortfalls"][0]["reason"] == "no ground-truth item fits this length"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--tasks", "kv_retrieval,bogus"], "unknown task bogus"),
        (["--lengths", "8kk"], "bad length label '8kk'"),
        (["--lengths", "0"], "bad length label '0'"),
        (["--sources", "/no/such/dir"], "no such folder"),
    ],
)
def test_bad_options_fail_in_one_line_before_any_work(
    args: list[str], message: str, tmp_path: Path, mirror: Path
) -> None:
    argv = [
        "generate",
        "--sources",
        str(mirror),
        "--out",
        str(tmp_path / "o"),
        "--rows",
        "1",
        "--quiet",
        *args,
    ]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert message in result.output and result.output.strip().count("\n") == 0
    assert not (tmp_path / "o").exists()


def test_inspect_reports_fill_depth_and_pairing(generated: Path) -> None:
    result = CliRunner().invoke(main, ["inspect", str(generated)])
    assert result.exit_code == 0, result.output
    line = next(
        line
        for line in result.output.splitlines()
        if line.startswith("single_doc_qa") and " 2k " in line
    )
    assert line.split()[2] == "4"
    assert "rows asking the same item at every length with rows (2k, 3000): 4" in result.output


def test_a_task_without_its_sources_fails_before_any_work(tmp_path: Path) -> None:
    from tests.support.fixture_mirror import write_mirror

    mirror = write_mirror(tmp_path / "m", only={"cnn_dailymail"})
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--sources",
            str(mirror),
            "--tasks",
            "single_doc_qa",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ],
    )
    assert result.exit_code == 2
    assert (
        "task single_doc_qa: none of its real sources (" in result.output
        and "qasper" in result.output
    )
    assert not (tmp_path / "o").exists()


def test_reserved_output_is_respected_when_choosing_items(mirror: Path, tmp_path: Path) -> None:
    out = tmp_path / "reserve"
    manifest = run_generate(
        _options(
            mirror, out, tasks=("single_doc_sum",), lengths=(("2k", 2048),), reserve_output=1500
        ),
        echo=lambda _: None,
        progress=False,
    )
    facts = manifest["tasks"]["single_doc_sum"]["lengths"]["2k"]
    assert facts["rows"] == 4 and facts["failed_rows"] == []
    assert all(
        record["prompt_tokens"] <= 2048 - 1500 for record in _records(out, "single_doc_sum", "2k")
    )


def test_resume_refuses_other_source_files(mirror: Path, tmp_path: Path) -> None:
    from tests.support.fixture_mirror import write_mirror

    out = tmp_path / "run"
    run_generate(
        _options(mirror, out, tasks=("passage_count",)), echo=lambda _: None, progress=False
    )
    other = write_mirror(tmp_path / "other", seed=99)
    with pytest.raises(Exception, match="different options or inputs .*source_files"):
        run_generate(
            _options(other, out, tasks=("passage_count",), resume=True),
            echo=lambda _: None,
            progress=False,
        )


def test_a_passage_given_two_ids_appears_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from longbench100.generate import run as runner
    from longbench100.sources.locations import SourceLocation
    from tests.support.fixture_mirror import paragraph

    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "qa.toml").write_text(
        'name = "qa"\nroles = ["multi_doc_qa:real"]\n[hub]\nrepo_id = "me/qa"\n'
        '[[files]]\npath = "corpus.parquet"\nformat = "parquet"\n[files.document]\ntext = "passage"\nid = "id"\n'
        '[[files]]\npath = "questions.parquet"\nformat = "parquet"\n[files.item]\nkind = "qa"\nquestion = "q"\nanswers = "a"\ndoc_ids = "ids"\n'
    )
    (registry / "pad.toml").write_text(
        'name = "pad"\nroles = ["multi_doc_qa:noisy"]\n[hub]\nrepo_id = "me/pad"\n'
        '[[files]]\npath = "docs.jsonl"\nformat = "jsonl"\n[files.document]\ntext = "text"\n'
    )
    root = tmp_path / "mirror"
    (root / "me" / "qa").mkdir(parents=True)
    (root / "me" / "pad").mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(
            [
                {"id": 1, "passage": "The mill stands by the river."},
                {"id": 2, "passage": "The mill stands by the river."},
                {"id": 3, "passage": "The river runs north."},
            ]
        ),
        root / "me" / "qa" / "corpus.parquet",
    )
    pq.write_table(
        pa.Table.from_pylist([{"q": "Where is the mill?", "a": "by the river", "ids": [1, 2, 3]}]),
        root / "me" / "qa" / "questions.parquet",
    )
    rng = random.Random(3)
    (root / "me" / "pad" / "docs.jsonl").write_text(
        "".join(json.dumps({"text": paragraph(rng, 8)}) + "\n" for _ in range(40))
    )
    monkeypatch.setattr(
        runner, "resolve_location", lambda _: SourceLocation("mirror", root, registry)
    )
    out = tmp_path / "out"
    run_generate(
        _options(root, out, tasks=("multi_doc_qa",), lengths=(("1000", 1000),), rows=1),
        echo=lambda _: None,
        progress=False,
    )
    record = _records(out, "multi_doc_qa", "1000")[0]
    assert record["prompt"].count("The mill stands by the river.") == 1
    assert len(record["gold"]["passages"]) == 2


def test_generate_is_in_the_top_level_python_api(tmp_path: Path) -> None:
    import longbench100
    from longbench100 import GenerateOptions as ExportedOptions
    from longbench100 import run_generate as exported_run

    assert exported_run is run_generate and ExportedOptions is GenerateOptions
    assert {"run_generate", "GenerateOptions"} <= set(longbench100.api.__all__)
    manifest = exported_run(
        ExportedOptions(
            tasks=("kv_retrieval",),
            lengths=(("2k", 2048),),
            rows=2,
            seed=1,
            tokenizer="cl100k_base",
            out=tmp_path / "data",
            sources="demo",
        ),
        echo=lambda line: None,
        progress=False,
    )
    assert manifest["options"]["rows"] == 2
    assert len((tmp_path / "data" / "kv_retrieval" / "2k.jsonl").read_text().splitlines()) == 2


def test_resume_with_other_options_names_them_as_the_user_gave_them(
    mirror: Path, tmp_path: Path
) -> None:
    from longbench100.core.errors import UserError

    out = tmp_path / "run"
    run_generate(
        _options(mirror, out, tasks=("passage_count",)), echo=lambda _: None, progress=False
    )
    with pytest.raises(UserError) as refused:
        run_generate(
            _options(mirror, out, tasks=("passage_count",), seed=7, resume=True),
            echo=lambda _: None,
            progress=False,
        )
    assert "changed --seed (seed);" in str(refused.value) and "choose an empty --out folder" in str(
        refused.value
    )


def test_a_length_the_padding_cannot_fill_says_where_and_why(tmp_path: Path) -> None:
    registered = set(load_registry(packaged_dir("sources")))
    mirror = write_mirror(tmp_path / "mirror", only=registered - {"narrativeqa"})
    out = tmp_path / "big"
    messages: list[str] = []
    lengths = (("2k", 2048), ("64k", 65536))  # the mirror's distractors: far under 64k
    run_generate(
        _options(mirror, out, tasks=("single_doc_qa",), lengths=lengths, rows=2),
        echo=messages.append,
        progress=False,
    )
    fills = [row["prompt_tokens"] / row["length"] for row in _records(out, "single_doc_qa", "64k")]
    assert max(fills) < 0.99
    corpus = load_corpus(resolve_location(str(mirror)), load_tokenizer("cl100k_base"))
    held: list[dict[str, int]] = []
    for row in _records(out, "single_doc_qa", "64k"):  # far more documents than at 2k, none twice
        placed = [piece["id"] for piece in row["distractors"]]
        small = _records(out, "single_doc_qa", "2k")[row["row"]]
        assert len(set(placed)) == len(placed) > 4 * len(small["distractors"])
        tokens: dict[str, int] = {}
        for doc_id in placed + row["gold"]["doc_ids"]:  # the whole pool is in the prompt
            document = corpus.documents[doc_id]
            tokens[document.source] = tokens.get(document.source, 0) + document.tokens
        held.append(tokens)
    manifest = json.loads((out / "manifest.json").read_text())
    [entry] = manifest["underfilled"]
    assert held[0] == held[1] == entry["padding_tokens"]
    assert list(entry["padding_tokens"].values()) == sorted(held[0].values(), reverse=True)
    assert entry == {
        "task": "single_doc_qa",
        "label": "64k",
        "rows": 2,
        "fill_min": round(min(fills), 4),
        "fill_max": round(max(fills), 4),
        "length": 65536,
        "padding_tokens": entry["padding_tokens"],
        "unavailable_sources": ["narrativeqa"],
        "reason": entry["reason"],
    }
    pool = sum(held[0].values())
    assert (
        f"too little distinct text for this length, {pool:,} tokens against 65,536 ("
        in (entry["reason"])
    )
    assert entry["reason"].endswith("; not available to this run: narrativeqa")
    [shown] = [message for message in messages if message.startswith("underfilled: ")]
    fill = f"{100 * entry['fill_min']:.1f}%"
    assert shown.startswith(f"underfilled: single_doc_qa 64k: 2 rows fill only {fill}")
    assert shown.endswith(f"% of the length ({entry['reason']})")
    result = CliRunner().invoke(main, ["inspect", str(out)])
    assert shown in result.output.splitlines()


def test_a_length_the_padding_fills_has_no_underfill_note(generated: Path) -> None:
    assert "underfilled" not in json.loads((generated / "manifest.json").read_text())


@pytest.mark.parametrize(
    ("lengths", "message"),
    [
        ("2k,2k", "lengths '2k,2k': 2k given more than once"),
        ("2k,2048", "2k given more than once"),
        ("50", "--lengths 50: too small for any task's prompt"),
        ("50,2k", "--lengths 50: too small for any task's prompt"),
    ],
)
def test_lengths_given_twice_or_too_small_for_any_prompt_are_refused(tmp_path, lengths, message):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--sources",
            "demo",
            "--tasks",
            "kv_retrieval,passage_count",
            "--lengths",
            lengths,
            "--rows",
            "1",
            "--tokenizer",
            "cl100k_base",
            "--out",
            str(out),
        ],
    )
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and message in errors[0], result.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("task", "text", "missing"),
    [
        ("kv_retrieval", "hello", "blocks"),
        ("single_doc_qa", "{% for b in blocks %}{{ b.text }}{% endfor %}", "question"),
        ("niah_single_1", "Find {{ keys }}.", "context"),
    ],
)
def test_a_template_without_the_context_or_question_is_refused(tmp_path, task, text, missing):
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / f"{task}.j2").write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--sources",
            "demo",
            "--tasks",
            task,
            "--lengths",
            "2k",
            "--rows",
            "1",
            "--tokenizer",
            "cl100k_base",
            "--templates",
            str(templates),
            "--out",
            str(out),
        ],
    )
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1, result.output
    assert f"{task}.j2: never uses {missing}" in errors[0] and not out.exists()


def test_the_reuse_note_counts_items_or_says_rows_share_a_document() -> None:
    lines: list[str] = []
    result = LengthResult(rows=3, eligible=None, paired_rows=3, reused=2, failed_rows=[])
    _report_shortfall(lines.append, "organizing", "128k", LengthPlan([], None), result, 3)
    _report_shortfall(lines.append, "single_doc_qa", "8k", LengthPlan([], 4), result, 3)
    assert lines == [
        "note: organizing 128k: 2 rows share text of their document with another row",
        "note: single_doc_qa 8k: only 4 eligible items, 2 rows reuse an item",
    ]


def test_a_small_run_builds_its_rows_in_one_process(mirror: Path, tmp_path: Path, monkeypatch):
    pools: list[int] = []
    original = run_module.worker_pool

    def counting_pool(workers, *args, **kwargs):
        pools.append(workers)
        return original(workers, *args, **kwargs)

    monkeypatch.setattr(run_module, "worker_pool", counting_pool)
    small = _options(mirror, tmp_path / "small", tasks=("niah_single_1",), workers=2)
    run_generate(small, echo=lambda _: None, progress=False)
    assert pools == []
    monkeypatch.setattr(run_module, "SERIAL_BELOW", 0)
    run_generate(
        _options(mirror, tmp_path / "pooled", tasks=("niah_single_1",), workers=2),
        echo=lambda _: None,
        progress=False,
    )
    assert pools == [2]


def test_resume_refuses_a_control_twins_file_edited_since(
    generated: Path, mirror: Path, tmp_path: Path
) -> None:
    """A twins file edited by hand was taken as it was: its twins no longer matched their data rows,
    and the manifest recorded the edited file's sha256."""
    edited = tmp_path / "edited"
    shutil.copytree(generated, edited)
    twins = edited / "controls" / "multi_doc_qa" / "3000.jsonl"
    lines = twins.read_bytes().splitlines(keepends=True)
    twins.write_bytes(b"".join(lines[1:]))  # one twin deleted
    before = {path: path.read_bytes() for path in edited.rglob("*") if path.is_file()}
    changed = r"--resume: .*controls/multi_doc_qa/3000.jsonl changed since this run wrote it"
    with pytest.raises(Exception, match=changed):
        run_generate(_options(mirror, edited, resume=True), echo=lambda _: None, progress=False)
    assert {path: path.read_bytes() for path in edited.rglob("*") if path.is_file()} == before


def test_resume_names_a_damaged_control_twins_file_in_one_line(
    generated: Path, mirror: Path, tmp_path: Path
) -> None:
    """A twins file cut mid-record (by a run that kept no note of it) gave a JSON traceback."""
    damaged = tmp_path / "damaged"
    shutil.copytree(generated, damaged)
    (damaged / FINISHED_LOG).unlink()  # as an older version left it: no note of what it wrote
    twins = damaged / "controls" / "multi_doc_qa" / "3000.jsonl"
    twins.write_bytes(twins.read_bytes()[:200])
    damaged_line = r".*controls/multi_doc_qa/3000.jsonl:1: not a JSON record"
    with pytest.raises(UserError, match=damaged_line):
        run_generate(_options(mirror, damaged, resume=True), echo=lambda _: None, progress=False)
