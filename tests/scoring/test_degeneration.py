"""Degeneration measures (scoring/metrics/degeneration.py): Rep-2 and the repeated-bigram share, by hand."""

import pytest

from longbench100.scoring.metrics.degeneration import rep_n, repeated_bigram_word_share, reply_words
from longbench100.scoring.secondary import secondary_metrics


@pytest.mark.parametrize(
    "text, rep2, share",
    [
        ("the cat sat on the mat", 0.0, 0.0),  # five distinct bigrams, none repeated
        ("the cat the cat the cat", 1 - 2 / 5, 1.0),  # bigrams: (the cat) x3, (cat the) x2
        ("a b c a b d", 1 - 4 / 5, 4 / 6),  # (a b) twice covers words 0, 1, 3, 4
        ("word", 0.0, 0.0),
        ("", 0.0, 0.0),
    ],
)
def test_rep_2_and_repeated_bigram_share_by_hand(text, rep2, share):
    words = reply_words(text)
    assert rep_n(words, 2) == pytest.approx(rep2)
    assert repeated_bigram_word_share(words) == pytest.approx(share)


def test_section_summaries_report_both_measures_beside_their_score():
    assert secondary_metrics("document_summarizing") == ("rep_2", "repeated_bigram_share")
