"""Where sentences end in passage text: the places the generator may cut a filler or insert a sentence.

Segmentation comes from ``sentencex`` (Wikimedia's rule-based segmenter, with per-language
abbreviation lists); docs/benchmarks.md compares it with pysbd, syntok and blingfire. On top of it a
boundary must also

- close with terminal punctuation (``.``, ``!``, ``?`` or ``…``, optionally followed by closing
  quotes or brackets), so a bare heading or a list line is never a sentence end;
- be followed by whitespace and then no lower-case letter ("the hit E! reality series"), also when
  dashes, dots or brackets come first ("bravado? -- he said"), or by the end of the text;
- not end in an initial (``J.``), a dotted abbreviation (``U.S.``, ``a.m.``) or a title or other
  abbreviation that usually continues (``Dr.``, ``Gov.``, ``Ft.``). This drops a few true ends
  ("moved to the U.S.") but never splits a sentence the segmenter got wrong: a lost boundary costs a
  few tokens of fill, a wrong one cuts a sentence in half.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import lru_cache

import sentencex

LANGUAGE = "en"
MIN_FILLER_CHARS = (
    20  # a cut-off filler shorter than this is dropped (no bare headings or fragments)
)
_MARGIN = 400  # characters segmented past a limit, so a sentence running over it is read whole
_NEXT_WORD_REACH = 40  # characters searched past a sentence end for the next word's first letter
READS_PAST_LIMIT = _MARGIN + _NEXT_WORD_REACH
"""How far past its ``limit`` :func:`sentence_ends_from_last` reads a text longer than that: a text
cut this far past the limit has the same sentence ends there."""
# sentencex reads a quotation whole, as far as its closing quote, so where one runs past the margin the ends found in
# the opening can differ from the whole text's (at 4 limits in each of 789 real documents: 3,882 ends only in the
# opening, mostly inside quoted speech, and 668 only in the whole text); each is a sentence end by the rules below
_WINDOW = 8192  # characters of a long text segmented at a time, from its end back
_WORD_CHARACTER = re.compile(r"\w")
_TERMINALS = ".!?…"
_CLOSERS = "\"'”’)]"  # closing quotes and brackets a terminal mark may be followed by
_ABBREVIATIONS = (
    "Mr|Mrs|Ms|Mx|Dr|Prof|Gov|Sen|Rep|Pres|Gen|Col|Lt|Maj|Sgt|Capt|Cmdr|Adm|Rev|Hon|St|Ste|Ft|Mt|Jr|Sr|"
    "No|Nos|vs|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Inc|Corp|Co|Ltd|Bros|Dept|Univ|Ave|Blvd|Rd|"
    "Fig|Figs|Eq|Vol|Ch|pp|cf|al|approx|est|Ph|Mass|Calif|Tex|Fla|Pa|Wash|Ariz|Conn|Ill|Ind|Mich|Minn"
)
_ABBREVIATION = re.compile(rf"""(?:[A-Za-z]\.){{2,}}|[A-Z]\.|(?:{_ABBREVIATIONS})\.""")

# The other sentence rules of the package, side by side. Each keeps the exact behaviour its user had,
# since outputs and scores depend on them; they differ on purpose in what they accept around the mark.

REPLY_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9])")
"""Between two sentences of a reply or a reference (the metrics' sentence split, ``text/answers.py``):
``.``, ``!`` or ``?`` (one closing quote or bracket may follow), whitespace, then an upper-case letter
or a digit (an opening quote or bracket may come first). The caller skips a break after one of
:data:`REPLY_ABBREVIATIONS` or an initial, found by :data:`REPLY_LAST_WORD`."""
REPLY_LAST_WORD = re.compile(r"(\S+)\.[\"')\]]?$")
"""The last word before a full stop (and one closing mark) at the end of a piece of a reply."""
REPLY_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc fig e.g i.e u.s u.k inc corp co ltd".split()
)
"""Case-folded words whose full stop does not end a sentence of a reply."""
TERMINAL_THEN_BLANK = re.compile(r"(?<=[.!?])\s+")
"""The loosest rule: whitespace after ``.``, ``!`` or ``?`` (the no-model baselines' sentences)."""
SOURCE_SENTENCE_END = re.compile(r"[.!?]([\"'”’)\]]*\s+)(?=[\"'“‘(\[]?[A-Z0-9])")
"""A sentence end in source text being cleaned: a terminal mark, then (group 1, the break between
the sentences) any closing quotes (straight or curly) or brackets and whitespace, then an
upper-case letter or a digit after any opening marks. The mark is matched, not looked behind for,
so the search skips ahead to the next mark (:func:`split_source_sentences`)."""
LABEL_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]?[A-Z0-9])")
"""A sentence end in an annotator's chunk summary: as :data:`SOURCE_SENTENCE_END`, with round
brackets only and at most one opening mark."""
LABEL_LAST_SENTENCE_END = re.compile(r"[.!?][\"'”’)]*(?=[^.!?]*$)")
"""The last terminal mark (and its closing quotes) of an annotator's summary."""
TITLE_ABBREVIATIONS = frozenset(
    "mr mrs ms mme mlle messrs dr st rev prof capt col gen lt sgt jr sr".split()
)
"""Case-folded titles whose full stop does not end a sentence inside a person's name ("Mr. Darcy")."""


def split_source_sentences(text: str) -> list[str]:
    """``text`` split at the breaks of :data:`SOURCE_SENTENCE_END` (each sentence keeps its terminal
    mark; the break itself goes)."""
    sentences = []
    start = 0
    for end in SOURCE_SENTENCE_END.finditer(text):
        sentences.append(text[start : end.start(1)])
        start = end.end()
    sentences.append(text[start:])
    return sentences


def sentence_ends(text: str) -> list[int]:
    """Character offsets just after each sentence end of ``text`` (see the module rules), in order."""
    return list(_all_ends(text))


def sentence_ends_from_last(text: str, limit: int) -> Iterator[int]:
    """The sentence ends of ``text`` at or before ``limit``, from the last back, each checked against the rules only
    when it is reached: a filler cut takes the last end whose opening fits, which is most often the last or the one
    before. Only the opening of the text is segmented (plus :data:`_MARGIN`), so cutting a short filler from a long
    document stays cheap; and a long opening is segmented from its end back, a few paragraphs at a time
    (:func:`_paragraph_windows`), so the last ends of a long text cost as little as a short text's."""
    stop = len(text) if limit + _MARGIN >= len(text) else limit + _MARGIN
    if stop <= 2 * _WINDOW and stop == len(text):
        ends = _all_ends(text)
        yield from reversed(ends[: bisect.bisect_right(ends, limit)])
        return
    for start, end in _paragraph_windows(text, stop):
        spans = sentencex.get_sentence_boundaries(LANGUAGE, text[start:end])
        for span in reversed(spans):
            found = _checked_end(text, span, start)
            if found is not None and found <= limit:
                yield found


def _paragraph_windows(text: str, stop: int) -> Iterator[tuple[int, int]]:
    """``text[:stop]`` as consecutive stretches from its end back, each starting where a paragraph
    starts (:func:`_paragraph_start_before`) about :data:`_WINDOW` characters before the stretch
    after it ends, the last at 0. The segmenter splits a text at its paragraph breaks first and
    reads each paragraph alone, so a stretch from a paragraph start on has the sentences the whole
    text has there."""
    end = stop
    while end > 0:
        start = _paragraph_start_before(text, end - _WINDOW) if end > 2 * _WINDOW else 0
        yield start, end
        end = start


def _paragraph_start_before(text: str, at: int) -> int:
    """The last place at or before ``at`` where a paragraph starts as the segmenter reads ``text``
    (0 when there is none): just after exactly two newlines, with no newline or carriage return
    before or after them, so no paragraph break that the segmenter finds runs across it."""
    found = text.rfind("\n\n", 0, max(0, at))
    while found > 0:
        start = found + 2
        if text[found - 1] not in "\n\r" and text[start : start + 1] not in ("\n", "\r", ""):
            return start
        found = text.rfind("\n\n", 0, found + 1)
    return 0


def is_sentence_end(sentence: str) -> bool:
    """Whether ``sentence`` (stripped of trailing whitespace) closes with terminal punctuation that is no abbreviation."""
    body = (
        sentence[:-1] if sentence.endswith("\n") else sentence
    )  # as a regex's `$`, which also matches before a final newline
    closed = body.rstrip(_CLOSERS)
    return (
        bool(closed)
        and closed[-1] in _TERMINALS
        and not (body.endswith(".") and _abbreviated_end(body))
    )


def _abbreviated_end(body: str) -> bool:
    """Whether ``body`` ends in an initial, a dotted abbreviation or a listed one, standing as a word of its own: its
    last run of word characters and dots is one of :data:`_ABBREVIATION` (a regex search for the abbreviation after
    the start or a character that is neither, anchored at the end, would try each character of a long sentence)."""
    start = len(body)
    while start and (
        body[start - 1].isalnum() or body[start - 1] in "._"
    ):  # \w: what str.isalnum() accepts, and _
        start -= 1
    return _ABBREVIATION.fullmatch(body, start) is not None


@lru_cache(maxsize=512)
def _all_ends(text: str) -> tuple[int, ...]:
    """Every sentence end of a whole text, cached per text (counting_stars renders the same passages several times)."""
    ends = (_checked_end(text, span) for span in sentencex.get_sentence_boundaries(LANGUAGE, text))
    return tuple(end for end in ends if end is not None)


def _checked_end(text: str, span: dict, offset: int = 0) -> int | None:
    """Where the segmenter's sentence ``span`` of ``text[offset:]`` (or a stretch of it from there) ends in
    ``text``, trailing blanks left out, if that is a sentence end by the module rules; else ``None``."""
    sentence = span["text"].rstrip()
    end = offset + span["start_index"] + len(sentence)
    if sentence and _next_sentence_may_start(text, end) and is_sentence_end(sentence):
        return end
    return None


def _next_sentence_may_start(text: str, end: int) -> bool:
    """Whether the text after ``end`` can open a new sentence: the end of the text, or whitespace and then,
    past any punctuation, no lower-case letter."""
    if end == len(text):
        return True
    following = _WORD_CHARACTER.search(
        text, end, end + _NEXT_WORD_REACH
    )  # the next word's first character, past blanks and punctuation
    return text[end].isspace() and not (following and following.group().islower())
