"""A cut-off filler never near-copies another passage of its source in its prompt (shared boilerplate, shared pages)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from longbench100.fitting.fit import _shrink
from longbench100.fitting.packing import FILLER_CANDIDATES, choose_filler
from longbench100.fitting.pieces import Piece
from longbench100.sources.near_duplicates import (
    CHECKED_CHARS,
    LONGER,
    SHINGLE_WORDS,
    near_copy_of_any,
    passage_shingle_hashes,
)
from longbench100.sources.records import Document
from longbench100.text.tokenization import load_tokenizer
from tests.support.fixture_mirror import paragraph

LEGEND = (
    "Certain confidential information contained in this document, marked by brackets, has been omitted and "
    "filed separately with the Securities and Exchange Commission pursuant to the rules of the Exchange Act. "
)


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer("cl100k_base")


def _contract(seed: int) -> str:
    """A contract that opens with the shared legend, then text of its own."""
    return LEGEND + paragraph(random.Random(seed), 12)


def test_an_opening_that_is_another_passage_s_boilerplate_is_a_repeat() -> None:
    other = _contract(1)
    assert near_copy_of_any(LEGEND.strip(), [other])
    assert near_copy_of_any(
        LEGEND.upper().strip(), ["Unrelated words first. " + other]
    )  # case and a shift do not hide it
    assert not near_copy_of_any(LEGEND.strip(), [paragraph(random.Random(2), 12)])
    assert not near_copy_of_any(LEGEND.strip(), [])


def test_an_opening_mostly_its_own_is_not_a_repeat() -> None:
    own = LEGEND + paragraph(random.Random(3), 3)
    assert not near_copy_of_any(own, [_contract(1)])


def test_text_shared_anywhere_counts_whatever_the_length() -> None:
    shared = paragraph(
        random.Random(4), 40
    )  # a few thousand characters, as on two pages of one website
    assert len(shared) > 2_000
    cut = shared + " " + paragraph(random.Random(5), 10)
    page = paragraph(random.Random(6), 60) + " " + shared + " " + paragraph(random.Random(7), 60)
    assert len(page) > LONGER * len(cut)  # read past its words test first
    assert near_copy_of_any(cut, [page])
    assert not near_copy_of_any(cut, [paragraph(random.Random(6), 200)])
    assert not near_copy_of_any(
        page, [cut]
    )  # as long as this, half of it would be thousands of characters: not checked
    assert len(page) >= CHECKED_CHARS


def test_a_passage_shorter_than_the_text_decides_by_its_own_shingles() -> None:
    passage = paragraph(random.Random(8), 8)
    text = paragraph(random.Random(9), 10) + " " + passage + " " + paragraph(random.Random(10), 10)
    assert len(text) < CHECKED_CHARS
    assert near_copy_of_any(
        text, [passage]
    )  # the smaller one's shingles decide, as in the independent audit


def test_the_filler_passes_over_a_cut_that_repeats_a_placed_opening(tokenizer) -> None:
    contract = Document("contracts/2", "contracts", _contract(2))
    room = tokenizer.count(LEGEND.strip()) + 3  # only the legend fits
    found = choose_filler(tokenizer, [contract], random.Random(0), room, lambda document: False, 0)
    assert found is not None and found.text == LEGEND.strip()
    placed = [_passage("contracts", 1)]
    assert (
        choose_filler(
            tokenizer, [contract], random.Random(0), room, lambda document: False, 0, placed
        )
        is None
    )
    wider = choose_filler(
        tokenizer, [contract], random.Random(0), 10_000, lambda document: False, 0, placed
    )
    assert (
        wider is not None and wider.text == contract.text
    )  # the whole document is a distractor, not a repeat
    elsewhere = choose_filler(
        tokenizer,
        [contract],
        random.Random(0),
        room,
        lambda document: False,
        0,
        [_passage("filings", 1)],
    )
    assert (
        elsewhere is not None and elsewhere.text == LEGEND.strip()
    )  # boilerplate is a source's own: others are not read


def _passage(source: str, seed: int) -> Piece:
    """A placed contract of ``source`` that opens with the legend."""
    return Piece(
        "distractor", _contract(seed), 0, Document(f"{source}/{seed}", source, _contract(seed))
    )


def test_shortening_the_filler_to_a_repeat_drops_it(tokenizer) -> None:
    document = Document("contracts/2", "contracts", _contract(2))
    sentences = document.text.split(". ")
    opening = ". ".join(sentences[:3]) + "."
    filler = Piece("filler", opening, tokenizer.count(opening), document)
    placed = _passage("contracts", 1)
    excess = (
        filler.tokens - tokenizer.count(LEGEND.strip()) - 1
    )  # the filler can keep only the legend
    pieces = [placed, filler]
    assert _shrink(_Context(tokenizer), pieces, excess)
    assert pieces == [placed]
    alone = [
        Piece("distractor", "Unrelated. " * 20, 40),
        Piece("filler", opening, filler.tokens, document),
    ]
    assert _shrink(_Context(tokenizer), alone, excess)
    assert [piece.text for piece in alone][1] == LEGEND.strip()


class _Context:
    """What ``_shrink`` reads of a build context."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer


def test_the_words_test_never_changes_the_answer() -> None:
    """On random texts sharing random spans, the answer equals the whole computation (the audit's rule)."""
    import re

    def shingles(text: str) -> set:
        words = re.findall(r"\w+", text.lower())
        return {tuple(words[i : i + 8]) for i in range(len(words) - 7)}

    rng = random.Random(11)
    agreed = near = 0
    for case in range(300):
        text = paragraph(rng, rng.randint(2, 12))
        start, end = sorted(rng.sample(range(len(text)), 2))
        other = (
            paragraph(rng, rng.randint(1, 60))
            + " "
            + text[start:end]
            + " "
            + paragraph(rng, rng.randint(1, 60))
        )
        own, theirs = shingles(text), shingles(other)
        expected = bool(own and theirs) and len(own & theirs) >= 0.5 * min(len(own), len(theirs))
        assert near_copy_of_any(text, [other]) == expected, case
        agreed += 1
        near += expected
    assert agreed == 300 and 20 < near < 280  # both answers occur


def test_a_passages_shingles_are_every_distinct_run_of_eight_lowered_words():
    rng = random.Random(3)
    words = ["Alpha", "beta", "GAMMA", "delta", "épée", "x1", "y_2", "Ωmega"]
    for _ in range(200):
        text = rng.choice([" ", ", ", ". ", "\n"]).join(
            rng.choice(words) for _ in range(rng.randint(0, 60))
        )
        lowered = re.findall(r"\w+", text.lower())
        runs = {
            tuple(lowered[start : start + SHINGLE_WORDS])
            for start in range(len(lowered) - SHINGLE_WORDS + 1)
        }
        assert passage_shingle_hashes(text) == frozenset(map(hash, runs))


def _eager_choice(pool, rng, max_tokens, excluded, good_enough, cut_of, repeats):
    """The filler choice as first written (the oracle): every cut longer than the best so far checked at once."""
    best, tried = None, 0
    for index in rng.sample(range(len(pool)), len(pool)):
        document = pool[index]
        if excluded(document):
            continue
        cut = cut_of(document, max_tokens)
        tried += 1
        better = cut is not None and (best is None or cut[1] > best.tokens)
        if better and cut[0] != document.text and repeats(cut[0], document):
            better = False
        if better:
            best = Piece(
                "filler" if cut[0] != document.text else "distractor", cut[0], cut[1], document
            )
            if max_tokens - cut[1] <= good_enough:
                break
        if tried >= FILLER_CANDIDATES:
            break
    return best


def test_only_cuts_that_could_be_chosen_are_checked_and_the_choice_is_the_eager_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import longbench100.fitting.packing as packing

    saved = 0
    for trial in range(400):
        draw = random.Random(trial)
        pool = [Document(f"s/{n}", "s", f"text {n} " * 5) for n in range(draw.randint(0, 9))]
        max_tokens = draw.randint(5, 60)
        cuts = {
            (document.id, max_tokens): draw.choice(
                [
                    None,
                    (document.text[:8], draw.randint(1, max_tokens)),
                    (document.text, draw.randint(1, max_tokens)),
                ]
            )
            for document in pool
        }
        repeating = {document.id for document in pool if draw.random() < 0.4}
        left_out = {document.id for document in pool if draw.random() < 0.2}
        checked: list[str] = []

        def cut_of(document, room, cuts=cuts):
            return cuts[document.id, room]

        def repeats(text, document, placed=(), checked=checked, repeating=repeating):
            checked.append(document.id)
            return document.id in repeating

        def cut_text(tokenizer, text, room, pool=pool):
            return cut_of(next(d for d in pool if d.text == text), room)

        monkeypatch.setattr(packing, "cut_prefix", cut_text)
        monkeypatch.setattr(packing, "repeats_placed_passage", repeats)
        good_enough = draw.randint(0, 20)
        excluded = lambda document, left_out=left_out: document.id in left_out  # noqa: E731
        expected = _eager_choice(
            pool, random.Random(trial), max_tokens, excluded, good_enough, cut_of, repeats
        )
        eager_checks = Counter(checked)
        checked.clear()
        found = choose_filler(None, pool, random.Random(trial), max_tokens, excluded, good_enough)
        assert found == expected, trial
        assert not Counter(checked) - eager_checks  # only cuts the eager loop checked too
        saved += eager_checks.total() - len(checked)
    assert saved > 0
