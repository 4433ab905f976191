"""Sentence ends for filler cuts and star sentences: abbreviations, initials and headings are no ends."""

from __future__ import annotations

import random
import re

import pytest
import sentencex

from longbench100.fitting.packing import cut_prefix
from longbench100.fitting.pieces import Piece
from longbench100.tasks.counting_stars import insertion_points
from longbench100.text.sentences import (
    _MARGIN,
    LANGUAGE,
    MIN_FILLER_CHARS,
    _checked_end,
    _paragraph_start_before,
    sentence_ends,
    sentence_ends_from_last,
)
from longbench100.text.tokenization import load_tokenizer

SENTENCES = [
    "Dr. A. B. Moss met Mr. Hale at 9 a.m. in the U.S. capital on Tuesday.",
    "The U.S. Senate and Gov. Reyes agreed on the plan, e.g. new rail lines.",
    "She said it would start soon.",
    "Lt. Col. J. K. Ortiz of No. 4 Squadron flew to St. Paul and Ft. Lee afterwards.",
    "Costs rose 3.5 percent vs. the year before!",
    "She watches the hit E! series on Sundays.",
    '"Was it worth it?" asked the clerk.',
]
ABBREVIATION_TEXT = "Plans for the Valley\n\n" + " ".join(SENTENCES)


def _true_ends(text: str) -> set[int]:
    ends, position = set(), 0
    for sentence in SENTENCES:
        position = text.index(sentence, position) + len(sentence)
        ends.add(position)
    return ends


def test_sentence_ends_skip_abbreviations_initials_and_headings() -> None:
    ends = sentence_ends(ABBREVIATION_TEXT)
    assert set(ends) <= _true_ends(ABBREVIATION_TEXT)
    assert len(ends) >= len(SENTENCES) - 1  # at most one true end lost to caution
    assert (
        ABBREVIATION_TEXT.index("Valley") + len("Valley") not in ends
    )  # a heading is no sentence end


def test_a_limit_returns_the_same_ends_as_the_whole_text_where_no_quotation_spans_it() -> None:
    text = ABBREVIATION_TEXT + " " + " ".join(SENTENCES * 40)
    whole = sentence_ends(text)
    for limit in (50, 200, 900, 3000):
        assert list(sentence_ends_from_last(text, limit))[::-1] == [
            end for end in whole if end <= limit
        ]


def test_ends_from_the_last_are_the_ends_reversed() -> None:
    from tests.text.test_segment_count import real_sentences

    rng = random.Random(5)
    sentences = [*real_sentences(), *SENTENCES]
    joins = [". ", " ", '." ', "? ", "!\n", "\n\n", ' "', "; ", ". e.g. "]
    for _ in range(300):
        text = "".join(rng.choice(sentences) + rng.choice(joins) for _ in range(rng.randint(1, 30)))
        for limit in (rng.randint(0, len(text)), rng.randint(0, len(text) + 500), len(text)):
            assert list(sentence_ends_from_last(text, limit)) == _every_end_up_to(text, limit)[::-1]


def _every_end_up_to(text: str, limit: int) -> list[int]:
    """The ends of the segmented opening at or before ``limit``, each checked first, in order (the eager way)."""
    opening = text if limit + _MARGIN >= len(text) else text[: limit + _MARGIN]
    ends = (
        _checked_end(text, span) for span in sentencex.get_sentence_boundaries(LANGUAGE, opening)
    )
    return [end for end in ends if end is not None and end <= limit]


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer("cl100k_base")


def test_filler_cuts_end_only_at_true_sentence_ends(tokenizer) -> None:
    text = ABBREVIATION_TEXT + " More words follow here without an end"
    allowed = {ABBREVIATION_TEXT[:end] for end in _true_ends(ABBREVIATION_TEXT)} | {
        text
    }  # the whole text is a whole document
    seen = set()
    for max_tokens in range(1, tokenizer.count(text) + 5):
        cut = cut_prefix(tokenizer, text, max_tokens)
        if cut is None:
            continue
        prefix, tokens = cut
        assert tokens <= max_tokens and tokens == tokenizer.count(prefix)
        assert prefix in allowed, prefix[-40:]
        seen.add(prefix)
    assert len(seen) >= 4


def test_a_filler_is_a_whole_sentence_of_real_content_or_nothing(tokenizer) -> None:
    assert (
        cut_prefix(tokenizer, "Introduction\nAn opening line that runs on and on. Then more.", 6)
        is None
    )  # heading only
    assert (
        cut_prefix(tokenizer, "Hi there. The second sentence is long enough to matter.", 5) is None
    )  # "Hi there." is too short
    cut = cut_prefix(tokenizer, "Hi there. The second sentence is long enough to matter. Last.", 13)
    assert cut is not None and cut[0] == "Hi there. The second sentence is long enough to matter."
    assert len(cut[0]) >= MIN_FILLER_CHARS


def test_star_sentences_go_only_to_sentence_boundaries() -> None:
    pieces = [Piece("distractor", ABBREVIATION_TEXT, 100) for _ in range(5)]
    allowed = {0, len(ABBREVIATION_TEXT)} | _true_ends(ABBREVIATION_TEXT)
    offsets = set()
    for seed in range(60):
        for _, offset in insertion_points(pieces, random.Random(seed)):
            assert offset in allowed
            offsets.add(offset)
    assert len(offsets) >= 5


@pytest.mark.parametrize(
    "text",
    [
        "Was it courage or was it bravado? -- she walked in smiling every morning.",
        "People argued about the vote... ... while others simply went home early.",
        "Did the plan work? (nobody could say for certain) the mayor told us later.",
    ],
)
def test_no_sentence_end_before_punctuation_that_runs_on_in_lower_case(text: str) -> None:
    assert sentence_ends(text) == [
        len(text)
    ]  # "-- she", "... while", "(nobody" continue the sentence


def test_the_end_checks_read_little_of_a_sentence_yet_agree_with_whole_searches() -> None:
    from longbench100.text import sentences

    terminal = re.compile(r"""[.!?…]["'”’)\]]*$""")
    abbreviated = re.compile(rf"""(?:^|[^\w.])(?:{sentences._ABBREVIATION.pattern})$""")

    def whole(sentence: str) -> bool:  # the rule as two regex searches over the whole sentence
        return bool(terminal.search(sentence)) and not abbreviated.search(sentence)

    rng = random.Random(5)
    alphabet = [
        "a",
        "B",
        "z",
        ".",
        ".",
        "!",
        "?",
        "…",
        '"',
        "'",
        "”",
        ")",
        "]",
        " ",
        "\n",
        "é",
        "_",
        "7",
        "Dr",
        "U.S",
        "No",
        "Ⅻ",
        "٣",
        "-",
    ]
    cases = [
        " ".join(SENTENCES),
        "x" * 200 + ".",
        "." * 300,
        "A." * 100,
        "word " * 30 + "U.S." * 40,
        "end" + ")" * 200,
        "end." + ")" * 200 + "\n",
        "a " * 70 + "Mr.\n",
        "B" * 100 + " e.g.",
        "",
        "x " + "A." * 50 + "\n",
        "end!" + "'" * 100 + "\n",
    ]  # runs longer than the tail, before a final newline
    for _ in range(20_000):
        length = rng.choice([1, 5, 40, 63, 64, 65, 66, 120, 300])
        cases.append("".join(rng.choice(alphabet) for _ in range(length)))
    for case in cases:
        assert sentences.is_sentence_end(case) == whole(case), case
    assert sum(sentences.is_sentence_end(case) for case in cases) > 1000  # both answers occur
    leading_non_word = re.compile(r"^[^\w]+")
    for case in cases[
        :5000
    ]:  # what may follow an end: blanks, then past punctuation no lower-case letter
        for end in range(len(case)):
            following = leading_non_word.sub("", case[end : end + 40])
            assert sentences._next_sentence_may_start(case, end) == (
                case[end].isspace() and not following[:1].islower()
            )


def _long_text(rng: random.Random, sentences: list[str]) -> str:
    """Tens of thousands of characters of sentences, with paragraph breaks of every kind the
    segmenter reads (one, two or three newlines, carriage returns, blank lines with a space) and
    quotations or brackets left open across them."""
    joins = [". ", " ", '." ', "? ", "\n\n", "\n\n\n", "\r\n\n", "\n \n", '\n\n"', "(\n\n", "! "]
    text = ""
    while len(text) < 40_000:
        text += rng.choice(sentences) + rng.choice(joins)
    return text


def test_long_texts_segmented_from_the_end_have_the_whole_texts_ends() -> None:
    from tests.text.test_segment_count import real_sentences

    rng = random.Random(11)
    sentences = [*real_sentences(), *SENTENCES, 'He said "wait.', "(see below."]
    for _ in range(12):
        text = _long_text(rng, sentences)
        whole = sentence_ends(text)
        for limit in (len(text), len(text) - 300, rng.randint(17_000, len(text)), 20_000):
            ends = list(sentence_ends_from_last(text, limit))
            assert ends == _every_end_up_to(text, limit)[::-1]
            if limit + _MARGIN >= len(text):
                assert ends == [end for end in whole if end <= limit][::-1]


def test_a_window_starts_only_where_the_segmenter_starts_a_paragraph() -> None:
    text = "One. Two.\n\n\nThree.\r\n\nFour.\n\n Five.\n\nSix."
    assert _paragraph_start_before(text, len(text)) == text.index("Six.")
    assert _paragraph_start_before(text, text.index("Six.") - 1) == text.index(" Five.")
    assert _paragraph_start_before(text, text.index(" Five.") - 1) == 0  # runs of 3, or after \r
    assert _paragraph_start_before("no breaks at all. None.", 20) == 0


def test_source_sentences_split_where_a_break_after_a_mark_is_looked_behind_for() -> None:
    from longbench100.text.sentences import SOURCE_SENTENCE_END, split_source_sentences

    looked_behind = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")  # the rule
    pieces = ["A", "b", "7", ".", "!", "?", "..", '"', "’", ")", "]", "“", "(", " ", "\n", "\t"]
    rng = random.Random(19)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert split_source_sentences(text) == looked_behind.split(text), repr(text)
        end, first = SOURCE_SENTENCE_END.search(text), looked_behind.search(text)
        assert (end and end.end()) == (first and first.end()), repr(text)
