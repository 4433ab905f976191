"""Control twins: every sample's gold-removed and context-swapped twins, and the checks on them."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from longbench100.analysis.prompt_parts import (
    OPTION_OPENINGS,
    gold_block_spans,
    options_in_question,
    split_prompt,
)
from longbench100.baselines.check import CONTROL_MARGIN, REAL, run_baselines
from longbench100.catalog.suites import DEFAULT_SUITE, load_suite
from longbench100.catalog.task_info import reserved_output
from longbench100.fitting.packing import cut_prefix
from longbench100.fitting.refill import PoolText, opening_of, refill_spans
from longbench100.generate.controls import ControlBuilder
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.text.edited_count import Edit, Known, apply_edits
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate_annotated
from tests.support.openai_stub import OpenAIStub
from tests.tasks.test_one_document import annotator
from tests.text.test_segment_count import real_sentences
from tests.text.test_spliced_count import known_text

PAPER_TASKS = load_suite(DEFAULT_SUITE).tasks
SYNTHETIC = ("json_kv", "niah_multikey_2", "variable_tracking", "common_words", "frequent_words")
HELMET_TASKS = ("icl_trec_coarse", "rag_hard", "long_doc_qa")
LENGTHS = (("2k", 2048), ("3000", 3000))


def _options(mirror: Path, out: Path, tasks: tuple[str, ...], **changes) -> GenerateOptions:
    base = dict(
        tasks=tasks,
        lengths=LENGTHS,
        rows=4,
        seed=11,
        tokenizer="cl100k_base",
        out=out,
        sources=str(mirror),
        workers=1,
    )
    return GenerateOptions(**{**base, **changes})


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def generated(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("controls") / "out"
    run_generate(
        _options(mirror, out, PAPER_TASKS + SYNTHETIC), echo=lambda _: None, progress=False
    )
    return out


@pytest.fixture(scope="module")
def helmet_generated(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HELMET's label-mapping, titled-document and per-row answer room tasks, with their twins."""
    out = tmp_path_factory.mktemp("helmet-controls") / "out"
    run_generate(_options(mirror, out, HELMET_TASKS), echo=lambda _: None, progress=False)
    return out


def _twins(out: Path, task: str, label: str, kind: str) -> list[tuple[dict, dict]]:
    """(twin, its sample) for every ``kind`` twin of one task and length."""
    real = {record["id"]: record for record in _lines(out / task / f"{label}.jsonl")}
    return [
        (twin, real[twin["twin_of"]])
        for twin in _lines(out / "controls" / task / f"{label}.jsonl")
        if twin["control"] == kind
    ]


def test_every_sample_gets_both_twins_within_budget_with_its_answer_key(generated: Path) -> None:
    tokenizer = load_tokenizer("cl100k_base")
    manifest = json.loads((generated / "manifest.json").read_text())
    for task in PAPER_TASKS + SYNTHETIC:
        for label, budget in LENGTHS:
            real = {record["id"]: record for record in _lines(generated / task / f"{label}.jsonl")}
            twins = _lines(generated / "controls" / task / f"{label}.jsonl")
            kinds = {(twin["twin_of"], twin["control"]) for twin in twins}
            assert kinds == {
                (sample, kind) for sample in real for kind in ("gold_removed", "context_swapped")
            }, task
            for twin in twins:
                sample = real[twin["twin_of"]]
                assert twin["id"] == f"{sample['id']}-{twin['control']}"
                assert (twin["answers"], twin["question"], twin["row"]) == (
                    sample["answers"],
                    sample["question"],
                    sample["row"],
                )
                assert twin["gold"].get("options") == sample["gold"].get("options")
                assert twin["prompt"] != sample["prompt"]
                assert tokenizer.count(twin["prompt"]) == twin["prompt_tokens"] <= budget
                assert twin["prompt_tokens"] >= 0.9 * sample["prompt_tokens"], twin["id"]
            path = f"controls/{task}/{label}.jsonl"
            assert manifest["controls"]["files"][path]["rows"] == {
                "gold_removed": len(real),
                "context_swapped": len(real),
            }


def test_gold_removed_twin_holds_no_gold_and_keeps_the_rest(generated: Path) -> None:
    for task in PAPER_TASKS + SYNTHETIC:
        real = {record["id"]: record for record in _lines(generated / task / "2k.jsonl")}
        for twin in _lines(generated / "controls" / task / "2k.jsonl"):
            if twin["control"] != "gold_removed":
                continue
            sample = real[twin["twin_of"]]
            parts = split_prompt(task, sample["prompt"], "test", sample["gold"])
            gold_texts = [
                parts.context[a:b] for a, b in gold_block_spans(task, sample["gold"], parts.blocks)
            ]
            for text in gold_texts:
                body = (
                    text.split(":\n", 1)[1] if text.startswith(("Passage ", "Paragraph ")) else text
                )
                assert body.strip() not in twin["prompt"], (twin["id"], body[:80])
            assert twin["prompt"].startswith(parts.head) and twin["prompt"].endswith(parts.tail)


def test_gold_removed_twin_fills_from_the_sources_of_the_prompts_own_padding(
    generated: Path,
) -> None:
    checked = 0
    for task in PAPER_TASKS:
        for label, _ in LENGTHS:
            real = {record["id"]: record for record in _lines(generated / task / f"{label}.jsonl")}
            for twin in _lines(generated / "controls" / task / f"{label}.jsonl"):
                padding = {d["source"] for d in real[twin["twin_of"]].get("distractors") or ()}
                if twin["control"] != "gold_removed" or not padding:
                    continue
                filled = {document["source"] for document in twin["filled_from"]}
                assert filled and filled <= padding, (twin["id"], filled, padding)
                checked += 1
    assert checked


def test_context_swapped_twin_has_another_rows_context_and_this_rows_question(
    generated: Path,
) -> None:
    for task in PAPER_TASKS:
        real = {record["id"]: record for record in _lines(generated / task / "2k.jsonl")}
        for twin in _lines(generated / "controls" / task / "2k.jsonl"):
            if twin["control"] != "context_swapped":
                continue
            sample, other = real[twin["twin_of"]], real[twin["context_of"]]
            own, theirs = (
                split_prompt(task, record["prompt"], "test", record["gold"])
                for record in (sample, other)
            )
            assert other["id"] != sample["id"]
            assert (
                twin["prompt"]
                == own.head
                + own.joint
                + twin["prompt"][len(own.head + own.joint) : -len(own.tail)]
                + own.tail
            )
            assert theirs.context.startswith(
                twin["prompt"][len(own.head + own.joint) : -len(own.tail)][:2000]
            )


def test_data_files_are_the_same_bytes_without_controls(
    generated: Path, mirror: Path, tmp_path: Path
) -> None:
    out = tmp_path / "plain"
    run_generate(
        _options(mirror, out, PAPER_TASKS + SYNTHETIC, controls=False),
        echo=lambda _: None,
        progress=False,
    )
    assert not (out / "controls").exists()
    assert "controls" not in json.loads((out / "manifest.json").read_text())
    for path in sorted(out.glob("*/*.jsonl")):
        assert path.read_bytes() == (generated / path.relative_to(out)).read_bytes(), path


def test_baselines_judge_each_control_kind_against_chance_plus_the_margin(generated: Path) -> None:
    run = run_baselines(generated)
    on = {(cell.task, cell.label): set() for cell in run.cells}
    for cell in run.cells:
        on[(cell.task, cell.label)].add(cell.on)
        if cell.on != REAL:
            assert cell.ceiling == pytest.approx(cell.chance + CONTROL_MARGIN)
            assert all(baseline.judged for baseline in cell.baselines)
    assert all(kinds == {REAL, "gold_removed", "context_swapped"} for kinds in on.values())
    assert {cell.on for cell in run_baselines(generated, controls=False).cells} == {REAL}


def test_the_manifest_chance_is_the_chance_baselines_judge_every_cell_by(generated: Path) -> None:
    """generate and baselines average chance by one mechanism: the manifest's figure is the
    baselines run's, rounded, for real prompts and for both twins (a twin's is its sample's)."""
    recorded = json.loads((generated / "manifest.json").read_text())["controls"]["chance"]
    cells = run_baselines(generated).cells
    assert {(cell.task, cell.label) for cell in cells} == {
        (task, label) for task, labels in recorded.items() for label in labels
    }
    for cell in cells:
        assert round(cell.chance, 4) == recorded[cell.task][cell.label], (cell.task, cell.on)
    assert any(chance > 0 for labels in recorded.values() for chance in labels.values())


@pytest.fixture(scope="module")
def organized(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """organizing at 4k x 4 rows, labelled by the one-document tests' stub annotator."""
    with OpenAIStub(annotator) as server:
        return generate_annotated(
            tmp_path_factory,
            "organized",
            "organized-cache",
            server.base_url,
            "--tasks",
            "organizing",
            "--sources",
            str(mirror),
            "--rows",
            "4",
            "--lengths",
            "4k",
        )


def _sections_and_summaries(prompt: str) -> tuple[str, str]:
    """An organizing prompt cut where its shuffled summaries begin."""
    sections, summaries = prompt.split(OPTION_OPENINGS["organizing"])
    return sections, summaries


def test_organizing_twins_keep_the_shuffled_summaries_and_change_the_sections(
    organized: Path,
) -> None:
    real = {record["id"]: record for record in _lines(organized / "organizing" / "4k.jsonl")}
    twins = _lines(organized / "controls" / "organizing" / "4k.jsonl")
    assert {twin["control"] for twin in twins} == {"gold_removed", "context_swapped"}
    for twin in twins:
        sections, summaries = _sections_and_summaries(real[twin["twin_of"]]["prompt"])
        twin_sections, twin_summaries = _sections_and_summaries(twin["prompt"])
        assert twin_summaries == summaries, twin["id"]  # the options, as the question shows them
        own = re.findall(r"Section \d+:\n(.{60})", sections)
        assert not any(opening in twin_sections for opening in own), twin["id"]


def test_options_in_question_moves_only_what_follows_the_options_opening() -> None:
    prompt = "Intro.\n\nSection 1:\nOne.\n\nSummaries, shuffled:\n[A] Sum.\n\nOrder:"
    spans = {"context": [19, 54], "gold": [[19, 23], [50, 54]]}
    parts = options_in_question(
        "organizing", split_prompt("organizing", prompt, "t", {"spans": spans})
    )
    assert parts.context == "Section 1:\nOne."
    assert parts.tail == "\n\nSummaries, shuffled:\n[A] Sum.\n\nOrder:"
    assert [block.span for block in parts.blocks if block.gold] == [(11, 15)]
    assert parts.head + parts.joint + parts.context + parts.tail == prompt
    untouched = split_prompt("organizing", prompt, "t", {"spans": spans})
    assert options_in_question("section_summarizing", untouched) is untouched


def test_refill_replaces_each_span_by_pool_text_within_the_budget() -> None:
    tokenizer = load_tokenizer("cl100k_base")
    gold = "The vault code is 4417 and only Mara knows it."
    prompt = (
        f"Read this.\n\nSome padding text here. {gold} More padding text follows."
        "\n\nQuestion: what is the code?"
    )
    start = prompt.index(gold)
    pool = [
        (text, tokenizer.count(text), None)
        for text in (
            "Rivers carry sediment to the sea. Deltas form where they slow down.",
            "Bees visit many flowers each day.",
        )
    ]
    budget = tokenizer.count(prompt)

    def count(edits: Sequence[Edit], known: Sequence[Known]) -> int:
        for (start, end, new), (old_tokens, new_tokens) in zip(edits, known, strict=True):
            assert old_tokens in (None, tokenizer.count(prompt[start:end]))
            assert new_tokens in (None, tokenizer.count(new))
        return tokenizer.count(apply_edits(prompt, edits))

    refilled = refill_spans(
        tokenizer,
        count,
        prompt,
        [(start, start + len(gold))],
        PoolText(pool, random.Random(1), None),
        budget,
    )
    assert refilled is not None
    text, tokens = refilled.prompt, refilled.tokens
    assert (
        "4417" not in text
        and text.startswith(prompt[:start])
        and text.endswith(prompt[start + len(gold) :])
    )
    assert tokens == tokenizer.count(text) <= budget
    assert (
        refill_spans(
            tokenizer,
            count,
            prompt,
            [(start, start + len(gold))],
            PoolText([], random.Random(1), None),
            budget,
        )
        is None
    )


class _CountedWhole(ControlBuilder):
    """A control builder that counts every twin whole, as twins were counted before their stored
    counts were used."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.spliced = False


@pytest.mark.parametrize(
    "fixture, tasks",
    [
        ("generated", ("single_doc_qa", "passage_retrieval", "counting_stars", "kv_retrieval")),
        ("generated", ("json_kv", "niah_multikey_2", "common_words")),
        ("helmet_generated", HELMET_TASKS),
    ],
)
def test_twins_counted_from_stored_counts_equal_twins_counted_whole(
    mirror: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    fixture: str,
    tasks: tuple[str, ...],
) -> None:
    generated = request.getfixturevalue(fixture)
    monkeypatch.setattr("longbench100.generate.controls.ControlBuilder", _CountedWhole)
    monkeypatch.setattr("longbench100.generate.controls.read_recipes", lambda _: None)  # built
    out = tmp_path / "out"
    run_generate(_options(mirror, out, tasks), echo=lambda _: None, progress=False)
    for task in tasks:
        for label, _ in LENGTHS:
            path = Path("controls") / task / f"{label}.jsonl"
            assert (out / path).read_bytes() == (generated / path).read_bytes(), path


def _opening_of_whole_text(tokenizer, text: str, tokens: int) -> str:
    """:func:`opening_of` as it was, reading all of ``text``."""
    cut = cut_prefix(tokenizer, text, tokens)
    if cut is not None and cut[1] >= tokens - max(8, tokens // 20):
        return cut[0]
    ids = tokenizer.encode(text[: max(1, tokens) * 8])[: max(0, tokens)]
    opening = tokenizer.decode(ids).rstrip("\ufffd")
    return opening if text.startswith(opening) else opening[:-1]


def test_an_opening_read_from_the_part_it_can_reach_equals_one_read_from_the_whole_text() -> None:
    tokenizer = load_tokenizer("cl100k_base")
    sentences = real_sentences()
    rng = random.Random("opening-of")
    for _ in range(40):
        text = known_text(rng, sentences) * 3
        for tokens in (1, 5, 20, rng.randint(1, 400), rng.randint(1, 2000)):
            expected = _opening_of_whole_text(tokenizer, text, tokens)
            assert opening_of(tokenizer, text, tokens) == expected, (tokens, text[:100])


def test_every_twin_leaves_its_rows_own_answer_room_within_the_length(
    generated: Path, helmet_generated: Path, organized: Path
) -> None:
    """A recount, not the recorded figure: prompt plus the answer room its row was fitted to (its
    own ``gold.answer_tokens``, else the task's reserved output) fits the length."""
    tokenizer = load_tokenizer("cl100k_base")
    checked = 0
    for out, tasks, lengths in (
        (generated, PAPER_TASKS + SYNTHETIC, LENGTHS),
        (helmet_generated, HELMET_TASKS, LENGTHS),
        (organized, ("organizing",), (("4k", 4096),)),
    ):
        for task in tasks:
            for label, length in lengths:
                for twin in _lines(out / "controls" / task / f"{label}.jsonl"):
                    room = twin["gold"].get("answer_tokens") or reserved_output(task, 0)
                    assert tokenizer.count(twin["prompt"]) + room <= length, twin["id"]
                    checked += 1
    assert checked


def _long_answer_row(row: int, context: str, answer_tokens: int) -> dict:
    """A long_doc_qa-shaped record of ``context`` whose answer room is ``answer_tokens``."""
    head, tail = "Read the document.", "\n\nQuestion: what happened?"
    prompt = f"{head}\n\n{context}{tail}"
    start = len(head) + 2
    spans = {"context": [start, start + len(context)], "gold": [[start, start + len(context)]]}
    return {
        "id": f"long_doc_qa-2k-{row:04d}",
        "task": "long_doc_qa",
        "length": 2048,
        "label": "2k",
        "row": row,
        "prompt": prompt,
        "answers": [f"answer {row}"],
        "question": "what happened?",
        "gold": {"answer_tokens": answer_tokens, "spans": spans},
    }


def test_context_swapped_twin_is_cut_to_its_own_rows_answer_room() -> None:
    """Row 0 keeps a larger answer room than row 1, whose longer context it borrows: the twin must
    fit row 0's budget, not row 1's."""
    tokenizer = load_tokenizer("cl100k_base")
    sentence = "The river rose slowly through the night and the town watched it. "
    short, long = sentence * 60, sentence * 130
    records = [_long_answer_row(0, short.strip(), 600), _long_answer_row(1, long.strip(), 100)]
    assert tokenizer.count(records[1]["prompt"]) + 600 > 2048  # the borrowed context is too long
    twins = ControlBuilder([], tokenizer, False, 2048 - 100, 5).records(records, "test")
    swapped = {twin["twin_of"]: twin for twin in twins if twin["control"] == "context_swapped"}
    assert set(swapped) == {record["id"] for record in records}
    for record in records:
        twin = swapped[record["id"]]
        room = record["gold"]["answer_tokens"]
        assert tokenizer.count(twin["prompt"]) == twin["prompt_tokens"] <= 2048 - room
    assert swapped[records[0]["id"]]["prompt_tokens"] > 2048 - 600 - 50  # cut, not emptied


def test_kv_gold_removed_twin_holds_no_record_of_the_asked_chain(generated: Path) -> None:
    """Every record of the asked chain goes (a chain left with fewer records than the decoys would
    point at the answer), so neither the answer nor any later key of the chain is shown."""
    checked = 0
    for label, _ in LENGTHS:
        for twin, sample in _twins(generated, "kv_retrieval", label, "gold_removed"):
            chain = sample["gold"]["chain"]
            assert all(key in sample["prompt"] for key in chain)
            assert not any(key in twin["prompt"] for key in chain[1:]), twin["id"]
            records = re.findall(
                r'Record: the key "([^"]+)" has the value "([^"]+)"', twin["prompt"]
            )
            values = {value for _, value in records}
            starts = [key for key, _ in records if key not in values]
            assert len(records) == 3 * len(starts)  # the decoys only, every chain of three
            checked += 1
    assert checked


def _demonstrations(prompt: str) -> list[tuple[str, str]]:
    """(text, label) of each demonstration of an ICL prompt, the asked text (no label) left out."""
    return re.findall(r"^text: (.*)\nlabel: (\d+)$", prompt, re.MULTILINE)


def test_icl_gold_removed_twin_keeps_the_demonstrations_with_labels_drawn_at_random(
    helmet_generated: Path,
) -> None:
    """The gold of a label-mapping task is the mapping: the twin shows the same demonstrations, each
    with a label drawn at random from the label set, so no class's label is kept out of them."""
    agree = shown = 0
    for label, _ in LENGTHS:
        for twin, sample in _twins(helmet_generated, "icl_trec_coarse", label, "gold_removed"):
            real, relabelled = _demonstrations(sample["prompt"]), _demonstrations(twin["prompt"])
            assert [text for text, _ in relabelled] == [text for text, _ in real], twin["id"]
            labels = len(sample["gold"]["mapping"])
            assert {int(value) for _, value in relabelled} <= set(range(labels))
            agree += sum(a == b for (_, a), (_, b) in zip(real, relabelled, strict=True))
            shown += len(real)
            assert twin["filled_from"] == []  # no document fills it: its labels are redrawn
    assert shown and agree / shown < 0.5  # about one in six under a random draw; all under a copy


def _titles(prompt: str) -> dict[int, str]:
    """Each numbered document's title in a rag_hard prompt."""
    found = re.findall(r"^Document \[(\d+)\] \(Title: (.*?)\): ", prompt, re.MULTILINE)
    return {int(number): title for number, title in found}


def test_rag_hard_gold_removed_twin_takes_the_gold_titles_with_their_bodies(
    helmet_generated: Path,
) -> None:
    """A gold document's title is often the answer: the twin replaces title and body together, by
    whole titled documents of the same pool, and keeps every document's numbered heading."""
    checked = 0
    for label, _ in LENGTHS:
        for twin, sample in _twins(helmet_generated, "rag_hard", label, "gold_removed"):
            real, refilled = _titles(sample["prompt"]), _titles(twin["prompt"])
            assert set(refilled) == set(real), twin["id"]
            for number in sample["gold"]["passages"]:
                assert refilled[number] != real[number], (twin["id"], real[number])
                assert f"(Title: {real[number]})" not in twin["prompt"], twin["id"]
            checked += 1
    assert checked


def test_twins_fitted_to_several_tokenizers_carry_their_own_counts(
    mirror: Path, tmp_path: Path
) -> None:
    """A twin's ``prompt_tokens_by_tokenizer`` was its data row's, and its ``prompt_tokens`` the
    largest count rather than the first tokenizer's, as a data row's is."""
    out = tmp_path / "joint"
    tasks = ("multi_doc_qa", "passage_count", "niah_multikey_2")
    run_generate(
        _options(mirror, out, tasks, tokenizer="o200k_base,cl100k_base"),
        echo=lambda _: None,
        progress=False,
    )
    members = {name: load_tokenizer(name) for name in ("o200k_base", "cl100k_base")}
    for task in tasks:
        for label, _ in LENGTHS:
            for twin in _lines(out / "controls" / task / f"{label}.jsonl"):
                recounted = {
                    name: tokenizer.count_whole(twin["prompt"])
                    for name, tokenizer in members.items()
                }
                assert twin["prompt_tokens_by_tokenizer"] == recounted, twin["id"]
                assert twin["prompt_tokens"] == recounted["o200k_base"], twin["id"]
