"""What recalling asks a model to list, per kind of document (ETHIC: character names in books, person names in
debates, legal references in law): the annotator's instruction, the task's instruction and the shape an
annotated item must have to be kept.

A source says which kind its documents hold with ``entities = "..."`` in its registry entry (default
``people``). Each kind is its own annotation (:attr:`EntityType.annotation_kind`), with its own prompt
version, so labels of one kind are never read as another's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

NAME_WORDS = 5
"""The most words a listed name may have (longer items are copied prose, not names)."""
REFERENCE_WORDS = 12
"""The most words a listed legal reference may have ("Section 4.2(b) of the Master Services Agreement")."""
_NAME_PARTICLES = frozenset(
    "of de del della di da du van von der den la le y al bin ibn and".split()
)
_REFERENCE_WORD = re.compile(
    r"§|\b(?:sections?|articles?|clauses?|exhibits?|schedules?|appendi(?:x|ces)|annex(?:es)?|paragraphs?|subsections?"
    r"|acts?|codes?|regulations?|rules?|statutes?|directives?|u\.\s?s\.\s?c|c\.\s?f\.\s?r)\b",
    re.IGNORECASE,
)


def name_shaped(item: str) -> bool:
    """Whether a listed item looks like a name: at most five words, each capitalised but for particles ("of", "de")."""
    words = item.split()
    return (
        0 < len(words) <= NAME_WORDS
        and item[0].isupper()
        and all(word[0].isupper() or word.lower() in _NAME_PARTICLES for word in words)
    )


def reference_shaped(item: str) -> bool:
    """Whether a listed item looks like a legal reference: at most twelve words that name a section, article,
    exhibit, schedule, act, code or regulation (or hold "§") and say which one: a number, or a capitalised word
    besides that name ("Section 2.1", "Exhibit B", "the Securities Act"; not "regulations promulgated thereunder")."""
    words = item.split()
    if not 0 < len(words) <= REFERENCE_WORDS or _REFERENCE_WORD.search(item) is None:
        return False
    return any(
        any(char.isdigit() for char in word)
        or word == "§"
        or (word[0].isupper() and not _REFERENCE_WORD.fullmatch(word.rstrip(".,;:")))
        for word in words
    )


@dataclass(frozen=True)
class EntityType:
    """One kind of mention recalling can ask for."""

    key: str
    annotation_kind: str
    """The annotation that lists this kind per chunk (a key of ``annotation.prompts.PROMPT_VERSIONS``)."""
    what: str
    """What is listed, as the prompts say it: "every person named", "every legal reference"."""
    annotator_rule: str
    """The annotator's instruction after "List {what} in this passage:"."""
    task_rule: str
    """The model's instruction after "List {what} anywhere in the text above:"."""
    items: str
    """What the listed things are called in a reply: "names", "references"."""
    none_case: str
    """How the annotator prompt says a passage has nothing to list: "names nobody", "has none"."""
    answer_label: str
    """The word that opens the model's answer ("Names:")."""
    shaped: Callable[[str], bool]
    """Whether a listed item has this kind's shape (copied prose is dropped)."""
    proper_names: bool
    """Whether the items are names, which the text must write as names (:mod:`.mention_check`)."""


ENTITY_TYPES: dict[str, EntityType] = {
    "people": EntityType(
        "people",
        "annotation_mentions",
        "every person named",
        'real people and fictional characters, each under the name the passage uses (for example "Mr. Darcy" or '
        '"Elizabeth"), each once. Leave out places, organisations, titles without a name, and pronouns.',
        'real people and fictional characters, each under the name the text uses (for example "Mr. Darcy" or '
        '"Elizabeth"), each once. Leave out places, organisations and pronouns.',
        "names",
        "names nobody",
        "Names",
        name_shaped,
        True,
    ),
    "legal_references": EntityType(
        "legal_references",
        "annotation_legal_references",
        "every legal reference",
        "each reference to a part of this or another document (a section, article, clause, exhibit or schedule, "
        'for example "Section 2.1" or "Exhibit B") and each law, act, code or regulation it cites (for example '
        '"the Securities Act of 1933"), written as the passage writes it, each once. Leave out defined terms and '
        "party names.",
        "each reference to a part of this or another document (a section, article, clause, exhibit or schedule, "
        'for example "Section 2.1" or "Exhibit B") and each law, act, code or regulation cited (for example "the '
        'Securities Act of 1933"), written as the text writes it, each once. Leave out defined terms and party names.',
        "references",
        "has none",
        "References",
        reference_shaped,
        False,
    ),
}
DEFAULT_ENTITIES = "people"


def entity_of_kind(annotation_kind: str) -> EntityType | None:
    """The entity type whose annotation is ``annotation_kind`` (``None`` for other kinds, such as summaries)."""
    return next(
        (entity for entity in ENTITY_TYPES.values() if entity.annotation_kind == annotation_kind),
        None,
    )


def reply_label_pattern() -> str:
    """A regex alternation of the words a reply may open with before its list ("Names:", "References:",
    singular or plural, any case), for every entity type."""
    words = {
        word.lower().rstrip("s")
        for entity in ENTITY_TYPES.values()
        for word in (entity.answer_label, entity.items)
    }
    return "|".join(f"{re.escape(word)}s?" for word in sorted(words))
