"""recalling asks for the entity type of each document's source (ETHIC: names in books, legal references in law):
on made-up contracts it asks for legal references, the annotator is asked for them with their own prompt, only
reference-shaped items found in their chunk are kept, and the gold is their union over the prompt's chunks,
re-derived here from the contract text with our own rule."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.entities import ENTITY_TYPES, name_shaped, reference_shaped
from longbench100.cli import main
from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.judge.annotation_rubric import read_mentions
from longbench100.scoring.metrics.name_sets import name_set_f1
from longbench100.sources.cleaning import clean_text
from longbench100.sources.registry import parse_entry
from tests.support.fixture_mirror import sentence, write_mirror
from tests.support.generate_helpers import generate_annotated, records
from tests.support.openai_stub import OpenAIStub, prompt_text

PASSAGE = re.compile(r"<passage>\n(.*)\n</passage>", re.DOTALL)
REFERENCE = re.compile(
    r"\b(?:Section \d+\.\d+|Exhibit [A-H]|Securities Act of 1933)"
)  # what the made-up contracts cite
JUNK = "The Company"  # an item the stub adds that is no legal reference: it must be dropped
ABSENT = (
    "Section 99.9"  # a reference the stub adds that its chunk does not hold: it must be dropped
)


def contract(rng: random.Random, number: int) -> str:
    """A made-up contract of about 14k tokens whose clauses cite sections, exhibits and an act."""
    clauses = []
    for index in range(420):
        cited = rng.choice(
            [
                f"Section {rng.randint(1, 30)}.{rng.randint(1, 9)}",
                f"Exhibit {rng.choice('ABCDEFGH')}",
                "the Securities Act of 1933",
            ]
        )
        clauses.append(
            f"{index // 10 + 1}.{index % 10 + 1} {sentence(rng)} Subject to {cited}, {sentence(rng).lower()}"
        )
    return f"MASTER AGREEMENT {number}\n\n" + "\n\n".join(clauses)


def annotator(body: dict) -> str:
    text = prompt_text(body)
    match = PASSAGE.search(text)
    if match is None:
        return "OK"
    if "List every legal reference" not in text:
        return "A short summary of the passage in a few words."
    found = list(dict.fromkeys(REFERENCE.findall(match.group(1))))
    return "; ".join(found + [JUNK, ABSENT]) if found else "NONE"


@pytest.fixture(scope="module")
def contracts(tmp_path_factory) -> Path:
    """A mirror whose only recalling source is L-Eval's contracts, made long enough for 8k and 12k."""
    mirror = write_mirror(tmp_path_factory.mktemp("contracts"), only={"legal_contract_qa"})
    path = mirror / "L4NLP" / "LEval" / "LEval" / "Generation" / "legal_contract_qa.jsonl"
    rng = random.Random(3)
    rows = [
        {
            "input": contract(rng, number),
            "instructions": ["What governs the agreement?"],
            "outputs": ["The agreement governs it."],
        }
        for number in range(3)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return mirror


@pytest.fixture(scope="module")
def run(contracts, tmp_path_factory) -> tuple[Path, OpenAIStub]:
    """The generated recalling data and the stub annotator that labelled it (with every request it got)."""
    with OpenAIStub(annotator) as server:
        out = generate_annotated(
            tmp_path_factory,
            "recalling",
            "lb100-cache-entities",
            server.base_url,
            "--tasks",
            "recalling",
            "--sources",
            str(contracts),
            "--lengths",
            "8k,12k",
            "--rows",
            "3",
        )
    return out, server


def test_contracts_ask_for_legal_references_and_the_gold_is_their_union(run, contracts):
    data, _ = run
    path = contracts / "L4NLP" / "LEval" / "LEval" / "Generation" / "legal_contract_qa.jsonl"
    texts = [
        clean_text(json.loads(line)["input"], ["detokenize"], passage=True)
        for line in path.read_text().splitlines()
    ]
    for label in ("8k", "12k"):
        rows = records(data, "recalling", label)
        assert len(rows) == 3, label
        for row in rows:
            gold = row["gold"]
            assert gold["entities"] == "legal_references"
            assert "List every legal reference anywhere in the text above" in row["prompt"]
            assert (
                row["prompt"].rstrip().endswith("References:")
                and row["question"] == "List every legal reference in the text."
            )
            start, end = gold["chunk_chars"][0]
            document = next(text for text in texts if text[start:end].strip() in row["prompt"])
            chunks = [document[start:end] for start, end in gold["chunk_chars"]]
            expected = list(
                dict.fromkeys(found for chunk in chunks for found in REFERENCE.findall(chunk))
            )
            assert gold["mentions"] == expected and len(expected) > 5
            assert JUNK not in gold["mentions"] and ABSENT not in gold["mentions"]
            assert all(mention in row["prompt"] for mention in gold["mentions"])
            assert row["answers"] == ["; ".join(expected)]


def test_the_annotator_is_asked_for_references_with_their_own_prompt(run):
    data, stub = run
    asked = [prompt_text(body) for body in stub.bodies if PASSAGE.search(prompt_text(body))]
    assert asked and all("List every legal reference in this passage" in text for text in asked)
    assert not [text for text in asked if "List every person named" in text]
    manifest = json.loads((data / "manifest.json").read_text())
    assert manifest["annotator"]["prompt_versions"]["legal_references"] == 1


def test_reference_and_name_shapes():
    assert (
        reference_shaped("Section 2.1")
        and reference_shaped("Exhibit B")
        and reference_shaped("the Securities Act of 1933")
    )
    assert reference_shaped("§ 230") and reference_shaped("15 U.S.C. 78a")
    assert not reference_shaped("The Company") and not reference_shaped(
        "within thirty days of the notice"
    )
    assert not reference_shaped("regulations promulgated thereunder") and not reference_shaped(
        "this Section"
    )  # which one?
    assert not reference_shaped("Section " + "word " * 12)
    assert name_shaped("Mr. Darcy") and not name_shaped("Section 2.1 of the Agreement between them")
    chunk = "As set out in Section 2.1 and Exhibit B, under the Securities Act of 1933."
    entity = ENTITY_TYPES["legal_references"]
    assert read_mentions("Section 2.1; Exhibit B; The Company; Section 9.9", chunk, entity) == {
        "mentions": ["Section 2.1", "Exhibit B"],
        "dropped": 2,
    }
    assert read_mentions("NONE", chunk, entity) == {"mentions": [], "dropped": 0}


def test_an_unknown_entity_type_is_refused_in_one_line(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        'name = "mine"\nentities = "planets"\n[hub]\nrepo_id = "a/b"\n[[files]]\npath = "x"\nformat = "jsonl"\n'
        '[files.document]\ntext = "t"\n'
    )
    with pytest.raises(
        UserError, match="unknown entity type 'planets' in 'entities': use people, legal_references"
    ):
        parse_entry(path)


def test_labelled_reference_replies_are_read_and_scored_like_names():
    chunk = "As set out in Section 2.1 and Exhibit B."
    assert read_mentions(
        "References: Section 2.1; Exhibit B", chunk, ENTITY_TYPES["legal_references"]
    ) == {"mentions": ["Section 2.1", "Exhibit B"], "dropped": 0}
    record = DataRecord(
        "recalling-8k-0000",
        "recalling",
        "8k",
        8192,
        0,
        ("Section 2.1; Exhibit B",),
        None,
        None,
        gold={"mentions": ["Section 2.1", "Exhibit B"]},
    )
    assert name_set_f1("References: Section 2.1; Exhibit B", record) == 1.0
    assert name_set_f1("Names: Section 2.1; Exhibit B", record) == 1.0


def test_the_guessing_baselines_look_for_references_where_the_prompt_asks_for_them(run, tmp_path):
    data, _ = run
    out = tmp_path / "baselines.json"
    result = CliRunner().invoke(main, ["baselines", str(data), "--out", str(out)])
    assert result.exit_code == 0, result.output
    guesses = [
        sample["prediction"] or ""
        for sample in json.loads(out.read_text())["samples"]
        if sample["baseline"] == "capitalised_runs"
    ]
    assert guesses and all(REFERENCE.search(guess) for guess in guesses)


def test_a_contract_that_cites_nothing_gives_no_row(tmp_path, monkeypatch):
    mirror = write_mirror(tmp_path / "mirror", only={"legal_contract_qa"})
    rng = random.Random(5)
    quiet = "MASTER AGREEMENT 9\n\n" + "\n\n".join(
        f"{index}. {sentence(rng)} {sentence(rng)}" for index in range(900)
    )
    rows = [
        {"input": text, "instructions": ["What governs it?"], "outputs": ["It does."]}
        for text in (contract(rng, 1), quiet)
    ]
    path = mirror / "L4NLP" / "LEval" / "LEval" / "Generation" / "legal_contract_qa.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    with OpenAIStub(annotator) as server:
        result = CliRunner().invoke(
            main,
            [
                "generate",
                "--suite",
                "ethic",
                "--tasks",
                "recalling",
                "--sources",
                str(mirror),
                "--lengths",
                "8k",
                "--rows",
                "2",
                "--out",
                str(tmp_path / "out"),
                "--annotator-model",
                "stub-model",
                "--annotator-base-url",
                server.base_url,
            ],
        )
    assert result.exit_code == 0, result.output
    written = records(tmp_path / "out", "recalling", "8k")
    assert len(written) == 1 and written[0]["gold"]["mentions"]
    assert (
        "shortfall: recalling 8k: 1 of 2 rows (1 row could not be built: the material does not fit the budget, or holds nothing to ask)"
        in result.output
    )
