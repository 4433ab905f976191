"""The text repairs of longbench100.sources.cleaning on small hand-written texts shaped like the upstream noise."""

from __future__ import annotations

import pytest

from longbench100.sources.cleaning import CLEANING_STEPS, clean_text, unescape_entities


@pytest.mark.parametrize(
    "text, expected",
    [
        ("H &amp; Y Scale", "H & Y Scale"),
        ("&amp;quot;quoted&amp;quot; and it&#39;s", '"quoted" and it\'s'),
        ("AT&T and R & D stay", "AT&T and R & D stay"),
    ],
)
def test_entities_are_unescaped_also_when_escaped_twice(text: str, expected: str) -> None:
    assert unescape_entities(text) == expected
    assert clean_text(text, []) == expected  # every source, with or without declared steps


def test_entities_are_unescaped_after_html_so_markup_is_not_invented() -> None:
    assert clean_text("a &lt;b&gt; tag and <p>R&amp;D</p>", ["html"]) == "a <b> tag and\n\nR&D"


@pytest.mark.parametrize(
    "step, text, expected",
    [
        (
            "wiki_markup",
            'was 63,182,000.<ref name="x.pdf |title=Census |accessdate=18 December 2012 }} It is the 22nd.',
            "was 63,182,000. It is the 22nd.",
        ),
        (
            "wiki_markup",
            "Born 1970.<ref>Smith 2001</ref> He lived.<ref name=a/>",
            "Born 1970. He lived.",
        ),
        (
            "wiki_markup",
            "Plot ( edit )\n\nIn the near future {{cite web|url=x}}fertility falls.",
            "Plot\n\nIn the near future fertility falls.",
        ),
        (
            "paper_markup",
            "in social media BIBREF0, BIBREF1, BIBREF2 or claims BIBREF5.",
            "in social media [1, 2, 3] or claims [6].",
        ),
        (
            "paper_markup",
            "Table TABREF19 and Figure FIGREF0 in Section SECREF3",
            "Table 20 and Figure 1 in Section 4",
        ),
        ("paper_markup", "we set INLINEFORM0 to DISPLAYFORM1", "we set [formula] to [formula]"),
        (
            "paper_markup",
            "defined as\n$$S_{W}=\\mathbb {E}\\left[\\frac{a}{b}\\right]$$ where",
            "defined as\nS_W=E[a/b] where",
        ),
        (
            "paper_markup",
            "the first character ( $\\mathbf {w_{i1}}$ ) and $n$ words",
            "the first character ( w_i1 ) and n words",
        ),
        ("paper_markup", "costs $5 and $10 today", "costs $5 and $10 today"),
        (
            "detokenize",
            "What 's the `` best '' film in Russia ?",
            'What\'s the "best" film in Russia?',
        ),
        (
            "detokenize",
            "The Handmaid 's Tale ( TV series )\nApril 25 , 2018",
            "The Handmaid's Tale (TV series)\nApril 25, 2018",
        ),
        (
            "detokenize",
            "the field -- only work ... in 2015 . CNN",
            "the field -- only work ... in 2015. CNN",
        ),
        (
            "contractions",
            "you don t know, we ll see if you re in; the DMV s rules",
            "you don't know, we'll see if you're in; the DMV's rules",
        ),
        (
            "contractions",
            "Chapter t is a letter; I ll be there",
            "Chapter t is a letter; I'll be there",
        ),
        ("replacement_chars", "the \u201cblack\ufffd material", "the \u201cblack material"),
        (
            "snippet_fragments",
            "nemia is common. Anemia is treatable. It has causes here. It has causes here.",
            "Anemia is treatable. It has causes here.",
        ),
        (
            "snippet_fragments",
            "mRNA levels rose sharply. They fell later.",
            "mRNA levels rose sharply. They fell later.",
        ),
        ("snippet_fragments", "and the patients recovered", ""),
        (
            "snippet_fragments",
            "Treatment of Anemia in Kidney Disease\nnemia is common. Anemia is treatable.",
            "Treatment of Anemia in Kidney Disease\nAnemia is treatable.",
        ),
        ("snippet_fragments", "Sites of transcription at the U6 gene\nt the box", ""),
        (
            "snippet_fragments",
            "s not affected. Early events in mast cells\nThey rose.",
            "Early events in mast cells\nThey rose.",
        ),
    ],
)
def test_each_step_repairs_its_artifact_and_leaves_clean_text_alone(
    step: str, text: str, expected: str
) -> None:
    assert CLEANING_STEPS[step](text) == expected


@pytest.mark.parametrize(
    "step",
    [
        "wiki_markup",
        "paper_markup",
        "detokenize",
        "contractions",
        "replacement_chars",
        "snippet_fragments",
    ],
)
def test_clean_prose_passes_every_step_unchanged(step: str) -> None:
    prose = (
        'The committee met on 3 May, 2019. "It works," she said (twice); costs rose 5% to $12.50.'
    )
    assert CLEANING_STEPS[step](prose) == prose


def test_passage_steps_apply_to_documents_only() -> None:
    fragment = "and the rest was lost. The trial ended early."
    assert clean_text(fragment, ["snippet_fragments"], passage=True) == "The trial ended early."
    assert (
        clean_text(fragment, ["snippet_fragments"]) == fragment
    )  # questions and answers keep their text


def test_lines_skipped_by_the_detokenizer_hint_are_what_the_detokenizer_would_return():
    from nltk.tokenize.treebank import TreebankWordDetokenizer  # the oracle: NLTK itself

    from longbench100.sources.cleaning import detokenizer_acts_on

    lines = [
        "The committee met on 3 May, 2019.",
        "  indented line with  two spaces  ",
        "costs $5 and 10% more",
        "e.g. the U.S. Army's 3rd unit",
        "a-b c/d [x] (y) {z}",
        "x == y; z",
    ]
    for line in lines:
        assert not detokenizer_acts_on(line), line
        assert TreebankWordDetokenizer().detokenize(line.split(" ")) == line.strip()
    assert (
        CLEANING_STEPS["detokenize"]("  What 's this ?\n  plain line  ")
        == "What's this?\nplain line"
    )


def test_what_the_detokenizer_acts_on_is_found_as_one_case_blind_regex_finds_it():
    import random
    import re

    from longbench100.sources.cleaning import detokenizer_acts_on

    one_regex = re.compile(  # the rule as one regex: slower, and the oracle
        r"``|''|\s[,.;:?!%)\]}>'\"]|[(\[{<$#]\s|\sn't\b|(?i:\b(?:can\s+not|gon\s+na|got\s+ta|lem\s+me|wan\s+na|gim\s+me"
        r"|more\s+'n|d'\s+ye)\b)|\s'(?:t\s+is|t\s+was)\b|-[LR][RSC]B-"
    )
    bits = [
        "can",
        "CAN",
        "Can",
        "not",
        "NOT",
        "gon",
        "na",
        "got",
        "ta",
        "lem",
        "me",
        "wan",
        "gim",
        "gİm",
        "gım",
        "more",
        "MORE",
        "'n",
        "d'",
        "D'",
        "ye",
        "n't",
        "'t",
        "is",
        "was",
        " ",
        "  ",
        "\t",
        "\xa0",
        "\x1c",
        "\u2003",
        "x",
        "scan",
        "cannot",
        ",",
        ".",
        "?",
        ")",
        "(",
        "$",
        "``",
        "''",
        "'",
        '"',
        "-LRB-",
        "-RSB-",
        "-LXB-",
        "é",
        "K",
        "ſ",
        "_",
    ]
    rng = random.Random(4)
    lines = ["".join(rng.choice(bits) for _ in range(rng.randint(0, 12))) for _ in range(30_000)]
    found = [detokenizer_acts_on(line) for line in lines]
    assert found == [bool(one_regex.search(line)) for line in lines]
    assert 1000 < sum(found) < len(lines) - 1000
    assert detokenizer_acts_on("I gım me that") and detokenizer_acts_on(
        "We CAN\u2003NOT go"
    )  # case-blind beyond ASCII


def test_ascii_stand_ins_give_what_the_private_use_stand_ins_give():
    """The step guards a text with ASCII stand-ins unless it holds one (or a private-use one): on
    random token texts, some holding the stand-ins themselves, it gives what guarding every text
    with the private-use stand-ins gives."""
    import random

    from longbench100.sources import cleaning
    from longbench100.text.treebank_detokenizer import detokenize_line

    def with_private_use_stand_ins(text: str) -> str:
        guarded = cleaning._GUARDED
        return "\n".join(
            cleaning._unguard(detokenize_line(cleaning._guard(line, guarded)), guarded)
            if cleaning.detokenizer_acts_on(line)
            else line.strip()
            for line in text.split("\n")
        )

    tokens = [
        *('"', "--", "...", "-", "..", "``", "''", "'", "'s", "n't", "can", "not", "gon", "na"),
        *(".", ",", "?", "(", ")", "[", "$", "%", "word", "It", "\t", "\xa0", "\n", "\n"),
    ]
    rng = random.Random(3)
    kinds = {cleaning._GUARDED: 0, cleaning._ASCII_GUARDED: 0}
    for _ in range(3000):
        parts = [rng.choice(tokens) for _ in range(rng.randint(1, 16))]
        if rng.random() < 0.2:
            parts.append(rng.choice("^~|\ue000\ue001\ue002"))
        text = "".join(part + rng.choice([" ", " ", ""]) for part in parts)
        kinds[cleaning._stand_ins(text)] += 1
        assert CLEANING_STEPS["detokenize"](text) == with_private_use_stand_ins(text), repr(text)
    assert min(kinds.values()) > 300  # both kinds of stand-ins were used
    for stand_in in "^~|":  # held by the text: kept as it is, and the guarded strings come back
        text = f"x {stand_in} y , `` z '' -- w ... \"v\""
        assert CLEANING_STEPS["detokenize"](text) == f'x {stand_in} y, "z" -- w ... "v"'
