"""Text cleaning steps a registry entry can declare (``clean = [...]``), applied when its records are loaded.

Each step takes a text and returns the cleaned text; :func:`clean_text` applies a list of them in
the declared order. The steps are deliberately narrow, so a source opts into exactly the repairs
its upstream text needs:

- ``mojibake``: text that was UTF-8 decoded as Windows-1252 ("Itâ€™s") is repaired with ftfy's
  ``fix_encoding``, which only undoes encoding mix-ups (quotes, ligatures and widths are left alone).
- ``html``: markup is turned into plain text with inscriptis, which lays tables out row by row with
  the cell texts kept and separated by `` | ``. A ``<`` that does not open a well-formed tag
  ("p<0.05") stays literal text, and texts without any tag are left exactly as they are.
- ``transcript_markers``: meeting-transcript annotations written as a lowercase word in braces
  (``{disfmarker}``, ``{vocalsound}``, ``{pause}``, ``{gap}``, ``{comment}``) are dropped and the
  spaces around them tidied.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9_:-]*(?:\s[^<>]*)?/?>")
_LONE_ANGLE = re.compile(r"<(?!/?[A-Za-z][A-Za-z0-9_:-]*(?:\s[^<>]*)?/?>)")
_UNDERSCORE_ATTRIBUTE = re.compile(r"<(/?[A-Za-z][A-Za-z0-9]*)_")  # Natural Questions writes <Td_colspan="2">
_NON_ASCII_WORD = re.compile(r"[^ \t\n\r]*[^\x00-\x7f][^ \t\n\r]*")  # split at ASCII blanks only: "Ã\xa0" is one word
_TRANSCRIPT_MARKER = re.compile(r"\{[a-z]+\}")
_SPACE_RUN = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def fix_mojibake(text: str) -> str:
    """Repair UTF-8 text that was mis-decoded as Windows-1252 or Latin-1 ("canâ€™t" becomes "can’t").

    Mojibake is always non-ASCII and local to the word it garbles, so ftfy sees only the runs of
    non-blank characters that hold a non-ASCII one: the same result as fixing the whole text on
    review_summ, about five times faster on its long, mostly ASCII reviews.
    """
    if text.isascii():
        return text
    import ftfy

    return _NON_ASCII_WORD.sub(lambda match: ftfy.fix_encoding(match.group(0)), text)


def html_to_text(text: str) -> str:
    """Turn HTML markup into readable plain text, keeping table cell texts (`` | `` between cells)."""
    if not _TAG.search(text):
        return text
    import inscriptis
    from inscriptis.css_profiles import CSS_PROFILES
    from inscriptis.model.config import ParserConfig

    markup = _LONE_ANGLE.sub("&lt;", _UNDERSCORE_ATTRIBUTE.sub(r"<\1 ", text)).replace("\n", "<br>\n")
    config = ParserConfig(css=CSS_PROFILES["strict"], table_cell_separator=" | ")
    return _tidy(inscriptis.get_text(markup, config))


def drop_transcript_markers(text: str) -> str:
    """Remove ``{disfmarker}``-style annotations (a lowercase word in braces) and tidy the spaces left behind."""
    if "{" not in text:
        return text
    return _tidy(_TRANSCRIPT_MARKER.sub(" ", text))


def _tidy(text: str) -> str:
    """One space between words, no spaces at line ends, at most one blank line in a row."""
    lines = (_SPACE_RUN.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


CLEANING_STEPS: dict[str, Callable[[str], str]] = {
    "mojibake": fix_mojibake,
    "html": html_to_text,
    "transcript_markers": drop_transcript_markers,
}


def clean_text(text: str, steps: Sequence[str]) -> str:
    """Apply the named cleaning steps to ``text`` in order (names must be keys of :data:`CLEANING_STEPS`)."""
    for step in steps:
        text = CLEANING_STEPS[step](text)
    return text
