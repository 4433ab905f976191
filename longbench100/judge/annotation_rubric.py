"""The annotator's prompts and how its replies are read.

Two kinds of annotation, each asked of one chunk (at most :data:`CHUNK_TOKENS` tokens of one document):

- ``summary``: what the chunk says, in at most five sentences (organizing shows these shuffled;
  section_summarizing grades against the chunk itself);
- mentions: what the chunk names of one entity type (:mod:`.entities`: the people, or the legal
  references), recalling's gold being their union over the context; one annotation kind per type.

Each kind has a version (:data:`PROMPT_VERSIONS`), bumped whenever its wording or reading changes;
the manifest records them. A reply that cannot be read is *invalid* (never an empty label): the run
stops and says so. A reply cut off at the reply budget (small models ramble) keeps what it completed:
a summary's whole sentences, the items before the list's last separator. A summary keeps at most its
first five sentences. Listed items are kept only where the chunk itself contains them (case-insensitive),
so recalling's gold can be re-derived from the prompt text, and only when they have their type's shape
(a name: at most five capitalised words; a legal reference: a section, exhibit, act ... in at most
twelve words), so copied prose is not taken for a list.
"""

from __future__ import annotations

import re

from longbench100.catalog.entities import DEFAULT_ENTITIES, ENTITY_TYPES, EntityType, entity_of_kind
from longbench100.text.answers import strip_reasoning
from longbench100.text.sentences import LABEL_LAST_SENTENCE_END, LABEL_SENTENCE_END

CHUNK_TOKENS = 1024
"""Most tokens (in the run's tokenizer) of one annotated chunk, as in ETHIC."""

SUMMARY = "annotation_summary"
MENTIONS = ENTITY_TYPES[DEFAULT_ENTITIES].annotation_kind
"""The people a chunk names: the mentions annotation of the default entity type."""
PROMPT_VERSIONS = {SUMMARY: 3, MENTIONS: 2, ENTITY_TYPES["legal_references"].annotation_kind: 1}
"""Each annotation prompt's version (recorded in the manifest; the cache is keyed by the prompt text itself)."""
ANNOTATION_KINDS = frozenset(PROMPT_VERSIONS)

SUMMARY_SENTENCES = 5
"""The most sentences a chunk summary may have (ETHIC: up to five)."""

_SUMMARY_PROMPT = """You are helping to annotate a long text one passage at a time. Here is one passage of it; it may start or stop in the middle of a scene, a speech or an argument.

<passage>
{chunk}
</passage>

Summarise this passage in at most {sentences} sentences: who is involved, what happens or is argued, and what it leads to. Use only what this passage says, and name people as it names them, but put it in your own words: do not copy its sentences or open with its first words. Reply with the summary alone, as plain prose on one line."""

_MENTIONS_PROMPT = """You are helping to annotate a long text one passage at a time. Here is one passage of it.

<passage>
{chunk}
</passage>

List {what} in this passage: {rule} Reply with the {items} separated by semicolons on one line, and nothing else. If the passage {none_case}, reply with the single word NONE."""

_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:summary|names|people|answer|references|legal references)(?:\*\*)?\s*:\s*(?:\*\*)?\s*",
    re.IGNORECASE,
)  # the people's reading is unchanged since its version 2; "references" came with legal_references
_NONE = re.compile(r"^\W*(?:none|no one|nobody|n/?a)\W*$", re.IGNORECASE)
_ITEM_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_SPACES = re.compile(r"\s+")
_MARKUP = re.compile(
    r"</?(?:passage|summary|text|p|br|div|span|b|i|em|strong|u|li|ul|ol|h[1-6])(?:\s[^<>\n]*)?/?>",
    re.IGNORECASE,
)  # "<p>", "</passage>": markup a small model wraps its summary in (not "x<y and z>w")
_LEADING_WORDS = re.compile(
    r"^(?:(?:and|or|&)\s+)?(?:the\s+)?", re.IGNORECASE
)  # "..., and the Reverend Edward Casaubon"
_LAST_SEPARATOR = re.compile(r"[;\n,](?=[^;\n,]*$)")


def summary_prompt(chunk: str) -> str:
    """The prompt asking for ``chunk``'s summary."""
    return _SUMMARY_PROMPT.format(chunk=chunk.strip(), sentences=SUMMARY_SENTENCES)


def annotation_prompt_text(kind: str, chunk: str) -> str:
    """The annotator prompt of ``kind`` for ``chunk``: its summary, or what it names of one entity type."""
    return (
        summary_prompt(chunk) if kind == SUMMARY else mentions_prompt(chunk, _listed_entity(kind))
    )


def mentions_prompt(chunk: str, entity: EntityType = ENTITY_TYPES[DEFAULT_ENTITIES]) -> str:
    """The prompt asking for what ``chunk`` names of ``entity`` (the people, by default)."""
    return _MENTIONS_PROMPT.format(
        chunk=chunk.strip(),
        what=entity.what,
        rule=entity.annotator_rule,
        items=entity.items,
        none_case=entity.none_case,
    )


def read_summary(reply: str) -> dict | None:
    """``{"summary": one line}`` from a reply: its first five sentences (the instruction's limit; a line break or
    list item ends one), without markup tags (version 3), or ``None`` when it holds no summary (empty, or under
    three words)."""
    text = (
        _LABEL.sub("", _MARKUP.sub(" ", strip_reasoning(reply)))
        .strip()
        .strip('"')
        .replace("**", "")
    )
    lines = (_SPACES.sub(" ", _ITEM_MARK.sub("", line)).strip() for line in text.splitlines())
    sentences = [
        sentence for line in lines if line for sentence in LABEL_SENTENCE_END.split(line)
    ]  # a line ends a sentence
    text = " ".join(sentences[:SUMMARY_SENTENCES])
    return {"summary": text} if len(text.split()) >= 3 else None


def read_mentions(
    reply: str, chunk: str, entity: EntityType = ENTITY_TYPES[DEFAULT_ENTITIES]
) -> dict | None:
    """``{"mentions": [...], "dropped": n}`` from a reply: the items listed that ``chunk`` contains, each once.

    ``NONE`` reads as nothing listed; an item without ``entity``'s shape (a name, by default: copied prose)
    or that the chunk does not contain is dropped (and counted); a reply with neither an item nor ``NONE``
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
        if entity.shaped(name) and name.lower() in lowered:
            names.setdefault(name.lower(), name)
        else:
            dropped += 1
    if not names and not dropped:
        return None
    return {"mentions": list(names.values()), "dropped": dropped}


def read_annotation(kind: str, reply: str, chunk: str, *, cut_off: bool = False) -> dict | None:
    """The label in a reply of ``kind``; a reply ``cut_off`` at the reply budget keeps what it completed: a
    summary its whole sentences, a list the items before its last separator (``None`` if nothing is)."""
    if cut_off:
        pattern = LABEL_LAST_SENTENCE_END if kind == SUMMARY else _LAST_SEPARATOR
        end = pattern.search(reply)
        if end is None:
            return None
        reply = reply[: end.end()] if kind == SUMMARY else reply[: end.start()]
    return (
        read_summary(reply)
        if kind == SUMMARY
        else read_mentions(reply, chunk, _listed_entity(kind))
    )


def _listed_entity(kind: str) -> EntityType:
    """The entity type a mentions annotation ``kind`` lists (a ``ValueError`` for a kind that lists none)."""
    entity = entity_of_kind(kind)
    if entity is None:
        raise ValueError(f"unknown annotation kind {kind!r}")
    return entity
