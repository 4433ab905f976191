"""annotation/mention_check: listed items are found as whole words, a document's own capitalisation decides what
is a name, and chunks are marked where a gold item occurs."""

from __future__ import annotations

import types

from longbench100.annotation.mention_check import (
    NAME_USES,
    MentionIndex,
    WordCases,
    item_key,
    tidy_items,
)
from longbench100.tasks.one_document import Chunk
from longbench100.tasks.recalling import CheckedMentions, Recalling

NOVEL = (
    "This was the house. However, nobody came. Then Ishmael spoke to Queequeg, and Queequeg nodded.\n"
    "Ah, said he. Yes, the whale was near, and this whale was white. Whale! cried the men.\n"
    "Unluckily the boat sank. Sarah came at dawn. The boy saw Sarah on the quay.\n"
    "Daniel Webster spoke first. I saw it. My dear Harriet, wrote Emma. Dear Harriet was kind.\n"
    "M. Gardiner signed the letter. I'm sure the ship left the Lee Shore behind."
)


def test_items_are_found_as_whole_words_case_aside():
    index = MentionIndex(
        "Anne met Ann; then ANN and ann-marie left. Mr. Darcy bowed, and Mr Darcy sat."
    )
    assert index.occurrences("Ann") == [
        9,
        19,
        27,
    ]  # not inside "Anne"; "ann-marie" holds the word "ann"
    assert index.occurrences("Mr. Darcy") == [
        43,
        64,
    ]  # the words in a row, whatever stands between them
    assert index.occurrences("Darcy Mr") == []
    assert index.occurrences("...") == []


def test_common_words_that_open_sentences_are_not_names():
    cases = WordCases(NOVEL)
    for word in ("This", "However", "Then", "Yes", "Ah", "Unluckily", "Whale"):
        assert not cases.written_as_a_name(word), word
    for name in (
        "Ishmael",
        "Queequeg",
        "Sarah",
    ):  # Sarah opens one sentence and stands inside another
        assert cases.written_as_a_name(name), name


def test_several_words_are_judged_by_the_first_that_is_not_an_initial():
    cases = WordCases(NOVEL)
    assert cases.written_as_a_name(
        "Daniel Webster"
    )  # only ever opens a sentence, but it is two capitalised words
    assert not cases.written_as_a_name(
        "Dear Harriet"
    )  # "dear" is written in lower case inside a sentence
    assert cases.written_as_a_name("M. Gardiner")  # judged by "Gardiner", not the initial
    assert not cases.written_as_a_name("I") and not cases.written_as_a_name("O")


def test_a_word_capitalised_inside_sentences_often_enough_is_a_name_however_common():
    often = (
        " ".join(["They will go, said Will."] * NAME_USES) + " " + " ".join(["We will see."] * 20)
    )
    rarely = (
        " ".join(["They will go, said Will."] * (NAME_USES - 1))
        + " "
        + " ".join(["We will see."] * 20)
    )
    assert WordCases(often).written_as_a_name("Will")
    assert not WordCases(rarely).written_as_a_name("Will")
    assert WordCases("Then Will came. They met Will. We will go.").written_as_a_name(
        "Will"
    )  # 1 lower, 1 inside


def test_chunks_are_marked_where_a_kept_item_occurs():
    text = (
        "Then Ishmael rows. "
        + "Nobody is here. "
        + "The sea is calm. "
        + "We met Queequeg, and Ishmael sang."
    )
    starts = [0, 19, 35, 52]
    assert recalled(text, [["Ishmael"], [], [], ["Queequeg"]], starts).in_chunks == [
        True,
        False,
        False,
        True,
    ]
    assert (
        recalled(text, [[], [], [], ["Sang"]], starts).in_chunks == [False] * 4
    )  # nothing kept, nothing marked


def test_a_word_after_a_title_or_an_initial_stands_inside_its_sentence():
    cases = WordCases(
        "Mr. Lockwood came. Then Mr. Lockwood left. J. Smith wrote. Thank you, Sir. Then we went."
    )
    assert cases.written_as_a_name("Lockwood")  # only ever after "Mr.", never in lower case
    assert cases.written_as_a_name("Smith")
    assert not cases.written_as_a_name(
        "Then"
    )  # "Sir." ends a sentence: a long title is not an abbreviation


def test_headings_numerals_titles_and_capitals_are_no_evidence_of_a_name():
    text = (
        "CHAPTER XI\n\nLIFE AND DEATH\n\nShe and he went on, and on, and AND AND AND. Mrs. Reed came, and so did "
        "Mrs. Reed again. Book of hours, said Jane. The _Demeter_ sailed, and the _Demeter_ sank."
    )
    cases = WordCases(text)
    for item in ("CHAPTER XI", "XI", "IX", "Mrs", "Lady", "And"):
        assert not cases.written_as_a_name(item), item
    assert cases.written_as_a_name(
        "Demeter"
    )  # Gutenberg's _italics_ marks are not part of the word
    assert MentionIndex(text).occurrences("Demeter") == [
        text.index("Demeter"),
        text.rindex("Demeter"),
    ]


def test_a_common_word_needs_many_capitalised_uses_to_count_as_a_name():
    no = (
        " ".join(["He said no, and no again."] * 60)
        + " "
        + " ".join(["They cried, No more."] * NAME_USES)
    )
    assert not WordCases(no).written_as_a_name(
        "No"
    )  # 5 capitalised inside against 120 in lower case
    assert not WordCases(NOVEL + " The boat sank. Ahab's boat was lost.").written_as_a_name(
        "Ahab's Boat and Crew"
    )


def test_items_are_tidied_and_names_do_not_span_sentences():
    assert [
        tidy_items(item)
        for item in (
            "Lydgate's",
            "Casaubon?",
            "Pip!",
            "Mr. Darcy",
            "Jones’s",
            "Jane and Mrs. Bennet",
            "Republic of Liberty",
            "salt and pepper",
            "Grad B: Well Th",
        )
    ] == [
        ["Lydgate"],
        ["Casaubon"],
        ["Pip"],
        ["Mr. Darcy"],
        ["Jones"],
        ["Jane", "Mrs. Bennet"],
        ["Republic of Liberty"],
        ["salt and pepper"],
        ["Grad B"],
    ]
    assert tidy_items("Section 2: Definitions and Terms", names=False) == [
        "Section 2: Definitions and Terms"
    ]
    index = MentionIndex(
        "Then Elizabeth.\n\nBennet came. Elizabeth Bennet smiled; Elizabeth\nBennet left. See § 2 and 2."
    )
    assert (
        len(index.occurrences("Elizabeth Bennet")) == 2
    )  # a wrapped line joins a name; a paragraph break does not
    assert len(index.occurrences("§ 2")) == 1


def test_a_title_that_is_also_a_common_word_does_not_sink_the_name_it_opens():
    text = (
        " ".join(["The master of the house, the master said."] * 30)
        + " We met Master Linton, and Master Linton bowed."
    )
    cases = WordCases(text)
    assert cases.written_as_a_name("Master Linton")
    assert not cases.written_as_a_name("Master")


def test_a_reference_may_hold_marks_between_its_words_but_a_name_may_not():
    index = MentionIndex(
        "Under Section 12.3 and Section 4.2(b), see §2.\n\nSection 12.\n\n3 is not it."
    )
    assert (
        len(index.occurrences("Section 12.3", name=False)) == 1
        and index.occurrences("Section 12.3") == []
    )
    assert len(index.occurrences("Section 4.2(b)", name=False)) == 1
    assert len(index.occurrences("§ 2", name=False)) == 1


def test_decomposed_accents_line_endings_and_spaced_blank_lines():
    decomposed = "Then Rene\u0301e met \u00c9mile, and Rene\u0301e smiled.\r\nMr.\r\nDarcy bowed. Elizabeth\n \nBennet left."
    index = MentionIndex(decomposed)
    assert (
        len(index.occurrences("Renée")) == 2 and len(index.occurrences("Rene\u0301e")) == 2
    )  # NFC or NFD item
    assert (
        WordCases(decomposed).written_as_a_name("Re\u0301ne\u0301e") is False
    )  # "Renéee" is no word of the text
    assert WordCases(decomposed).written_as_a_name("Renée")
    assert len(index.occurrences("Mr. Darcy")) == 1  # a Windows line break inside a name
    assert (
        index.occurrences("Elizabeth Bennet") == []
    )  # a blank line holding a space is still a paragraph break


def test_spellings_of_one_item_share_a_key():
    assert item_key("Mr. Darcy") == item_key("Mr Darcy") == item_key("MR. DARCY")
    assert item_key("Strauß") == item_key("STRAUSS")
    assert item_key("...") == ()
    assert tidy_items("Pip" + " " * 20_000 + "!") == ["Pip"]


def recalled(text: str, lists: list[list[str]], cuts: list[int]) -> CheckedMentions:
    """recalling's checked gold for one document of chunks starting at ``cuts``, listed as ``lists``."""
    chunks = [
        Chunk(text[start:end].strip(), 0, start, end)
        for start, end in zip(cuts, [*cuts[1:], len(text)])
    ]
    annotations = types.SimpleNamespace(
        mentions=lambda kind, chunk: lists[[c.text for c in chunks].index(chunk)]
    )
    document = types.SimpleNamespace(text=text, id="d")
    task = types.SimpleNamespace(
        need_annotations=lambda: annotations,
        kind_for=lambda _: "people",
        entity=lambda _: types.SimpleNamespace(proper_names=True),
        word_cases=lambda d: WordCases(d.text),
    )
    return Recalling.checked(task, chunks, document)


def test_the_gold_keeps_one_spelling_per_item_whatever_came_first():
    text = "Maxim de Winter came. Mrs. de Winter smiled. Then Mrs. de Winter walked, and Mrs. de Winter sat."
    second = text.index("Then")
    assert recalled(text, [["Mrs. De Winter"], ["Mrs. de Winter"]], [0, second]).items == [
        "Mrs. de Winter"
    ]
    assert recalled(text, [["Mrs. de Winter"], ["Mrs. De Winter"]], [0, second]).items == [
        "Mrs. de Winter"
    ]
    text = "Then Mr. Darcy bowed, and later Mr Darcy sat. Jane and Elizabeth walked; then Jane met Elizabeth."
    checked = recalled(text, [["Mr. Darcy", "Mr Darcy", "Jane and Elizabeth", "This"]], [0])
    assert (
        checked.items == ["Mr. Darcy", "Jane", "Elizabeth"]
        and checked.tidied - len(checked.items) == 1
    )  # "This" only; a pair is two items
