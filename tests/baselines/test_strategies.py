"""The no-model shortcut baselines: reading prompts, each family's strategy, limits, the check, and the
task constructions it closed (kv decoys, independent star options, repeats in passage_count,
same-source passages in passage_retrieval)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.baselines.check import (
    CONTROL_LIMIT,
    SAME_SOURCE_ANSWERS,
    _other_rows_answers,
    _record_chances,
    _same_source_answers,
    _score,
    run_baselines,
)
from longbench100.baselines.prompt_view import PromptView, read_prompt
from longbench100.baselines.strategies import (
    BASELINES,
    ETHIC_ORGANIZING,
    EXACT_COPIES,
    HELMET_ICL,
    NEEDLE_FORMATS,
    RULER_WORD_LISTS,
    STAR_SENTENCES,
    Attempt,
    baselines_for,
    chance_answers,
)
from longbench100.catalog.shortcut_limits import limit_from_record, parse_limit
from longbench100.catalog.suites import load_all_suites
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.tasks.counting_stars import counts_for_row
from tests.conftest import SHARED_SOURCES
from tests.support.generate_helpers import reseal

KV_PROMPT = """The text below mixes ordinary passages with key-value records.

Passage 1:
Some news text here.

Record: the key "a" has the value "b".

Passage 2:
More text.

Record: the key "b" has the value "c".

Record: the key "c" has the value "d".

Task: start from the key "a". Look up its value; keep following the records for 3 lookups in total.

Final value:"""


def _record(
    task: str,
    question: str = "",
    answers: tuple[str, ...] = ("x",),
    row: int = 0,
    gold: dict | None = None,
    distractors: tuple[dict, ...] | None = None,
) -> DataRecord:
    return DataRecord(
        id=f"{task}-8k-{row:04d}",
        task=task,
        label="8k",
        length=8192,
        row=row,
        answers=answers,
        question=question,
        closed_book_prompt=None,
        gold=gold,
        distractors=distractors,
    )


def _answer(kind: str, name: str, record: DataRecord, prompt: str) -> str | None:
    baseline = next(b for b in BASELINES[kind] if b.name == name)
    return baseline.answer(Attempt(record, read_prompt(prompt), Counter()))


def test_the_view_reads_passages_records_options_and_summaries():
    view = read_prompt(KV_PROMPT)
    assert [p.label for p in view.passages] == ["1", "2"]
    assert view.passages[1].text == "More text."
    assert view.records == (("a", "b"), ("b", "c"), ("c", "d"))
    options = read_prompt(
        "Passage 1:\nText.\n\nQuestion: which?\n\nOption 1: [1, 2]\nOption 2: [3, 4]\n\nOption:"
    )
    assert options.options == (("1", "[1, 2]"), ("2", "[3, 4]"))
    ordering = read_prompt(
        "Section 1:\nAlpha text.\n\nSection 2:\nBeta text.\n\nSummaries, shuffled:\n[A] beta\n[B] alpha\n\nPut the summaries in order."
    )
    assert [p.text for p in ordering.passages] == ["Alpha text.", "Beta text."]
    assert ordering.summaries == (("A", "beta"), ("B", "alpha"))
    named = read_prompt(
        "You will see passages. Only Passage 2 is relevant.\n\nPassage 1:\nx\n\nPassage 2:\ny\n\nQuestion: q"
    )
    assert [p.text for p in named.named_passages()] == ["y"]


def test_the_unused_value_and_the_chain_start_read_a_lone_chain():
    assert _answer("record_value", "unused_value", _record("kv_retrieval"), KV_PROMPT) == "d"
    assert _answer("record_value", "chain_start_value", _record("kv_retrieval"), KV_PROMPT) == "b"


def test_numbers_in_context_picks_the_option_with_the_most_of_its_numbers_in_context():
    prompt = (
        "Passage 1:\nIn 1998 the 12 boats left. The little penguin counted 7 stars.\n\n"
        "Question: which list?\n\n"
        "Option 1: [7, 12, 40]\nOption 2: [12, 7, 1998]\nOption 3: [7, 12, 1998]\n\nOption:"
    )
    record = _record("counting_stars")
    assert (
        _answer("option", "numbers_in_context", record, prompt) == "2"
    )  # first of the two whole matches
    assert (
        _answer("option", "numbers_in_context", record, prompt.replace("1998", "1999", 1)) == "1"
    )  # all 2 of 3


def test_option_consensus_finds_the_centre_of_perturbed_options():
    prompt = "Question: which list?\n\nOption 1: [5, 6, 7, 8]\nOption 2: [5, 6, 7, 9]\nOption 3: [6, 5, 7, 8]\nOption 4: [5, 1, 7, 8]\n\nOption:"
    assert _answer("option", "option_consensus", _record("counting_stars"), prompt) == "1"
    assert _answer("option", "option_position_consensus", _record("counting_stars"), prompt) == "1"


def test_longest_and_shortest_passage():
    prompt = "Passage 1:\nA middling text here.\n\nPassage 2:\nShort.\n\nPassage 3:\nThe longest text of the three.\n\nSummary:\nx"
    assert _answer("passage_number", "longest_passage", _record("passage_retrieval"), prompt) == "3"
    assert (
        _answer("passage_number", "shortest_passage", _record("passage_retrieval"), prompt) == "2"
    )


def test_openings_order_and_outlier():
    prompt = (
        "Section 1:\nThe storm hit the coast at dawn. More follows.\n\nSection 2:\nThe court ruled on the tax case today.\n\n"
        "Summaries, shuffled:\n[A] A court ruling on tax.\n[B] A storm on the coast.\n\nPut the summaries in order."
    )
    assert _answer("order", "section_openings", _record("document_organizing"), prompt) == "B > A"
    assert _answer("order", "alphabetical_order", _record("document_organizing"), prompt) == "A > B"
    odd = (
        "\n\n".join(
            f"Passage {i}:\n{text}"
            for i, text in enumerate(
                [
                    "football match goal score team",
                    "football team coach goal season",
                    "patent claim apparatus valve housing",
                    "team score football league match",
                ],
                start=1,
            )
        )
        + "\n\nSummary:\nx"
    )
    assert _answer("passage_number", "outlier_passage", _record("passage_retrieval"), odd) == "3"


@pytest.mark.parametrize(
    "value, ceiling", [("chance + 0.10", 0.35), ("chance+0.2", 0.45), (0.36, 0.36), (0, 0.0)]
)
def test_limits_parse(value, ceiling):
    assert parse_limit(value, [], "suite").ceiling(0.25) == pytest.approx(ceiling)
    assert limit_from_record(parse_limit(value, ["lexical"], "suite").record()).ceiling(
        0.25
    ) == pytest.approx(ceiling)


@pytest.mark.parametrize(
    "value, reported, message",
    [
        ("chance", [], 'write "chance + 0.10"'),
        (1.5, [], "a number from 0 to 1"),
        ("chance + 0.1", ["guessing"], "unknown family 'guessing'"),
        ("chance + 0.1", "lexical", "must be a list"),
    ],
)
def test_bad_limits_are_one_line_errors(value, reported, message):
    with pytest.raises(UserError, match=re.escape(message)):
        parse_limit(value, reported, "suite")


def test_every_packaged_suite_task_has_a_limit_and_a_baseline():
    from longbench100.baselines.strategies import ANSWER_KINDS

    for suite in load_all_suites():
        assert set(suite.shortcut_limits) == set(suite.tasks)
        assert all(task in ANSWER_KINDS for task in suite.tasks), suite.name


def test_star_options_are_not_built_around_the_answer():
    hits = 0
    for row in range(300):
        _, options, right = counts_for_row(7, row)
        lists = [re.findall(r"\d+", text) for text in options[:-1]]
        agreement = [sum(sum((Counter(a) & Counter(b)).values()) for b in lists) for a in lists]
        hits += agreement.index(max(agreement)) + 1 == right
    assert hits / 300 < 0.35  # chance is 0.25; perturbations of the answer gave 0.73


def _generate(
    out: Path,
    tasks: tuple[str, ...],
    lengths=(("2k", 2048), ("4k", 4096)),
    rows: int = 12,
    sources: str = "demo",
    check: bool = False,
) -> dict:
    return run_generate(
        GenerateOptions(
            tasks=tasks,
            lengths=lengths,
            rows=rows,
            seed=3,
            tokenizer="cl100k_base",
            out=out,
            sources=sources,
            workers=1,
            check_shortcuts=check,
        ),
        echo=lambda _: None,
        progress=False,
    )


def test_kv_chain_answers_are_never_chain_ends_and_decoys_grow_with_length(tmp_path: Path):
    _generate(
        tmp_path / "d", ("kv_retrieval_chain",), lengths=(("2k", 2048), ("16k", 16384)), rows=6
    )
    sizes = {}
    for path in sorted((tmp_path / "d" / "kv_retrieval_chain").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            records = dict(
                re.findall(
                    r'Record: the key "([0-9a-f-]{36})" has the value "([0-9a-f-]{36})"',
                    record["prompt"],
                )
            )
            value = re.search(r'start from the key "([^"]+)"', record["prompt"]).group(1)
            for _ in range(3):
                value = records[value]
            assert value == record["answers"][0]
            assert value in records  # the answer is itself a key: it is no chain end
            sizes.setdefault(path.stem, []).append(len(records))
    assert min(sizes["16k"]) > max(sizes["2k"])


def test_the_check_passes_on_the_rebuilt_tasks_and_fails_on_a_lone_chain(tmp_path: Path):
    manifest = _generate(tmp_path / "d", ("kv_retrieval", "counting_stars"), check=True)
    assert manifest["shortcuts"]["passed"], manifest["shortcuts"]
    run = run_baselines(tmp_path / "d")
    assert {cell.task for cell in run.cells} == {"kv_retrieval", "counting_stars"}
    # the same folder with the kv prompts cut back to the paper's three records alone: the chain's
    # start gives the answer
    path = tmp_path / "d" / "kv_retrieval" / "2k.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        chain = record["gold"]["chain"]
        kept = {f'Record: the key "{a}" has the value "{b}".' for a, b in zip(chain, chain[1:])}

        def keep_asked(match: re.Match, kept: set[str] = kept) -> str:
            return match.group(0) if match.group(0) in kept else ""

        record["prompt"] = re.sub(
            r'Record: the key "[^"]+" has the value "[^"]+"\.', keep_asked, record["prompt"]
        )
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    reseal(tmp_path / "d")
    result = CliRunner().invoke(
        main, ["baselines", str(tmp_path / "d"), "--check", "--out", str(tmp_path / "b.json")]
    )
    assert result.exit_code == 1, result.output
    assert re.search(r"kv_retrieval +2k .*chain_start_value 1\.000 +OVER", result.output)
    written = json.loads((tmp_path / "b.json").read_text())
    assert not written["aggregates"]["passed"]
    shown = CliRunner().invoke(
        main, ["show", str(tmp_path / "b.json"), "--id", "kv_retrieval-2k-0000"]
    )
    assert shown.exit_code == 0 and "baseline chain_start_value" in shown.output


def test_generate_records_the_check_and_inspect_shows_it(tmp_path: Path):
    _generate(tmp_path / "d", ("single_doc_qa",), rows=6, check=True)
    assert json.loads((tmp_path / "d" / "manifest.json").read_text())["shortcuts"]["passed"]
    shown = CliRunner().invoke(main, ["inspect", str(tmp_path / "d")])
    assert "shortcut check: passed on 2 task-lengths and 4 control cells" in shown.output
    _generate(tmp_path / "e", ("counting_stars",), rows=2)
    assert (
        "shortcut check: not run"
        in CliRunner().invoke(main, ["inspect", str(tmp_path / "e")]).output
    )


def test_baselines_refuses_a_missing_folder_in_one_line(tmp_path: Path):
    result = CliRunner().invoke(main, ["baselines", str(tmp_path / "nowhere")])
    assert (
        result.exit_code == 2
        and result.output.strip() == f"error: {tmp_path / 'nowhere'}: no such folder"
    )


@pytest.mark.skipif(
    not (SHARED_SOURCES / "README.md").exists(),
    reason="../shared/sources (real upstream mirror) is absent",
)
def test_passage_retrieval_pads_with_its_own_source_and_never_shows_one_passage(tmp_path: Path):
    _generate(
        tmp_path / "d",
        ("passage_retrieval",),
        lengths=(("4k", 4096), ("8k", 8192)),
        rows=12,
        sources=str(SHARED_SOURCES),
    )
    for path in sorted((tmp_path / "d" / "passage_retrieval").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            assert len(re.findall(r"^Passage \d+:$", record["prompt"], re.MULTILINE)) >= 2
            sources = {entry["source"] for entry in record["distractors"]}
            assert sources <= {record["gold"]["sources"][0]}, record[
                "id"
            ]  # every source here holds twice 8k


def test_chance_leaves_out_the_option_that_is_never_right():
    prompt = (
        "Passage 1:\nSome text.\n\nQuestion: which list gives the star counts?\n"
        "Option 1: [1, 2, 3, 4]\nOption 2: [5, 6, 7, 8]\n"
        "Option 3: [9, 1, 2, 3]\nOption 4: [4, 5, 6, 7]\n"
        "Option 5: The passages do not give enough information to tell."
    )
    record = _record("counting_stars", answers=("2",))
    assert chance_answers(record, partial(read_prompt, prompt), Counter()) == ["1", "2", "3", "4"]


def test_chance_leaves_out_the_cut_filler_passage():
    prompt = (
        "Passage 1:\nAlpha.\n\nPassage 2:\nBeta.\n\nPassage 3:\nGamma.\n\nSummary:\nBeta things."
    )
    record = _record(
        "passage_retrieval",
        answers=("2",),
        gold={"passages": [2]},
        distractors=({"truncated": False}, {"truncated": True}),
    )
    # passage 3 is the cut one
    assert chance_answers(record, partial(read_prompt, prompt), Counter()) == ["1", "2"]
    record = _record(
        "passage_retrieval",
        answers=("3",),
        gold={"passages": [3]},
        distractors=({"truncated": True}, {"truncated": False}),
    )
    assert chance_answers(record, partial(read_prompt, prompt), Counter()) == ["2", "3"]


def test_chance_of_free_text_is_the_score_of_other_rows_answers():
    others = Counter({"Paris": 2, "a red car": 1})
    record = _record("single_doc_qa", answers=("Rome",))
    assert chance_answers(record, partial(read_prompt, "Passage 1:\nText."), others) == [
        "Paris",
        "a red car",
    ]

    def unread() -> PromptView:
        raise AssertionError("a free-text answer's chance read its prompt")

    for task in ("single_doc_qa", "multi_doc_qa", "single_doc_sum", "multi_doc_sum"):
        assert chance_answers(_record(task), unread, others) == ["Paris", "a red car"]


def test_chance_of_section_summaries_answers_every_section_with_other_rows_summaries():
    others = Counter(
        {"Section 1: A storm.\nSection 2: A flood.": 1, "Section 1: A court.\nSection 2: A tax.": 1}
    )
    prompt = "".join(f"Section {n}:\nText {n}.\n\n" for n in (1, 2, 3)) + "Write one summary."
    answers = chance_answers(_record("document_summarizing"), partial(read_prompt, prompt), others)
    # other rows' four summaries, three at a time, each draw going on where the last stopped
    assert answers == [
        "Section 1: A court.\nSection 2: A tax.\nSection 3: A storm.",
        "Section 1: A flood.\nSection 2: A court.\nSection 3: A tax.",
        "Section 1: A storm.\nSection 2: A flood.\nSection 3: A court.",
        "Section 1: A tax.\nSection 2: A storm.\nSection 3: A flood.",
    ]
    assert (
        chance_answers(_record("document_summarizing"), partial(read_prompt, prompt), Counter())
        == []
    )


def test_frequent_in_opening_reads_the_list_not_the_worked_example(tmp_path: Path):
    _generate(tmp_path / "d", ("common_words",), lengths=(("8k", 8192),), rows=2)
    baselines = {baseline.name: baseline for baseline in baselines_for("common_words")}
    for line in (tmp_path / "d" / "common_words" / "8k.jsonl").read_text().splitlines():
        data = json.loads(line)
        record = _record("common_words", answers=tuple(data["answers"]))
        attempt = Attempt(record, read_prompt(data["prompt"]), Counter())
        opening = baselines["frequent_in_opening"].answer(attempt).split(", ")
        assert not set(opening) & set(data["gold"]["example_words"])
        quarter = baselines["frequent_in_first_quarter"].answer(attempt).split(", ")
        # RULER's uniform list: any quarter holds the answer
        assert len(set(quarter) & set(data["answers"])) >= 8


def test_organizing_openings_are_ethics_construct_and_document_organizing_s_are_judged():
    organizing = {b.name: b for b in baselines_for("organizing")}
    documents = {b.name: b for b in baselines_for("document_organizing")}
    assert organizing["section_openings"].anchor == ETHIC_ORGANIZING
    assert documents["section_openings"].anchor is None  # our construction, not ETHIC's
    assert organizing["alphabetical_order"].anchor is None
    assert organizing["section_openings"].answer is documents["section_openings"].answer
    limit = limit_from_record({"limit": "chance + 0.10"})
    on_real = _score(organizing["section_openings"], [1.0, 1.0], limit)
    on_twin = _score(organizing["section_openings"], [1.0, 1.0], CONTROL_LIMIT)
    assert not on_real.judged and on_real.anchor == ETHIC_ORGANIZING
    assert on_twin.judged and on_twin.over(0.5)
    assert _score(documents["section_openings"], [1.0, 1.0], limit).judged


def _json_prompt(values: list[str]) -> str:
    pairs = ", ".join(f'"k{index:035d}": "{value}"' for index, value in enumerate(values))
    return f"JSON data:\n{{{pairs}}}\n\nQuestion: What is the value of the key?\nAnswer:"


def _uuid(number: int) -> str:
    return f"{number:08x}-0000-4000-8000-{number:012x}"


def test_the_placement_strategies_are_in_the_battery_of_their_tasks():
    for task in ("json_kv", "niah_multikey_2", "niah_multikey_3"):
        assert "grid_place_values" in {baseline.name for baseline in baselines_for(task)}
    rag = {baseline.name: baseline for baseline in baselines_for("rag_hard")}
    assert rag["titles_at_score_rise"].family == "position" and "best_sentence" in rag


def test_grid_place_values_finds_a_value_on_the_old_grid_and_misses_one_off_it():
    values = [_uuid(number) for number in range(120)]
    reply = _answer("listed_values", "grid_place_values", _record("json_kv"), _json_prompt(values))
    assert reply is not None and len(reply.split(", ")) == 6  # six UUIDs: about the answer room
    on_grid = {values[round(step * 119 / 5)] for step in range(6)}
    assert set(reply.split(", ")) == on_grid and values[37] not in reply
    needles = "\n".join(
        f"One of the special magic numbers for key-{index} is: {1000000 + index * 7919}."
        for index in range(300)
    )
    prompt = f"Some special magic numbers are hidden.\n{needles}\n\nQuestion: What is it?\nAnswer:"
    reply = _answer("listed_values", "grid_place_values", _record("niah_multikey_2"), prompt)
    assert reply is not None and len(reply.split(", ")) == 11
    assert str(1000000 + 150 * 7919) in reply and str(1000000 + 151 * 7919) not in reply
    few = _json_prompt(values[:5])  # five values, six places: it would list them all
    assert _answer("listed_values", "grid_place_values", _record("json_kv"), few) is None


def _documents_prompt(titles: list[str], bodies: list[str], question: str) -> str:
    documents = "\n\n".join(
        f"Document [{number}] (Title: {title}): {body}"
        for number, (title, body) in enumerate(zip(titles, bodies), 1)
    )
    return f"Answer the question.\n\n{documents}\n\nQuestion: {question}\nAnswer:"


def test_titles_at_score_rise_finds_a_block_inserted_into_falling_scores_and_only_there():
    question = "Which river flows through the old harbour town of Maplewick?"
    words = ["river", "harbour", "town", "flows", "old"]
    # negatives in falling score order: fewer question words the further down the list
    negatives = [
        (f"Negative {index}", " ".join(words[: max(0, 4 - index // 2)]) + " filler text here")
        for index in range(8)
    ]
    gold = [
        ("Maplewick", "Maplewick is an old harbour town; the river Dunmore flows through it."),
        ("Dunmore", "The Dunmore is a river."),
    ]
    shown = negatives[:5] + gold + negatives[5:]
    prompt = _documents_prompt([t for t, _ in shown], [b for _, b in shown], question)
    record = _record("rag_hard", question=question, answers=("Dunmore",))
    assert _answer("retrieved_qa", "titles_at_score_rise", record, prompt) == "Maplewick; Dunmore"
    mixed = [negatives[index] for index in (3, 7, 0, 5)] + gold
    mixed += [negatives[index] for index in (1, 6, 2, 4)]  # a random order: nothing to read
    prompt = _documents_prompt([t for t, _ in mixed], [b for _, b in mixed], question)
    assert _answer("retrieved_qa", "titles_at_score_rise", record, prompt) is None
    assert _answer("retrieved_qa", "titles_at_score_rise", record, KV_PROMPT) is None


def test_copy_question_replies_the_question_on_every_free_text_qa_task():
    for task in ("single_doc_qa", "multi_doc_qa", "rag_hard", "long_doc_qa", "qa_1", "qa_2"):
        copy = {b.name: b for b in baselines_for(task)}["copy_question"]
        assert copy.anchor is None  # our items, judged everywhere
        record = _record(task, question="Which is older, Aspirin or Ibuprofen?")
        attempt = Attempt(record, read_prompt("Passage 1:\nText.\n\nAnswer:"), Counter())
        assert copy.answer(attempt) == "Which is older, Aspirin or Ibuprofen?"


WORDS_PROMPT = (
    "Below is a numbered list of words. First, a short worked example.\n\n1. zeta\n2. eta\n\n"
    "Question: what are the 3 most common words in the list above? Reply with the 3 words only."
    "\n\nAnswer: zeta, eta\n\nNow the list to work on.\n\n"
    "1. alpha\n2. beta\n3. alpha\n4. gamma\n5. delta\n6. gamma\n\n"
    "Question: what are the 3 most common words in the list above? Reply with the 3 words only."
)


def test_distinct_words_read_the_list_from_either_end_and_are_rulers_construct():
    record = _record("common_words")
    first = _answer("words", "first_distinct_words", record, WORDS_PROMPT)
    last = _answer("words", "last_distinct_words", record, WORDS_PROMPT)
    assert first == "alpha, beta, gamma"  # not the instruction's or the worked example's words
    assert last == "gamma, delta, alpha"
    for task in ("common_words", "frequent_words"):
        named = {b.name: b for b in baselines_for(task)}
        assert named["first_distinct_words"].anchor == RULER_WORD_LISTS
        assert named["last_distinct_words"].anchor == RULER_WORD_LISTS


def test_numbers_in_order_picks_the_option_the_star_counts_spell_out():
    prompt = (
        "Passage 1:\nThe little penguin counted 40 stars in 1998.\n\n"
        "Passage 2:\nThe little penguin counted 7 stars, then 12 more.\n\n"
        "Question: which list?\n\n"
        "Option 1: [7, 12, 40]\nOption 2: [12, 40, 7]\nOption 3: [40, 7, 12]\n\nOption:"
    )
    assert _answer("option", "numbers_in_order", _record("counting_stars"), prompt) == "3"
    no_stars = "Passage 1:\nNo counts here.\n\nQuestion: which list?\n\nOption 1: [5]\n\nOption:"
    assert _answer("option", "numbers_in_order", _record("counting_stars"), no_stars) is None
    named = {b.name: b for b in baselines_for("counting_stars")}
    assert named["numbers_in_order"].anchor == STAR_SENTENCES
    assert named["numbers_in_context"].anchor is None  # our construction: still judged


def test_distinct_passages_counts_exact_copies_once():
    prompt = (
        "Below are 3 numbered paragraphs.\n\nParagraph 1:\nOne.\n\nParagraph 2:\nTwo.\n\n"
        "Paragraph 3:\nOne.\n\nHow many distinct paragraphs are there? Reply with a single number."
        "\n\nNumber of distinct paragraphs:"
    )
    record = _record("passage_count")
    assert _answer("count", "distinct_passages", record, prompt) == "2"
    assert {b.name: b for b in baselines_for("passage_count")}[
        "distinct_passages"
    ].anchor == EXACT_COPIES


def test_needle_shaped_values_list_every_needle_value_the_question_does_not_name():
    uuid = "0f8e2b1c-1a2b-4c3d-8e9f-0123456789ab"
    prompt = (
        "Some essay. One of the special magic numbers for apple is: 1234567. More essay of 2024.\n"
        f'VAR ABCDE = 12345\nVAR FGHIJ = VAR ABCDE\n{{"{uuid}": "x"}}\n'
        "One of the special magic numbers for pear is: 7654321.\n\n"
        "Question: what is the special magic number for pear? 7654321 is not an answer here."
    )
    record = _record("niah_single_1", question="the numbers for pear besides 7654321")
    answer = _answer("needle", "needle_shaped_values", record, prompt)
    assert answer == f"1234567, ABCDE, FGHIJ, {uuid}"
    for task in ("niah_single_1", "variable_tracking", "niah_multikey_2", "json_kv"):
        named = {b.name: b for b in baselines_for(task)}
        assert named["needle_shaped_values"].anchor == NEEDLE_FORMATS


def test_nearest_demonstration_reads_the_label_of_the_most_alike_example():
    prompt = (
        "Below are examples of questions, each followed by a label number.\n\n"
        "text: How far is the moon from the earth?\nlabel: 3\n\n"
        "text: Who wrote the novel Emma?\nlabel: 5\n\n"
        "text: Who wrote the play Hamlet?\nlabel:"
    )
    for task in ("icl_trec_coarse", "icl_trec_fine", "icl_banking77", "icl_clinc150"):
        assert _answer("label", "nearest_demonstration", _record(task), prompt) == "5"
        named = {b.name: b for b in baselines_for(task)}
        assert named["nearest_demonstration"].anchor == HELMET_ICL


def test_free_text_chance_draws_other_answers_of_the_rows_own_source_when_it_has_enough():
    def row(number: int, source: str, answer: str) -> DataRecord:
        return replace(_record("single_doc_qa", answers=(answer,), row=number), source=source)

    long_rows = [row(n, "calls", f"revenue grew because of sales {n}") for n in range(6)]
    short_rows = [row(6 + n, "trivia", f"Name{n}") for n in range(6)]
    few = [row(12, "rare", "a"), row(13, "rare", "b")]
    records = long_rows + short_rows + few
    priors = _other_rows_answers(records)
    narrowed = _same_source_answers(records, priors)
    assert set(narrowed[("single_doc_qa", 0)]) == {r.answers[0] for r in long_rows[1:]}
    assert set(narrowed[("single_doc_qa", 6)]) == {r.answers[0] for r in short_rows[1:]}
    # a source with fewer than SAME_SOURCE_ANSWERS other answers keeps the task's
    assert narrowed[("single_doc_qa", 12)] == priors[("single_doc_qa", 12)]
    assert len(few) < SAME_SOURCE_ANSWERS


def test_chance_answers_are_scored_in_process(monkeypatch):
    from longbench100.scoring import grading

    records = [
        _record("single_doc_sum", answers=(f"summary number {row} of a text",), row=row)
        for row in range(3)
    ]
    asked: list[int | None] = []
    original = grading.rouge_l_many

    def spy(pairs, variant, *, workers=None):
        asked.append(workers)
        return original(pairs, variant, workers=workers)

    monkeypatch.setattr(grading, "rouge_l_many", spy)
    priors = _other_rows_answers(records)
    chances = _record_chances(
        [(record, lambda: read_prompt("")) for record in records], priors, None
    )
    assert asked == [1]
    assert set(chances) == {record.id for record in records}
    assert all(0 < chance < 1 for chance in chances.values())


def test_count_chance_splits_the_prompt_only_without_the_drawn_range():
    def unread() -> PromptView:
        raise AssertionError("the prompt was split")

    drawn = _record("passage_count", answers=("3",), gold={"possible": [2, 4]})
    assert chance_answers(drawn, unread, Counter()) == ["2", "3", "4"]
    announced = _record("passage_count", answers=("3",), gold={})
    prompt = "Below are 3 numbered paragraphs.\n\nParagraph 1:\nA.\n\nParagraph 2:\nB."
    assert chance_answers(announced, partial(read_prompt, prompt), Counter()) == ["1", "2", "3"]
    with pytest.raises(AssertionError, match="split"):
        chance_answers(announced, unread, Counter())
