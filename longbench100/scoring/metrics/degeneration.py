"""Degeneration measures of a reply, as ETHIC reports them for long outputs (summaries, recall lists).

Both read the reply's lower-cased words (``\\w+`` runs) and ignore the gold: they describe the reply,
and higher means more repetition (they are secondary figures, shown beside a task's score and never
part of LongScore).

- ``rep_2``: Rep-n for n = 2, ``1 - |distinct bigrams| / (words - 1)``; 0 for a reply under two words.
- ``repeated_bigram_share``: the share of the reply's words that lie inside a bigram occurring more
  than once in it (a model looping on a phrase scores near 1).
"""

import re
from collections import Counter

from longbench100.folders.data_records import DataRecord

_WORD = re.compile(r"\w+")


def reply_words(text: str) -> list[str]:
    """The reply's lower-cased words."""
    return _WORD.findall(text.lower())


def rep_n(words: list[str], n: int) -> float:
    """Rep-n: ``1 - distinct n-grams / all n-grams`` (0 when there is no n-gram)."""
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def repeated_bigram_word_share(words: list[str]) -> float:
    """The share of ``words`` covered by a bigram that occurs at least twice (0 for under two words)."""
    bigrams = [tuple(words[i : i + 2]) for i in range(len(words) - 1)]
    counts = Counter(bigrams)
    covered: set[int] = set()
    for index, bigram in enumerate(bigrams):
        if counts[bigram] > 1:
            covered.update((index, index + 1))
    return len(covered) / len(words) if words else 0.0


def rep_2(prediction: str, record: DataRecord) -> float:
    """Metric ``rep_2``: Rep-2 of the reply."""
    return rep_n(reply_words(prediction), 2)


def repeated_bigram_share(prediction: str, record: DataRecord) -> float:
    """Metric ``repeated_bigram_share``: the share of the reply's words inside a repeated bigram."""
    return repeated_bigram_word_share(reply_words(prediction))
