"""Where a listed item occurs in a text, word by word, and whether its document writes it as a name.

recalling's gold is what an annotator listed per chunk. Before an item counts it is tidied and checked
(ETHIC checked its labels by hand):

- tidied: a trailing possessive or mark goes ("Lydgate's", "Casaubon?" are "Lydgate", "Casaubon"); for names
  a transcript's speaker label loses the speech after it ("Grad B: Well" is "Grad B"), and a pair of names is
  two items ("Jane and Elizabeth");
- it occurs as whole words (case aside) in a chunk that listed it: "Ann" read inside "Anne" is not a
  mention, and neither are words that stand in different sentences ("Elizabeth.\\n\\nBennet");
- for names, its document writes every capitalised word of it (titles aside: "Master Linton") as a name's.
  English capitalises a name wherever it stands; a word the document writes in lower case more often than
  capitalised inside a sentence is a common word ("This", "However"; "Dear" in "Dear Harriet", "Boat" in
  "Ahab's Boat"), unless the document capitalises it inside sentences at least :data:`NAME_USES` times and at
  least one time in :data:`COMMON_RATIO` of its lower-case uses ("Will"). A one-word item must be
  capitalised inside a sentence somewhere in the document (an "Ah" or "Unluckily" that only ever opens a
  sentence shows no sign of being a name). A word after a title or an initial ("Mr. Lockwood") stands inside
  its sentence; words in capitals throughout (headings, "LIFE AND DEATH") are no evidence; chapter headings
  and Roman numerals ("CHAPTER XI", "IX") are not names, nor is a bare title ("Mrs") or initials alone.

The document, not the row's stretch of it, is the evidence for a name, so an item is a name or not at every
length alike. The occurrences also say which chunks mention a gold item: the chunks a reader must search (IC
by construction).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter, defaultdict

from longbench100.text.sentences import TITLE_ABBREVIATIONS

_WORD = re.compile(
    r"(?:[^\W_]|[\u0300-\u036f])+|§"
)  # letters, digits and combining accents (Gutenberg's _italics_ marks are not part of a word), and "§"
_JOINER = re.compile(
    r"[ \t\r\n.'’-]{1,5}"
)  # what may stand between two words of one name: "Mr. Darcy", "O'Brien", a wrapped line
_MARKS = re.compile(r"[^\w]{0,3}")  # ... and of one reference: "Section 4.2(b)", "§2"
_ROMAN = re.compile(r"M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_MARKS_AFTER = " \t\r\n?!.,;:"
_POSSESSIVE = re.compile(r"['’]s$")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_PAIR = re.compile(
    r"(?<!\s)\s+(?:and|&)\s+"
)  # from the start of a run of blanks only (linear in a long run)
ABBREVIATED_TITLES = TITLE_ABBREVIATIONS
"""Titles written short: the full stop after them ("Mr. Lockwood") does not end a sentence."""
TITLES = ABBREVIATED_TITLES | frozenset(
    "sir lady lord miss master madame monsieur captain doctor".split()
)
"""Words that stand before a name: an item of them alone ("Mrs", "Lady") is no name."""
HEADINGS = frozenset("chapter book volume part letter canto stave act scene".split())
"""Words that open a heading: an item that begins with one ("CHAPTER XI") is no name."""
NAME_USES = 5
"""Capitalised uses inside sentences that can make a word a name's however often the document also writes it in lower case."""
COMMON_RATIO = 10
"""... provided they are at least one in this many of its lower-case uses ("Will" in a novel where "will" is common)."""


def tidy_items(item: str, names: bool = True) -> list[str]:
    """The items in one listed ``item``: without a trailing possessive or mark ("Lydgate's" -> "Lydgate", "Pip!" ->
    "Pip"); for ``names`` also without the speech after a speaker's label ("Grad B: Well" -> "Grad B"), and a pair
    of capitalised names split ("Jane and Elizabeth" -> "Jane", "Elizabeth")."""
    if not names:
        return [_untrailed(item)]
    item = item.split(":", 1)[0]
    parts = _PAIR.split(item)
    if len(parts) == 1 or not all(part[:1].isupper() for part in parts):
        parts = [item]
    return [_untrailed(part) for part in parts]


def _untrailed(item: str) -> str:
    """``item`` without the marks and the possessive at its end (itself when nothing else is left)."""
    tidied = _POSSESSIVE.sub("", item.rstrip(_MARKS_AFTER)).rstrip(_MARKS_AFTER)
    return tidied or item


def item_key(item: str) -> tuple[str, ...]:
    """What two spellings of one item share: their words, case aside ("Mr. Darcy" and "Mr Darcy")."""
    return tuple(_fold(word) for word in _WORD.findall(item))


def _fold(text: str) -> str:
    """``text`` as compared case aside (NFC, case-folded)."""
    return unicodedata.normalize("NFC", text).casefold()


class MentionIndex:
    """The words of one text with their places, to find listed items in it as whole words."""

    def __init__(self, text: str) -> None:
        """Index ``text``'s words (runs of letters and digits, and "§") by their case-folded form."""
        self.text = text
        matches = list(_WORD.finditer(text))
        self.words = [_fold(match.group()) for match in matches]
        self.spans = [match.span() for match in matches]
        self.places: dict[str, list[int]] = defaultdict(list)
        for index, word in enumerate(self.words):
            self.places[word].append(index)

    def occurrences(self, item: str, name: bool = True) -> list[int]:
        """The start characters of ``item``'s occurrences as whole words, case aside: its words in a row, with
        nothing between them but, in a ``name``, a space, a line break, an apostrophe, a hyphen or a title's full
        stop, and otherwise (a reference: "Section 4.2(b)") up to three marks; never a paragraph break."""
        wanted = [_fold(word) for word in _WORD.findall(item)]
        return (
            [
                self.spans[index][0]
                for index in self.places.get(wanted[0], ())
                if self._joined(index, wanted, name)
            ]
            if wanted
            else []
        )

    def _joined(self, index: int, wanted: list[str], name: bool) -> bool:
        """Whether the words from ``index`` are ``wanted``, each joined to the next as within one name (or reference)."""
        if self.words[index : index + len(wanted)] != wanted:
            return False
        for position in range(index, index + len(wanted) - 1):
            gap = self.text[self.spans[position][1] : self.spans[position + 1][0]]
            if _PARAGRAPH_BREAK.search(gap) or not (_JOINER if name else _MARKS).fullmatch(gap):
                return False
            if name and "." in gap and not _abbreviation(self.words[position]):
                return False
        return True


class WordCases:
    """How one document writes each word: how often in lower case, and how often capitalised inside a sentence."""

    def __init__(self, text: str) -> None:
        """Count ``text``'s words by case (a capitalised word counts only inside a sentence, and only when it is
        not in capitals throughout)."""
        self.lower: Counter[str] = Counter()
        self.capitalised_inside: Counter[str] = Counter()
        for match in _WORD.finditer(text):
            word = match.group()
            if word.islower():
                self.lower[_fold(word)] += 1
            elif word[0].isupper() and not word.isupper() and _inside_sentence(text, match.start()):
                self.capitalised_inside[_fold(word)] += 1

    def written_as_a_name(self, item: str) -> bool:
        """Whether the document writes ``item`` as a name (module docstring)."""
        words = _WORD.findall(item)
        named = [
            word for word in words if len(word) > 1 and word[0].isupper()
        ]  # initials and particles aside
        if not named or _fold(named[0]) in HEADINGS or all(_fold(word) in TITLES for word in named):
            return False
        if all(_ROMAN.fullmatch(word) for word in words):
            return False
        if len(words) == 1 and self.capitalised_inside[_fold(named[0])] == 0:
            return False  # only ever opening a sentence: no sign that one word is a name ("Ah", "Unluckily")
        return all(
            self._name_word(_fold(word))
            for word in named
            if not _ROMAN.fullmatch(word) and _fold(word) not in TITLES
        )

    def _name_word(self, word: str) -> bool:
        """Whether the document writes ``word`` (case-folded) as a name's rather than as a common word."""
        inside, lower = self.capitalised_inside[word], self.lower[word]
        return lower <= inside or (inside >= NAME_USES and inside * COMMON_RATIO >= lower)


def _abbreviation(word: str) -> bool:
    """Whether a full stop after ``word`` (case-folded) ends an abbreviation, not a sentence: a short title or an initial."""
    return word in ABBREVIATED_TITLES or len(word) == 1


def _inside_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` stands inside a sentence: the nearest character before it that is not blank
    is a letter, a digit or a comma, or the full stop of a title or an initial ("Mr. Lockwood", "J. Smith")."""
    before = text[max(0, start - 40) : start].rstrip(" \t_")  # "_" opens Gutenberg's italics
    if not before:
        return False
    if before[-1] == ".":
        previous = re.search(r"[^\W_]+$", before[:-1])
        return previous is not None and _abbreviation(_fold(previous.group()))
    return before[-1].isalnum() or before[-1] == ","


def chunk_of(start: int, chunk_starts: list[int]) -> int:
    """The index of the chunk (starting at ``chunk_starts``, ascending) that holds character ``start``."""
    return bisect_right(chunk_starts, start) - 1
