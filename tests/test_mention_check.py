"""annotation/mention_check: listed items are found as whole words, a document's own capitalisation decides what
is a name, and chunks are marked where a gold item occurs."""

from __future__ import annotations

from longbench100.annotation.mention_check import NAME_USES, MentionIndex, WordCases, chunks_mentioning

NOVEL = (
    "This was the house. However, nobody came. Then Ishmael spoke to Queequeg, and Queequeg nodded.\n"
    "Ah, said he. Yes, the whale was near, and this whale was white. Whale! cried the men.\n"
    "Unluckily the boat sank. Sarah came at dawn. The boy saw Sarah on the quay.\n"
    "Daniel Webster spoke first. I saw it. My dear Harriet, wrote Emma. Dear Harriet was kind.\n"
    "M. Gardiner signed the letter. I'm sure the ship left the Lee Shore behind."
)


def test_items_are_found_as_whole_words_case_aside():
    index = MentionIndex("Anne met Ann; then ANN and ann-marie left. Mr. Darcy bowed, and Mr Darcy sat.")
    assert index.occurrences("Ann") == [9, 19, 27]  # not inside "Anne"; "ann-marie" holds the word "ann"
    assert index.occurrences("Mr. Darcy") == [43, 64]  # the words in a row, whatever stands between them
    assert index.occurrences("Darcy Mr") == []
    assert index.occurrences("...") == []


def test_common_words_that_open_sentences_are_not_names():
    cases = WordCases(NOVEL)
    for word in ("This", "However", "Then", "Yes", "Ah", "Unluckily", "Whale"):
        assert not cases.written_as_a_name(word), word
    for name in ("Ishmael", "Queequeg", "Sarah"):  # Sarah opens one sentence and stands inside another
        assert cases.written_as_a_name(name), name


def test_several_words_are_judged_by_the_first_that_is_not_an_initial():
    cases = WordCases(NOVEL)
    assert cases.written_as_a_name("Daniel Webster")  # only ever opens a sentence, but it is two capitalised words
    assert not cases.written_as_a_name("Dear Harriet")  # "dear" is written in lower case inside a sentence
    assert cases.written_as_a_name("M. Gardiner")  # judged by "Gardiner", not the initial
    assert not cases.written_as_a_name("I") and not cases.written_as_a_name("O")


def test_a_word_capitalised_inside_sentences_often_enough_is_a_name_however_common():
    often = " ".join(["They will go, said Will."] * NAME_USES) + " " + " ".join(["We will see."] * 20)
    rarely = " ".join(["They will go, said Will."] * (NAME_USES - 1)) + " " + " ".join(["We will see."] * 20)
    assert WordCases(often).written_as_a_name("Will")
    assert not WordCases(rarely).written_as_a_name("Will")
    assert WordCases("Then Will came. They met Will. We will go.").written_as_a_name("Will")  # 1 lower, 1 inside


def test_chunks_are_marked_where_an_item_occurs():
    text = "Ishmael rows. " + "Nobody here. " + "The sea. " + "Then queequeg sang."
    starts = [0, 14, 27, 36]
    index = MentionIndex(text)
    assert chunks_mentioning(index, ["Ishmael", "Queequeg"], starts) == [True, False, False, True]
    assert chunks_mentioning(index, [], starts) == [False] * 4
