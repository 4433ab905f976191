"""The annotator's prompts and how its replies are read.

Two kinds of annotation, each asked of one chunk (at most :data:`CHUNK_TOKENS` tokens of one document):

- ``summary``: what the chunk says, in at most five sentences (document_organizing shows these shuffled;
  document_summarizing keeps them as its reference summaries);
- ``mentions``: the people the chunk names (recalling's gold is their union over the context).

Each kind has a version (:data:`PROMPT_VERSIONS`), bumped whenever its wording or reading changes;
the manifest records them. A reply that cannot be read is *invalid* (never an empty label): the run
stops and says so. A reply cut off at the reply budget (small models ramble) keeps what it completed:
a summary's whole sentences, the names before the list's last separator. A summary keeps at most its
first five sentences. Names are kept only where the chunk itself contains them (case-insensitive), so
recalling's gold can be re-derived from the prompt text, and only when they look like names (at most
five capitalised words), so copied prose is not taken for a list of names.
"""

from __future__ import annotations

import re

from ..scoring.text import strip_reasoning

CHUNK_TOKENS = 1024
"""Most tokens (in the run's tokenizer) of one annotated chunk, as in ETHIC."""

SUMMARY = "annotation_summary"
MENTIONS = "annotation_mentions"
PROMPT_VERSIONS = {SUMMARY: 2, MENTIONS: 2}
"""Each annotation prompt's version (recorded in the manifest; the cache is keyed by the prompt text itself)."""

SUMMARY_SENTENCES = 5
"""The most sentences a chunk summary may have (ETHIC: up to five)."""

ENTITY_TYPE = "people"
"""What recalling asks for in every source: the people (persons or characters) named in the text."""

_SUMMARY_PROMPT = """You are helping to annotate a long text one passage at a time. Here is one passage of it; it may start or stop in the middle of a scene, a speech or an argument.

<passage>
{chunk}
</passage>

Summarise this passage in at most {sentences} sentences: who is involved, what happens or is argued, and what it leads to. Use only what this passage says, and name people as it names them, but put it in your own words: do not copy its sentences or open with its first words. Reply with the summary alone, as plain prose on one line."""

_MENTIONS_PROMPT = """You are helping to annotate a long text one passage at a time. Here is one passage of it.

<passage>
{chunk}
</passage>

List every person named in this passage: real people and fictional characters, each under the name the passage uses (for example "Mr. Darcy" or "Elizabeth"), each once. Leave out places, organisations, titles without a name, and pronouns. Reply with the names separated by semicolons on one line, and nothing else. If the passage names nobody, reply with the single word NONE."""

_LABEL = re.compile(r"^\s*(?:\*\*)?(?:summary|names|people|answer)(?:\*\*)?\s*:\s*(?:\*\*)?\s*", re.IGNORECASE)
_NONE = re.compile(r"^\W*(?:none|no one|nobody|n/?a)\W*$", re.IGNORECASE)
_ITEM_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_SPACES = re.compile(r"\s+")
_LEADING_WORDS = re.compile(r"^(?:(?:and|or|&)\s+)?(?:the\s+)?", re.IGNORECASE)  # "..., and the Reverend Edward Casaubon"
_NAME_PARTICLES = frozenset("of de del della di da du van von der den la le y al bin ibn and".split())
NAME_WORDS = 5
"""The most words a listed name may have (longer items are copied prose, not names)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]?[A-Z0-9])")
_LAST_SENTENCE_END = re.compile(r"[.!?][\"'”’)]*(?=[^.!?]*$)")
_LAST_SEPARATOR = re.compile(r"[;\n,](?=[^;\n,]*$)")


def summary_prompt(chunk: str) -> str:
    """The prompt asking for ``chunk``'s summary."""
    return _SUMMARY_PROMPT.format(chunk=chunk.strip(), sentences=SUMMARY_SENTENCES)


def mentions_prompt(chunk: str) -> str:
    """The prompt asking for the people ``chunk`` names."""
    return _MENTIONS_PROMPT.format(chunk=chunk.strip())


def read_summary(reply: str) -> dict | None:
    """``{"summary": one line}`` from a reply: its first five sentences (the instruction's limit; a line break or
    list item ends one), or ``None`` when it holds no summary (empty, or under three words)."""
    text = _LABEL.sub("", strip_reasoning(reply)).strip().strip('"').replace("**", "")
    lines = (_SPACES.sub(" ", _ITEM_MARK.sub("", line)).strip() for line in text.splitlines())
    sentences = [sentence for line in lines if line for sentence in _SENTENCE_END.split(line)]  # a line ends a sentence
    text = " ".join(sentences[:SUMMARY_SENTENCES])
    return {"summary": text} if len(text.split()) >= 3 else None


def name_shaped(item: str) -> bool:
    """Whether a listed item looks like a name: at most five words, each capitalised but for particles ("of", "de")."""
    words = item.split()
    return (0 < len(words) <= NAME_WORDS and item[0].isupper()
            and all(word[0].isupper() or word.lower() in _NAME_PARTICLES for word in words))


def read_mentions(reply: str, chunk: str) -> dict | None:
    """``{"mentions": [...], "dropped": n}`` from a reply: the names listed that ``chunk`` contains, each once.

    ``NONE`` reads as no names; an item that is not name-shaped (:func:`name_shaped`: copied prose) or
    that the chunk does not contain is dropped (and counted); a reply with neither a name nor ``NONE``
    is invalid (``None``).
    """
    text = _LABEL.sub("", strip_reasoning(reply)).strip()
    if not text:
        return None
    if _NONE.match(text):
        return {"mentions": [], "dropped": 0}
    lowered = chunk.lower()
    names: dict[str, str] = {}
    dropped = 0
    for part in re.split(r"[;\n]|,(?!\s*(?:Jr|Sr)\b)", text):
        name = _SPACES.sub(" ", _ITEM_MARK.sub("", part)).strip().strip("\"'“”‘’*.").strip()
        name = _LEADING_WORDS.sub("", name)
        if not name or _NONE.match(name) or name.lower() in names:
            continue
        if name_shaped(name) and name.lower() in lowered:
            names.setdefault(name.lower(), name)
        else:
            dropped += 1
    if not names and not dropped:
        return None
    return {"mentions": list(names.values()), "dropped": dropped}


def read_annotation(kind: str, reply: str, chunk: str, *, cut_off: bool = False) -> dict | None:
    """The label in a reply of ``kind``; a reply ``cut_off`` at the reply budget keeps what it completed: a
    summary its whole sentences, a list of names those before its last separator (``None`` if nothing is)."""
    if cut_off:
        pattern = _LAST_SENTENCE_END if kind == SUMMARY else _LAST_SEPARATOR
        end = pattern.search(reply)
        if end is None:
            return None
        reply = reply[:end.end()] if kind == SUMMARY else reply[:end.start()]
    return read_summary(reply) if kind == SUMMARY else read_mentions(reply, chunk)
