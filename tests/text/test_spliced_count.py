"""Counting spliced texts from running totals equals counting them whole.

Known texts are random joins of real sentences; spliced texts cut spans out of them at random places
(mid-word, mid-sentence, at cut places, next to them) and put random inserts between them: the
junction bits of the piece test, needles, template openings. Every count is compared with a whole
count of the same text, for each encoding that counts by segments, and the whole-counting fallback
is checked to give the same numbers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from longbench100.text import spliced_count
from longbench100.text.segment_count import CUT
from longbench100.text.spliced_count import TextIndex, locate, materialize
from longbench100.text.tokenization import load_tokenizer
from tests.conftest import SEGMENTED_TOKENIZERS, load_segmented
from tests.text.test_segment_count import JUNCTION_BITS, real_sentences

INSERTS = [
    *JUNCTION_BITS,
    " One of the special magic numbers for calm-river is: 4821937. ",
    "\n\nPassage 3:\n",
    "{",
    "}",
    ", ",
    "Read the text below.\n",
    "\nQuestion: what is it?\nAnswer:",
    "",
    ". ",
    "? ",
]


def known_text(rng: random.Random, sentences: Sequence[str]) -> str:
    """A long text of real sentences joined by the separators a haystack and a document use."""
    joins = [". ", ". ", "! ", "? ", ".\n", "\n\n", " ", ". \n", ".  "]
    return "".join(rng.choice(sentences) + rng.choice(joins) for _ in range(rng.randint(10, 60)))


def random_span(rng: random.Random, text: str, cuts: list[int]) -> tuple[int, int]:
    """A span of ``text`` whose ends fall anywhere, on a cut place, or one character either side of one."""

    def point() -> int:
        if cuts and rng.random() < 0.5:
            return max(0, min(len(text), rng.choice(cuts) + rng.choice([-1, 0, 1, 2])))
        return rng.randint(0, len(text))

    start, end = sorted((point(), point()))
    return start, end


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_spliced_counts_equal_whole_counts(encoding: str):
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"spliced-{encoding}")
    indexes = [tokenizer.index(known_text(rng, sentences)) for _ in range(12)]
    used_totals = 0
    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.4:
                parts.append(rng.choice(INSERTS) + rng.choice(["", *JUNCTION_BITS]))
            index = rng.choice(indexes)
            start, end = random_span(rng, index.text, index.cuts)
            parts.append((index, start, end))
            used_totals += index.inner(start, end) is not None
        if rng.random() < 0.5:
            parts.append(rng.choice(INSERTS))
        text = materialize(parts)
        assert tokenizer.count_parts(parts) == tokenizer.count_whole(text), text[:200]
    assert used_totals > 2000  # most spans were counted from running totals, not whole


def prompt_of_openings(
    rng: random.Random, sentences: list[str], most: int
) -> tuple[list[str], list[tuple[str, int]], str]:
    """1 to ``most`` known texts, an opening of each (often the whole text), and a prompt that
    holds those openings in order between random inserts."""
    documents = [known_text(rng, sentences) for _ in range(rng.randint(1, most))]
    openings = [
        (document, rng.choice([len(document), rng.randint(0, len(document))]))
        for document in documents
    ]
    prompt = "".join(
        rng.choice(INSERTS) + document[:length] for document, length in openings
    ) + rng.choice(INSERTS)
    return documents, openings, prompt


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_known_openings_found_in_a_prompt_count_exactly(encoding: str):
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"known-{encoding}")
    for _ in range(300):
        _, openings, prompt = prompt_of_openings(rng, sentences, 5)
        assert tokenizer.count_known(prompt, openings) == tokenizer.count_whole(prompt)
        # a document that is not in the prompt, or listed out of order, is simply counted as text
        assert tokenizer.count_known(
            prompt, [*reversed(openings), (known_text(rng, sentences), 50)]
        ) == tokenizer.count_whole(prompt)


def test_the_parts_a_count_found_spell_the_text_it_counted_last():
    """``located`` gives what the last ``count_known`` found its text made of (the fitted prompt's
    documents, for writing their JSON forms once): parts that spell that very text, and nothing
    for an equal text of another object or once another text was counted."""
    tokenizer = load_segmented("cl100k_base")
    rng = random.Random("located")
    sentences = real_sentences()
    for _ in range(100):
        documents, openings, prompt = prompt_of_openings(rng, sentences, 4)
        assert tokenizer.located(prompt) is None
        tokenizer.count_known(prompt, openings)
        parts = tokenizer.located(prompt)
        assert parts is not None and materialize(parts) == prompt
        whole = [
            part
            for part in parts
            if not isinstance(part, str) and part[1:] == (0, len(part[0].text))
        ]
        assert [part[0].text for part in whole] == [
            document for document, length in openings if length == len(document) and length
        ]
        assert tokenizer.located("".join([prompt[:1], prompt[1:]])) is None  # equal, not the same
        tokenizer.count_known(documents[0], [(documents[0], len(documents[0]))])
        assert tokenizer.located(prompt) is None


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_openings_of_texts_known_by_learned_piece_counts_alone_count_exactly(encoding: str):
    """A text whose piece counts were learned (from the token cache) but that was never indexed: its
    openings are counted, and their first tokens read off, from its cut places inside the opening
    only, exactly as from its whole index."""
    tokenizer, counter = load_tokenizer(encoding), load_tokenizer(encoding)
    rng = random.Random(f"learned-{encoding}")
    texts = [known_text(rng, real_sentences()) for _ in range(20)]
    pieces = [counter.pieces(text) or [] for text in texts]
    tokenizer.learn_texts(texts, [[counter.count_whole(piece) for piece in own] for own in pieces])
    read_off = 0
    for _ in range(400):
        text = rng.choice(texts)
        length = rng.randint(0, len(text) - 1)
        prompt = rng.choice(INSERTS) + text[:length] + rng.choice(INSERTS)
        assert tokenizer.count_known(prompt, [(text, length)]) == tokenizer.count_whole(prompt)
        width = rng.randint(1, len(text))
        max_tokens = rng.randint(1, tokenizer.count_whole(text[:width]) + 2)
        opening = tokenizer.opening_tokens(text, width, max_tokens)
        if opening is not None:
            read_off += 1
            assert opening == tokenizer.decode(tokenizer.encode(text[:width])[:max_tokens])
    assert read_off > 100


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_texts_placed_whole_count_from_their_ends_without_finding_every_cut(
    encoding: str, monkeypatch
):
    """A text known by learned piece counts and placed whole (a padding document) is counted from
    its first and last cut only: its cut places are not all found, and the counts of prompts that
    hold it whole, or an opening or a span of it, equal whole counts."""
    tokenizer, counter = load_tokenizer(encoding), load_tokenizer(encoding)
    rng = random.Random(f"whole-{encoding}")
    texts = [known_text(rng, real_sentences()) for _ in range(12)]
    texts.append("No sentence end in this one at all")
    tokenizer.learn_texts(
        texts,
        [[counter.count_whole(piece) for piece in counter.pieces(text) or []] for text in texts],
    )
    eager = {text: TextIndex(text, counter._segments) for text in texts}  # every cut found
    searched: list[str] = []
    original = spliced_count.cut_places
    monkeypatch.setattr(
        spliced_count,
        "cut_places",
        lambda text, *end: searched.append(text) or original(text, *end),
    )
    for _ in range(60):
        placed = rng.sample(texts, 3)
        prompt = "".join(rng.choice(INSERTS) + text for text in placed) + rng.choice(INSERTS)
        known = [(text, len(text)) for text in placed]
        assert tokenizer.count_known(prompt, known) == tokenizer.count_whole(prompt)
    for text in texts:
        assert tokenizer.index(text).inner(0, len(text)) == eager[text].inner(0, len(text))
    assert set(searched) == {texts[-1]}  # only the text without a cut was searched through
    for text in texts:  # spans inside the same texts find their cuts, and count exactly too
        index = tokenizer.index(text)
        start, end = random_span(rng, text, [])
        parts = [rng.choice(INSERTS), (index, start, end), rng.choice(INSERTS)]
        assert tokenizer.count_parts(parts) == tokenizer.count_whole(materialize(parts))
        assert (index.cuts, index.totals) == (eager[text].cuts, eager[text].totals)


def _opening_length_by_encoding(tokenizer, text: str, width: int, max_tokens: int) -> int | None:
    """What ``opening_length`` means, worked out by encoding the whole opening."""
    ids = tokenizer.encode(text[:width])
    if len(ids) <= max_tokens:
        return None
    opening = tokenizer.decode(ids[:max_tokens]).rstrip("\ufffd")
    return len(opening) if text.startswith(opening) else len(opening[:-1])


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_an_opening_past_the_last_cut_is_found_by_encoding_what_follows_that_cut(encoding: str):
    """Where token ``max_tokens`` lies past the last cut inside the opening (few sentence ends, a
    long run without one), only the text after that cut is encoded: the same length as encoding
    the whole opening."""
    tokenizer = load_tokenizer(encoding)
    rng = random.Random(f"past-cuts-{encoding}")
    past_cuts = 0
    for _ in range(150):
        sentences = known_text(rng, real_sentences()).split(". ")
        text = "".join(
            sentence + rng.choice([". ", ", ", "; ", " ", "\n", ".\n"]) for sentence in sentences
        )
        for _ in range(8):
            width = rng.randint(1, len(text))
            whole = tokenizer.count_whole(text[:width])
            max_tokens = rng.randint(1, whole + 2)
            past_cuts += tokenizer.opening_tokens(text, width, max_tokens) is None
            assert tokenizer.opening_length(text, width, max_tokens) == _opening_length_by_encoding(
                tokenizer, text, width, max_tokens
            )
    assert past_cuts > 200


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_the_first_tokens_of_an_opening_read_off_running_totals_equal_decoding_its_encoding(
    encoding: str,
):
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"opening-{encoding}")
    read_off = 0
    for _ in range(60):
        text = "".join(
            rng.choice(["", "", *JUNCTION_BITS, "日本語の文。", "naïve café. "]) + sentence
            for sentence in known_text(rng, sentences).split(". ")
        )
        cuts = tokenizer.index(text).cuts or [0]
        for _ in range(25):
            if (
                rng.random() < 0.5
            ):  # an opening that ends at a cut place or just past it, as many tokens as before it, or one off
                cut = rng.choice(cuts)
                width = min(len(text), cut + rng.choice([0, 1, 2, 3]))
                max_tokens = max(1, tokenizer.count_whole(text[:cut]) + rng.choice([-1, 0, 0, 1]))
            else:
                width = rng.choice([len(text), rng.randint(0, len(text))])
                max_tokens = rng.randint(1, max(1, tokenizer.count_whole(text[:width]) + 3))
            opening = tokenizer.opening_tokens(text, width, max_tokens)
            ids = tokenizer.encode(text[:width])
            if opening is None:
                continue
            read_off += 1
            assert len(ids) > max_tokens
            assert opening == tokenizer.decode(ids[:max_tokens])
    if encoding == "qwen3":  # its decoding composes accents (NFC): never read off
        assert read_off == 0
    else:
        assert read_off > 500  # most openings were read off the totals


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_a_joined_index_counts_like_an_index_of_the_joined_text(encoding: str):
    """Blocks (some tiny, with no inner cut, some starting or ending in spaces and digits) joined by a
    separator: spans of the joined index count as the whole text, and every cut it keeps is one of the
    joined text's own cut places with the same running tokens."""
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"joined-{encoding}")
    blocks = [known_text(rng, sentences) for _ in range(10)] + [
        "x",
        "",
        " 12",
        "7 ",
        "Word.",
        "\n",
        "  two  spaces  ",
    ]
    # openings right after a newline that the boundary rule must refuse (blank, "/", which o200k's punctuation
    # run takes after newlines) or may take (marks, contractions, digits, punctuation, a separator character)
    blocks += [
        opening + known_text(rng, sentences)
        for opening in [
            "/",
            "//x ",
            " ",
            "\t",
            "\r\n",
            "\u00a0",
            "\u2028",
            "\u0301",
            "'s ",
            "'",
            "12",
            "1. ",
            ".",
            "-",
            "\x1c",
            "\u3000",
        ]
    ]
    used_totals = 0
    for _ in range(250):
        chosen = [rng.choice(blocks) for _ in range(rng.randint(1, 8))]
        separator = rng.choice(
            ["\n\n", " ", "", "\n", ". ", " \n", ".\n", "\r\n", "\n \n", "!\n\n"]
        )
        joined = tokenizer.joined_index(chosen, separator)
        assert joined.text == separator.join(chosen)
        plain = tokenizer.index(joined.text, keep=False)
        for _ in range(8):
            start, end = random_span(rng, joined.text, plain.cuts)
            inner = joined.inner(start, end)
            if inner is not None:
                used_totals += 1
                first, last, tokens = inner
                assert (
                    first in plain.cuts and last in plain.cuts and start < first <= last <= end - 2
                )
                assert (
                    tokens
                    == plain.totals[plain.cuts.index(last) + 1]
                    - plain.totals[plain.cuts.index(first) + 1]
                )
            parts = [rng.choice(INSERTS), (joined, start, end), rng.choice(INSERTS)]
            assert tokenizer.count_parts(parts) == tokenizer.count_whole(materialize(parts))
    assert used_totals > 1000


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_a_haystack_of_known_documents_in_a_new_order_tokenizes_nothing(encoding: str, monkeypatch):
    """Documents joined by a blank line open after a newline: once each document's tail and the separator
    have been counted, joining the same documents in another order sends nothing to the tokenizer."""
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"reorder-{encoding}")
    documents = [known_text(rng, sentences) for _ in range(12)]
    first = tokenizer.joined_index(documents, "\n\n")
    for document in documents:
        tokenizer.joined_index([document, documents[0]], "\n\n")  # every document's tail once
    sent = []
    original = tokenizer.count_whole
    monkeypatch.setattr(tokenizer, "count_whole", lambda text: sent.append(text) or original(text))
    monkeypatch.setattr(tokenizer._segments, "_count_whole", tokenizer.count_whole)
    reordered = tokenizer.joined_index(rng.sample(documents, len(documents)), "\n\n")
    assert sent == []
    plain = tokenizer.index(reordered.text, keep=False)
    assert reordered.inner(0, len(reordered.text)) == plain.inner(0, len(plain.text))
    assert (
        first.inner(0, len(first.text))[2]
        == tokenizer.index(first.text, keep=False).inner(0, len(first.text))[2]
    )


def test_locate_marks_each_known_opening_once_in_order():
    index_a, index_b = (
        TextIndex("Alpha one. Alpha two.", None),
        TextIndex("Beta one. Beta two.", None),
    )
    prompt = "Passage 1:\nAlpha one. Alpha two.\nPassage 2:\nBeta one.\nEnd"
    parts = locate(prompt, [(index_a, len(index_a.text)), (index_b, 9), (index_a, 5)])
    assert materialize(parts) == prompt
    assert [part[1:] for part in parts if not isinstance(part, str)] == [
        (0, 21),
        (0, 9),
    ]  # the second Alpha is not after Beta


@pytest.mark.parametrize("encoding", SEGMENTED_TOKENIZERS)
def test_known_texts_with_inserted_text_are_found_in_runs_and_count_exactly(encoding: str):
    tokenizer = load_segmented(encoding)
    sentences = real_sentences()
    rng = random.Random(f"runs-{encoding}")
    documents = [known_text(rng, sentences) for _ in range(6)]
    found_in_runs = 0
    for _ in range(300):
        chosen = rng.sample(documents, rng.randint(1, 3))
        known, pieces = [], [rng.choice(INSERTS)]
        for document in chosen:
            length = rng.choice([len(document), rng.randint(1, len(document))])
            places = sorted(
                rng.sample(range(1, length), min(length - 1, rng.randint(0, 4)))
            )  # inside the opening
            bounds = [0, *places, length]
            for start, end in zip(bounds, bounds[1:]):
                pieces.append(document[start:end])
                pieces.append(
                    rng.choice(INSERTS)
                    if end < length
                    else rng.choice(["\n\n", "\nPassage 2:\n", " "])
                )
            known.append((document, length))
        text = "".join(pieces)
        parts = locate(text, [(tokenizer.index(document), length) for document, length in known])
        spans = [part for part in parts if not isinstance(part, str)]
        assert materialize(parts) == text
        assert all(index.text[start:end] for index, start, end in spans)
        found_in_runs += len(spans) > len(known)
        assert tokenizer.count_known(text, known) == tokenizer.count_whole(text)
    assert found_in_runs > 100  # most joins put text inside an opening, and its runs were found


def test_an_opening_with_inserted_text_is_found_as_runs_in_order():
    first, second, third = (
        "The first sentence of the passage. ",
        "The second sentence of the passage. ",
        "Last, the third one.",
    )
    index = TextIndex(first + second + third, None)
    prompt = f"Intro. {first}A star. {second}Another star. {third}\nEnd"
    parts = locate(prompt, [(index, len(index.text))])
    assert materialize(parts) == prompt
    assert [part[1:] for part in parts if not isinstance(part, str)] == [
        (0, len(first)),
        (len(first), len(first + second)),
        (len(first + second), len(index.text)),
    ]
    assert parts[2] == "A star. " and parts[4] == "Another star. "
    cut = (
        len(first + second) + 4
    )  # an opening cut 4 characters into its third sentence, text inserted just before
    prompt = f"{first}{second}A star. {third[:4]}\nEnd"
    parts = locate(prompt, [(index, cut)])
    assert [part[1:] for part in parts if not isinstance(part, str)] == [
        (0, len(first + second)),
        (len(first + second), cut),
    ]
    unfinished = f"{first}Nothing else"
    assert locate(unfinished, [(index, len(index.text))]) == [unfinished]  # not all of it: literal


def test_cuts_inside_a_span_only_count_when_their_neighbours_are_inside():
    tokenizer = load_tokenizer("cl100k_base")
    index = tokenizer.index("First one. Second one. Third one.")
    assert [match.start() + 1 for match in CUT.finditer(index.text)] == index.cuts == [10, 22]
    assert index.inner(0, len(index.text)) == (10, 22, tokenizer.count_whole(" Second one."))
    assert index.inner(10, len(index.text)) == (
        22,
        22,
        0,
    )  # the cut at 10 has no mark inside the span
    assert index.inner(0, 11) is None  # nor one whose next character is outside it
    assert index.inner(0, 12) == (10, 10, 0)


def test_whole_counting_tokenizers_give_the_same_numbers(tmp_path):
    (tmp_path / "tokenizer.json").write_text(_WORD_LEVEL_TOKENIZER, encoding="utf-8")
    tokenizer = load_tokenizer(f"hf:{tmp_path / 'tokenizer.json'}")
    assert tokenizer.counting == "whole"
    index = tokenizer.index("alpha beta. gamma delta. alpha")
    parts = ["beta ", (index, 6, 24), " gamma"]
    assert tokenizer.count_parts(parts) == tokenizer.count_whole(materialize(parts))
    assert tokenizer.count_known(
        "x alpha beta. gamma", [(index.text, 11)]
    ) == tokenizer.count_whole("x alpha beta. gamma")


_WORD_LEVEL_TOKENIZER = """{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null,
 "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
 "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "alpha": 1, "beta": 2, "gamma": 3, "delta": 4, ".": 5, "x": 6},
           "unk_token": "[UNK]"}}"""


def test_finding_a_long_text_by_its_opening_finds_what_str_find_finds():
    from longbench100.text.spliced_count import _find

    rng = random.Random(11)
    shared = "Passage text that opens the same way in many documents, then goes on differently"
    for _ in range(3000):
        needle = shared[: rng.randint(1, len(shared))] + "".join(
            rng.choice("ab ") for _ in range(rng.randint(0, 40))
        )
        other = shared
        if (
            rng.random() < 0.3
        ):  # a run that holds the needle's opening at every offset, the whole needle at one at most
            needle, other = "a" * rng.randint(60, 90) + "b", "a" * rng.randint(60, 95)
        text = "".join(
            rng.choice(
                [other, needle, needle[:-1], "ab", " ", needle[: rng.randint(0, len(needle))]]
                + ["\u2019", "é", "😀"]  # a wider text than the needle: compared by slices
            )
            for _ in range(rng.randint(0, 12))
        )
        start = rng.randint(0, len(text) + 1)
        assert _find(text, needle, start) == text.find(needle, start)
