"""Where a listed item occurs in a text, word by word, and whether its document writes it as a name.

recalling's gold is what an annotator listed per chunk. Two things are checked before an item counts (ETHIC
checked its labels by hand):

- the item occurs in the row's text as whole words (case aside): "Ann" read inside "Anne" is not a mention;
- for names, the document writes the item's first word as a name's. English capitalises a name wherever it
  stands; a word the document writes in lower case more often than capitalised inside a sentence is a
  common word ("This", "However", "Yes"; "Dear" in "Dear Harriet", "There" in "There Leviathan"), unless the
  document capitalises it inside sentences again and again ("Will", "Lady" in "Lady Chettam"). A one-word
  item must be capitalised inside a sentence somewhere in the document (an "Ah" or "Unluckily" that only ever
  opens a sentence shows no sign of being a name), and a name has at least two letters ("I", "O").

The document, not the row's stretch of it, is the evidence: a name that opens every sentence it stands in
within eight chunks is written inside a sentence elsewhere, and an item gets the same verdict at every
length. The occurrences also say which chunks mention a gold item: the chunks a reader must search (IC by
construction).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict

_WORD = re.compile(r"\w+")
NAME_USES = 5
"""Capitalised uses inside sentences that make a word a name's however often the document also writes it in lower case."""


class MentionIndex:
    """The words of one text with their places, to find listed items in it as whole words."""

    def __init__(self, text: str) -> None:
        """Index ``text``'s words (runs of letters, digits and underscores) by their lower-cased form."""
        self.text = text
        self.words = [match.group().lower() for match in _WORD.finditer(text)]
        self.starts = [match.start() for match in _WORD.finditer(text)]
        self.places: dict[str, list[int]] = defaultdict(list)
        for index, word in enumerate(self.words):
            self.places[word].append(index)

    def occurrences(self, item: str) -> list[int]:
        """The start characters of ``item``'s occurrences as whole words, case aside (its words in a row,
        whatever stands between them)."""
        wanted = [word.lower() for word in _WORD.findall(item)]
        if not wanted:
            return []
        return [self.starts[index] for index in self.places.get(wanted[0], ())
                if self.words[index:index + len(wanted)] == wanted]


class WordCases:
    """How one document writes each word: how often in lower case, and how often capitalised inside a sentence."""

    def __init__(self, text: str) -> None:
        """Count ``text``'s words by case (a capitalised word counts only where it stands inside a sentence)."""
        self.lower: Counter[str] = Counter()
        self.capitalised_inside: Counter[str] = Counter()
        for match in _WORD.finditer(text):
            word = match.group()
            if word.islower():
                self.lower[word] += 1
            elif word[0].isupper() and _inside_sentence(text, match.start()):
                self.capitalised_inside[word.lower()] += 1

    def written_as_a_name(self, item: str) -> bool:
        """Whether the document writes ``item`` as a name (module docstring): two letters or more; its first word
        (initials aside) not written in lower case more often than capitalised inside a sentence, unless
        capitalised inside sentences :data:`NAME_USES` times or more; and a one-word item capitalised inside a
        sentence at least once."""
        words = _WORD.findall(item)
        if not words or sum(char.isalpha() for char in item) < 2:
            return False
        named = [word for word in words if len(word) > 1] or words  # initials aside: "M. Gardiner" is judged by "Gardiner"
        first = named[0].lower()
        inside, lower = self.capitalised_inside[first], self.lower[first]
        if len(words) == 1 and inside == 0:
            return False
        return lower <= inside or inside >= NAME_USES


def _inside_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` stands inside a sentence: the nearest character before it that is not blank
    is a letter, a digit or a comma (not a sentence's end, a quotation mark, a dash or a line start)."""
    before = text[max(0, start - 40):start].rstrip(" \t")
    return bool(before) and (before[-1].isalnum() or before[-1] == ",")


def chunks_mentioning(index: MentionIndex, items: list[str], chunk_starts: list[int]) -> list[bool]:
    """For chunks that start at ``chunk_starts`` (characters of the indexed text, ascending), whether each holds
    an occurrence of one of ``items``."""
    marked = [False] * len(chunk_starts)
    for item in items:
        for start in index.occurrences(item):
            marked[bisect_right(chunk_starts, start) - 1] = True
    return marked
