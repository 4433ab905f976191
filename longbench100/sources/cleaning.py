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
- ``wiki_markup``: Wikipedia source left in the text: ``<ref ...>`` citations (closed, self-closing
  or cut off by a template end), ``{{...}}`` templates, the "( edit )" links after headings, and
  ``[[...]]`` links (a link becomes its label; a ``[[`` that opens no link goes).
- ``wiki_page_chrome`` (documents only): a saved Wikipedia page's own menus: "Jump to: navigation,
  search", and everything from the "Retrieved from" permanent link on (categories, language menu,
  footer); empty bullet lines go too.
- ``page_footers``: a filed contract's page furniture on lines of their own: the filing's "Source:
  COMPANY, 10-K, 1/2/2020" footer, page numbers ("7", "- 7 -", "Page 7 of 20") and the footnote
  saying what was omitted on the page.
- ``paper_markup``: the placeholders of S2ORC-style papers: runs of ``BIBREFn`` become a numbered
  citation "[1, 2]", ``TABREFn`` / ``FIGREFn`` / ``SECREFn`` become the number n + 1 (the text
  already says "Table"), ``INLINEFORMn`` / ``DISPLAYFORMn`` (also ``DISPLAY_FORMn``) become "[formula]", and
  display and inline LaTeX (``$\\mathbf {w_{i1}}$``, also ``$ w_{t}$``, ``\\(x\\)``, ``\\[x\\]``) becomes its plain-text
  reading with pylatexenc.
- ``detokenize``: text split into Penn-Treebank tokens ("What 's", "`` best ''", "Russia ?") is
  joined back line by line with the rules of NLTK's ``TreebankWordDetokenizer`` (run by
  :mod:`longbench100.text.treebank_detokenizer`, which gives NLTK's output without importing it).
- ``contractions``: contractions whose apostrophe was lost ("don t", "you ll", "DMV s") get it back.
- ``gutenberg`` (documents only): a Project Gutenberg book keeps only the text between its "*** START OF
  ... ***" and "*** END OF ... ***" lines (the licence, header and "Produced by" credits go), and each
  paragraph's hard-wrapped lines are joined into one line (blank lines still separate paragraphs).
- ``replacement_chars``: U+FFFD left where an upstream byte was lost is removed.
- ``snippet_fragments`` (documents only): a passage cut out of a longer text that opens in the
  middle of a sentence loses that partial sentence, a line that another line of the passage opens
  with (snippets of one abstract that are prefixes of each other) goes, and a sentence repeated
  within the passage is kept once; a passage that is only a fragment becomes empty and is skipped.

Every text also has its HTML character references unescaped ("R&amp;D" becomes "R&D", also when
doubly escaped); see :func:`clean_text`.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Callable, Sequence

from longbench100.text.sentences import SOURCE_SENTENCE_END, split_source_sentences

_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9_:-]*(?:\s[^<>]*)?/?>")
_LONE_ANGLE = re.compile(r"<(?!/?[A-Za-z][A-Za-z0-9_:-]*(?:\s[^<>]*)?/?>)")
_UNDERSCORE_ATTRIBUTE = re.compile(
    r"<(/?[A-Za-z][A-Za-z0-9]*)_"
)  # Natural Questions writes <Td_colspan="2">
# a word's first non-ASCII character and the rest of the word, split at ASCII blanks only ("Ã\xa0"
# is one word)
_NON_ASCII_TO_WORD_END = re.compile(r"[^\x00-\x7f][^ \t\n\r]*")
_ASCII_BLANKS = " \t\n\r"
_TRANSCRIPT_MARKER = re.compile(r"\{[a-z]+\}")
_SPACE_RUN = re.compile(r"\t[ \t]*| [ \t]+")  # a run of spaces and tabs that is not one space
_BLANK_LINES = re.compile(r"\n{3,}")
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_WIKI_REF = re.compile(
    r"<ref\b[^<>]*/>|<ref\b[^<>]*>.*?</ref>|<ref\b[^\n]*?\}\}|</?ref\b[^<>]*>",
    re.IGNORECASE | re.DOTALL,
)
_WIKI_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_WIKI_EDIT = re.compile(
    r"[(\[] ?edit ?[)\]]", re.IGNORECASE
)  # dropped with the spaces and tabs before it
_WIKI_MATH = re.compile(
    r" ?\{\\displaystyle (?:[^{}]|\{[^{}]*\})*\}"
)  # a formula's LaTeX source after its rendering
_WIKI_LINK = re.compile(
    r"\[\[(?:[^\[\]|\n]{1,200}\|)?([^\[\]|\n]{1,200})\]\]"
)  # [[target|label]] -> label
_WIKI_BROKEN_LINK = re.compile(
    r"\[\[(?=[^\[\]\n]{0,200}(?:$|[^\]\n]\][^\]]|\n))|\[\[(?=[\"'])", re.MULTILINE
)
# the permanent link, quoted or in Treebank quotes, and all after it (with the blanks before it)
_WIKI_RETRIEVED = re.compile(r"Retrieved from\s*(?:\"|``)\s*https?://\S*wikipedia.*\Z", re.DOTALL)
_WIKI_JUMP = re.compile(r"Jump to\s*:\s*navigation\s*,\s*search[ \t]*")
_WIKI_BROWSER_TITLE = re.compile(
    r"\A(.+) - wikipedia[ \t]*\n\s*(?=\1[ \t]*\n)", re.IGNORECASE
)  # "X - wikipedia", then "X"
_EMPTY_BULLETS = re.compile(r"^[ \t]*\*[ \t]*\n", re.MULTILINE)
# a line of page furniture with the line end before it (the text is searched with a line end put in
# front): a pattern opening with a line end is looked for by that character, one opening with "^"
# is tried at every character
_PAGE_FURNITURE = re.compile(
    r"\n[ \t]*(?:Source: [^\n]{1,120}, \d{1,2}/\d{1,2}/\d{4}|Page \d{1,3}(?: of \d{1,3})?"
    r"|-?[ \t]*\d{1,3}[ \t]*-?|\[\*+\] Certain information on this page has been omitted[^\n]*)"
    r"[ \t]*(?=\n|\Z)"
)
_CITATION_RUN = re.compile(r"BIBREF(\d+)(?:\s*[,;]\s*(?:and\s+)?BIBREF\d+)*")
_CITATION = re.compile(r"BIBREF(\d+)")
_REFERENCE = re.compile(r"(?:TABREF|FIGREF|SECREF)(\d+)")
_FORMULA = re.compile(r"(?:INLINE_?FORM|DISPLAY_?FORM)\d+")
_DISPLAY_LATEX = re.compile(r"\$\$(.{1,2000}?)\$\$", re.DOTALL)
_PAREN_LATEX = re.compile(
    r"\\\((.{1,300}?)\\\)|\\\[(.{1,2000}?)\\\]", re.DOTALL
)  # \( x \) and \[ x \]
_INLINE_LATEX = re.compile(r"(?<![\\$])\$( ?)(?!\s)([^$\n]{1,300}?)\$(?!\$)")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+|[_^]\{|[_^][A-Za-z0-9]")
_FONT_MACROS = re.compile(
    r"\\(?:mathbf|mathrm|mathit|mathcal|mathbb|mathsf|mathtt|textbf|textit|textrm|texttt|boldsymbol|bm|operatorname)\s*"
)
_NEGATED_VERBS = "do|does|did|is|are|was|were|ca|could|would|should|wo|have|has|had|ai|need|must"
_CONTRACTED_PRONOUNS = "I|you|we|they|he|she|it|that|there|who|what|let"
_CONTRACTION_OPENERS = "".join(
    sorted({word[0].lower() for word in f"{_NEGATED_VERBS}|{_CONTRACTED_PRONOUNS}".split("|")})
)  # the letters those words start with
# "don t", "you ll"; that a letter one of the words starts with follows the word boundary is checked
# first: trying every word at every word boundary costs twice as much
_LOST_APOSTROPHE = re.compile(
    rf"\b(?=[{_CONTRACTION_OPENERS}])"
    rf"(?:({_NEGATED_VERBS})n t|({_CONTRACTED_PRONOUNS})\s(ll|re|ve|d|m|s))\b(?=[\s.,;:!?)]|$)",
    re.IGNORECASE,
)
_ACRONYM_POSSESSIVE = re.compile(r"\b([A-Z]{2,}) s\b(?=\s)")
# what the Treebank detokenizer acts on besides a line's outer spaces (dashes and ellipses are guarded from it),
# looked for in turn (:func:`detokenizer_acts_on`): a space before closing punctuation, quotes or a clitic; a
# space after an opening bracket or $ #; `` and '' and escaped brackets; split contractions ("can not", "gon na")
_SPACE_BEFORE = re.compile(r"\s(?:[,.;:?!%)\]}>'\"]|n't\b|'t\s+(?:is|was)\b)")
# the same with the space for its first blank: a quicker search (it starts with a literal), and the
# same on a printable line, whose only blank is the space
_SPACE_BEFORE_A_SPACE = re.compile(_SPACE_BEFORE.pattern.replace(r"\s", " ", 1))
_SPACE_AFTER = re.compile(r"[(\[{<$#]\s")
_ESCAPED_BRACKET = re.compile(r"-[LR][RSC]B-")
_SPLIT_CONTRACTION = re.compile(
    r"(?i:\b(?:can\s+not|gon\s+na|got\s+ta|lem\s+me|wan\s+na|gim\s+me|more\s+'n|d'\s+ye)\b)"
)
_CONTRACTION_OPENING = re.compile(
    r"(?:can|go[nt]|lem|wan|gim|more|d')\s"
)  # in lower case, ASCII: how one starts
# what the detokenizer must not touch, each standing in as a private-use character while it runs: plain
# double quotes (it would glue an opening quote to the word before), and the dash and ellipsis that
# English prose spaces too (it would write "field--only", "work...in")
_GUARDED = (('"', "\ue000"), ("--", "\ue001"), ("...", "\ue002"))
# the same stand-ins in ASCII, used for a text that holds none of either set: the detokenizer treats
# these characters as it treats those (no blank, word character, mark or character a rule names, no
# case), and a text it is given stays one byte a character, which it goes through quicker
_ASCII_GUARDED = (('"', "^"), ("--", "~"), ("...", "|"))
_GUTENBERG_START = re.compile(
    r"^\*{3} ?START OF (?:THIS|THE) PROJECT GUTENBERG EBOOK[^\n]*$", re.MULTILINE | re.IGNORECASE
)
# the END line with the line end before it (the body is searched with a line end put in front): a
# pattern opening with a line end is looked for by that character, one opening with "^" is tried at
# every character of the book
_GUTENBERG_END = re.compile(
    r"\n(?:\*{3} ?END OF (?:THIS|THE) PROJECT GUTENBERG EBOOK|End of (?:the )?Project Gutenberg)",
    re.IGNORECASE,
)
_GUTENBERG_CREDITS = re.compile(
    r"^(?:Produced by|This (?:e|E)book was produced by)[^\n]*(?:\n[^\n]+)*\n*", re.IGNORECASE
)
_WRAPPED_LINE = re.compile(r"(?<=\S)[ \t]*\n(?=[ \t]*\S)")
# the same where no line ends in a space or tab: a line end right after a non-blank, found by the
# line end (the pattern above opens with a look-behind, tried at every character)
_WRAPPED_AT_LINE_END = re.compile(r"\n(?<=\S\n)(?=[ \t]*\S)")
_TITLE_END = re.compile(r"[.!?:;,]\s*$")
_FRAGMENT_START = re.compile(r"^[a-z][a-z]*(?=[\s,;:.)-])")
# what a snippet line ends with, besides blanks, that the prefix rule ignores
_SNIPPET_END_MARKS = ".!?;:,"


def fix_mojibake(text: str) -> str:
    """Repair UTF-8 text that was mis-decoded as Windows-1252 or Latin-1 ("canâ€™t" becomes "can’t").

    Mojibake is always non-ASCII and local to the word it garbles, so ftfy sees only the runs of
    non-blank characters that hold a non-ASCII one: the same result as fixing the whole text on
    review_summ, about five times faster on its long, mostly ASCII reviews. Such a word is found
    from its first non-ASCII character, then its start looked for back to the blank before it (a
    pattern for the whole word would be tried at every character of the text).
    """
    if text.isascii():
        return text
    import ftfy

    pieces: list[str] = []
    end = 0
    for match in _NON_ASCII_TO_WORD_END.finditer(text):
        start = 1 + max(text.rfind(blank, end, match.start()) for blank in _ASCII_BLANKS)
        pieces += (text[end:start], ftfy.fix_encoding(text[start : match.end()]))
        end = match.end()
    pieces.append(text[end:])
    return "".join(pieces)


def html_to_text(text: str) -> str:
    """Turn HTML markup into readable plain text, keeping table cell texts (`` | `` between cells)."""
    if not _TAG.search(text):
        return text
    import inscriptis
    from inscriptis.css_profiles import CSS_PROFILES
    from inscriptis.model.config import ParserConfig

    markup = _LONE_ANGLE.sub("&lt;", _UNDERSCORE_ATTRIBUTE.sub(r"<\1 ", text)).replace(
        "\n", "<br>\n"
    )
    config = ParserConfig(css=CSS_PROFILES["strict"], table_cell_separator=" | ")
    return _tidy(inscriptis.get_text(markup, config))


def drop_transcript_markers(text: str) -> str:
    """Remove ``{disfmarker}``-style annotations (a lowercase word in braces) and tidy the spaces left behind."""
    if "{" not in text:
        return text
    return _tidy(_TRANSCRIPT_MARKER.sub(" ", text))


def unescape_entities(text: str) -> str:
    """Turn HTML character references ("&amp;", "&#39;", "&quot;") into characters, also when escaped twice."""
    import html  # here: a run whose sources are cleaned already needs none of it

    for _ in range(3):
        if not _ENTITY.search(text):
            break
        text = html.unescape(text)
    return text


def drop_wiki_markup(text: str) -> str:
    """Remove ``<ref>`` citations, ``{{...}}`` templates, "( edit )" links and a formula's ``{\\displaystyle ...}``
    source (after its rendering) left from Wikipedia; a ``[[link|label]]`` becomes its label, ``[[link]]`` its
    text, and a ``[[`` that opens no link goes."""
    if (
        "<ref" not in text.lower()
        and "{{" not in text
        and "edit" not in text
        and "[[" not in text
        and "displaystyle" not in text
    ):
        return text
    text = _WIKI_TEMPLATE.sub("", _WIKI_REF.sub("", text))
    if "{\\displaystyle " in text:  # what _WIKI_MATH starts with, after an optional space
        text = _WIKI_MATH.sub("", text)
    if "[[" in text:
        text = _WIKI_BROKEN_LINK.sub("", _WIKI_LINK.sub(r"\1", text))
    return _drop_with_blanks_before(text, _WIKI_EDIT, " \t")


def drop_wiki_page_chrome(text: str) -> str:
    """Remove what a saved Wikipedia page holds besides its article: its browser title ("X - wikipedia") above
    the article's own "X", the "Jump to: navigation, search" link, and from the "Retrieved from" permanent
    link to the end (categories, menus, languages, footer); empty bullet lines go too."""
    if (
        "Retrieved from" not in text
        and "Jump to" not in text
        and "*" not in text
        and "wikipedia" not in text
    ):
        return text
    text = _drop_with_blanks_before(text, _WIKI_RETRIEVED, " \t\n")
    text = _WIKI_BROWSER_TITLE.sub("", _WIKI_JUMP.sub("", text))
    return _BLANK_LINES.sub("\n\n", _EMPTY_BULLETS.sub("", text)).strip()


def _drop_with_blanks_before(text: str, pattern: re.Pattern, blanks: str) -> str:
    """``text`` without the matches of ``pattern``, each with the run of ``blanks`` right before it.

    What ``re.sub("[<blanks>]*<pattern>", "", text)`` gives, without trying the run of blanks at
    every position of the text: a pattern that opens with a run that may be empty has no first
    character the regular expression engine can skip ahead to, so it is tried at every character.
    """
    kept: list[str] = []
    end = 0
    for match in pattern.finditer(text):
        kept.append(text[end : match.start()].rstrip(blanks))
        end = match.end()
    if not kept:
        return text
    kept.append(text[end:])
    return "".join(kept)


def drop_page_furniture(text: str) -> str:
    """Remove a filed contract's page furniture, each on a line of its own: the filing's "Source: COMPANY, 10-K,
    1/2/2020" footer, page numbers ("7", "- 7 -", "Page 7 of 20") and the footnote saying what was omitted
    on the page; the blank lines left behind close up."""
    lines = f"\n{text}"
    if not _PAGE_FURNITURE.search(lines):
        return text
    return _BLANK_LINES.sub("\n\n", _PAGE_FURNITURE.sub("\n", lines)).strip()


def repair_paper_markup(text: str) -> str:
    """Replace S2ORC placeholders (``BIBREFn``, ``TABREFn``, ``INLINEFORMn`` ...) and inline LaTeX with readable text."""
    if "REF" in text:
        text = _CITATION_RUN.sub(
            lambda match: (
                "[" + ", ".join(str(int(n) + 1) for n in _CITATION.findall(match.group(0))) + "]"
            ),
            text,
        )
        text = _REFERENCE.sub(lambda match: str(int(match.group(1)) + 1), text)
    if "FORM" in text:
        text = _FORMULA.sub("[formula]", text)
    if "$" in text:
        text = _DISPLAY_LATEX.sub(lambda match: _latex_text(match.group(1)), text)
        text = _INLINE_LATEX.sub(_latex_to_text, text)
    if "\\(" in text or "\\[" in text:
        text = _PAREN_LATEX.sub(
            lambda match: _latex_text(match.group(1) or match.group(2) or ""), text
        )
    return text


def _latex_to_text(match: re.Match) -> str:
    """The plain-text reading of one inline formula (papers also write it "$ w_{t}$"); a span without LaTeX is
    a formula only when it is tight ("$n$"), not when it opens or ends with a space ("$5 and $10" are
    amounts) and is then left as it is."""
    opening_space, source = match.group(1), match.group(2)
    if not _LATEX_COMMAND.search(source):
        return match.group(0) if source != source.rstrip() or opening_space else source
    return _latex_text(source)


@lru_cache(maxsize=4096)
def _latex_text(source: str) -> str:
    """The plain-text reading of the LaTeX ``source`` of a formula, font macros aside (kept: a paper
    writes the same formula many times)."""
    return _latex_converter().latex_to_text(_FONT_MACROS.sub("", source)).strip()


@lru_cache(maxsize=1)
def _latex_converter():
    """pylatexenc's LaTeX-to-text converter, built once."""
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


def detokenize(text: str) -> str:
    """Join Penn-Treebank-tokenized text back into ordinary prose, line by line (NLTK's Treebank
    detokenizer, as :mod:`longbench100.text.treebank_detokenizer` runs it).

    Plain double quotes, "--" and "..." are kept out of the detokenizer's reach (:data:`_GUARDED`,
    in ASCII where the text allows it: :func:`_stand_ins`);
    Treebank text writes its quotes as `` and '', which it turns into plain quotes.
    Only lines with something the detokenizer acts on are passed to it (:func:`detokenizer_acts_on`); it
    would return every other line stripped of its outer spaces and otherwise unchanged (checked on
    130,000 real source lines), so those are just stripped, which saves most of its cost.
    """
    detokenize_line = _treebank_line_detokenizer()
    guarded = _stand_ins(text)
    lines = (
        _unguard(detokenize_line(_guard(line, guarded)), guarded)
        if detokenizer_acts_on(line)
        else line.strip()
        for line in text.split("\n")
    )
    return "\n".join(lines)


@lru_cache(maxsize=1)
def _treebank_line_detokenizer() -> Callable[[str], str]:
    """The Treebank detokenizer's line function, imported on first use: its compiled rules load
    only when a source is cleaned, not on a warm run (and once, not on each text)."""
    from longbench100.text.treebank_detokenizer import detokenize_line

    return detokenize_line


def detokenizer_acts_on(line: str) -> bool:
    """Whether ``line`` holds something the Treebank detokenizer acts on besides its outer spaces.

    The marks are looked for one kind at a time (one regex of every kind tries each alternative at
    each character), a mark without a blank before it only where the line holds a character it needs
    (finding a character is far quicker than trying a pattern at each place), and a split
    contraction, a case-blind search, only where it could start: in an ASCII line, its first word
    and a blank, looked for in lower case (for ASCII, lower case is what a case-blind match
    compares; beyond it, case-blind matching pairs letters such as the dotless i with i, so other
    lines are searched whole).
    """
    if _SPACE_BEFORE_A_SPACE.search(line) or (
        not line.isprintable() and _SPACE_BEFORE.search(line)
    ):
        return True
    if (
        "(" in line or "[" in line or "{" in line or "<" in line or "$" in line or "#" in line
    ) and _SPACE_AFTER.search(line):
        return True
    if ("`" in line and "``" in line) or ("'" in line and "''" in line):
        return True
    if "B-" in line and _ESCAPED_BRACKET.search(line):
        return True
    if line.isascii() and not _CONTRACTION_OPENING.search(line.lower()):
        return False
    return _SPLIT_CONTRACTION.search(line) is not None


def _stand_ins(text: str) -> tuple[tuple[str, str], ...]:
    """The stand-ins the lines of ``text`` are guarded with: :data:`_ASCII_GUARDED`, unless ``text``
    holds one of them or of :data:`_GUARDED` (turning those back would change the text)."""
    held = _ASCII_GUARDED if text.isascii() else _ASCII_GUARDED + _GUARDED
    return _GUARDED if any(stand_in in text for _, stand_in in held) else _ASCII_GUARDED


def _guard(line: str, guarded: tuple[tuple[str, str], ...]) -> str:
    """``line`` with the ``guarded`` strings replaced by their stand-ins."""
    for text, stand_in in guarded:
        line = line.replace(text, stand_in)
    return line


def _unguard(line: str, guarded: tuple[tuple[str, str], ...]) -> str:
    """``line`` with the stand-ins of ``guarded`` turned back."""
    for text, stand_in in reversed(guarded):
        line = line.replace(stand_in, text)
    return line


def restore_contractions(text: str) -> str:
    """Put back the apostrophe of contractions that lost it ("don t" -> "don't", "you ll" -> "you'll", "DMV s" -> "DMV's")."""
    text = _LOST_APOSTROPHE.sub(_with_apostrophe, text)
    return _ACRONYM_POSSESSIVE.sub(r"\1's", text)


def _with_apostrophe(match: re.Match) -> str:
    """ "don t" -> "don't", "we ll" -> "we'll"."""
    if match.group(1):
        return match.group(0)[:-2] + "'t"
    return f"{match.group(2)}'{match.group(3)}"


def drop_replacement_chars(text: str) -> str:
    """Remove U+FFFD replacement characters (a byte lost upstream cannot be recovered)."""
    return text.replace("\ufffd", "") if "\ufffd" in text else text


def trim_snippet_fragments(text: str) -> str:
    """Drop a passage's opening partial sentence and keep each repeated sentence once ("" when nothing whole is left).

    A first line that is a title (short, no end punctuation, more text below) is kept, and the
    body below it is trimmed; a title left without a body is nothing.
    """
    text = _without_prefix_lines(text)
    if _FRAGMENT_START.match(text):
        start = SOURCE_SENTENCE_END.search(text)
        text = text[start.end() :] if start else ""
    first, newline, rest = text.partition("\n")
    if newline and rest.strip() and len(first) < 300 and not _TITLE_END.search(first):
        body = trim_snippet_fragments(rest.lstrip())
        return f"{first}\n{body}" if body else ""
    sentences = split_source_sentences(text)
    if len(sentences) < 2:
        return text
    seen: set[str] = set()
    kept = []
    for sentence in sentences:
        key = sentence.strip().lower()
        if key in seen and len(key.split()) >= 4:
            continue
        seen.add(key)
        kept.append(sentence)
    return text if len(kept) == len(sentences) else " ".join(kept)


def _without_prefix_lines(text: str) -> str:
    """``text`` without the lines (of four words or more) that another of its lines opens with, end punctuation and
    an opening partial sentence aside: snippets cut from one abstract that are prefixes of each other (the first of
    equal lines stays)."""
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    keys = [_line_key(line) for line in lines]
    kept = [
        line
        for index, (line, key) in enumerate(zip(lines, keys))
        if len(key.split()) < 4
        or not any(
            other != index and longer.startswith(key) and (longer != key or other < index)
            for other, longer in enumerate(keys)
        )
    ]
    return text if len(kept) == len(lines) else "\n".join(kept)


def _line_key(line: str) -> str:
    """A snippet line as the prefix rule compares it: without a partial sentence it opens with, without its end
    punctuation, in lower case."""
    line = line.strip()
    if _FRAGMENT_START.match(line) and (start := SOURCE_SENTENCE_END.search(line)):
        line = line[start.end() :]
    return _without_end_marks(line).lower()


def _without_end_marks(line: str) -> str:
    """``line`` without the run of blanks and :data:`_SNIPPET_END_MARKS` it ends with (a loop over
    its last characters: a pattern for the run would be tried at every blank of the line)."""
    end = len(line)
    while end and (line[end - 1] in _SNIPPET_END_MARKS or line[end - 1].isspace()):
        end -= 1
    return line[:end]


def strip_gutenberg_frame(text: str) -> str:
    """A Gutenberg book's own text: what lies between its START and END lines, credits dropped, lines unwrapped.

    A text without a START line is kept from its beginning; one without an END line to its end.
    """
    start = _GUTENBERG_START.search(text)
    body = text[start.end() :] if start else text
    end = _GUTENBERG_END.search(f"\n{body}")  # its start in the text searched is the line's in body
    body = (body[: end.start()] if end else body).strip()
    body = _GUTENBERG_CREDITS.sub("", body, count=1)
    paragraphs = re.split(r"\n[ \t]*\n", body)
    return "\n\n".join(
        _unwrapped(paragraph.strip()) for paragraph in paragraphs if paragraph.strip()
    )


def _unwrapped(paragraph: str) -> str:
    """``paragraph`` with each line end between two non-blank lines (and the spaces and tabs before
    it) turned into one space."""
    if " \n" in paragraph or "\t\n" in paragraph:
        return _WRAPPED_LINE.sub(" ", paragraph)
    return _WRAPPED_AT_LINE_END.sub(" ", paragraph)


def _tidy(text: str) -> str:
    """One space between words, no spaces at line ends, at most one blank line in a row.

    Runs of spaces and tabs become one space in the whole text at once (a run never spans a line
    end), leaving single spaces alone: most of a text's blanks are single spaces already.
    """
    lines = _SPACE_RUN.sub(" ", text).split("\n")
    return _BLANK_LINES.sub("\n\n", "\n".join([line.strip() for line in lines])).strip()


CLEANING_STEPS: dict[str, Callable[[str], str]] = {
    "mojibake": fix_mojibake,
    "html": html_to_text,
    "transcript_markers": drop_transcript_markers,
    "wiki_markup": drop_wiki_markup,
    "wiki_page_chrome": drop_wiki_page_chrome,
    "page_footers": drop_page_furniture,
    "paper_markup": repair_paper_markup,
    "detokenize": detokenize,
    "contractions": restore_contractions,
    "replacement_chars": drop_replacement_chars,
    "gutenberg": strip_gutenberg_frame,
    "snippet_fragments": trim_snippet_fragments,
}
PASSAGE_STEPS = frozenset(
    {"snippet_fragments", "gutenberg", "wiki_page_chrome"}
)  # steps that apply to document texts only


def clean_text(
    text: str, steps: Sequence[str], *, passage: bool = False, changed: Counter | None = None
) -> str:
    """Apply the named cleaning steps to ``text`` in order (names must be keys of :data:`CLEANING_STEPS`).

    HTML character references are always unescaped: first, or right after ``html`` when that step
    is listed (inscriptis reads the references inside markup itself). Steps of :data:`PASSAGE_STEPS`
    run only when ``passage`` is true (document texts, not questions or answers). ``changed`` counts,
    per step, the texts it changed (``sources verify`` shows them).
    """
    if "html" not in steps:
        text = unescape_entities(text)
    for step in steps:
        if step in PASSAGE_STEPS and not passage:
            continue
        before = text
        text = CLEANING_STEPS[step](text)
        if step == "html":
            text = unescape_entities(text)
        if changed is not None and text != before:
            changed[step] += 1
    return text
