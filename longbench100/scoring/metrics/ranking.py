"""Re-ranking: read the order of passage ids out of a model's reply, and grade it with NDCG@10.

Two readers. The default, :func:`helmet_ranking`, reads a reply exactly as HELMET's
``parse_rankings`` does (``utils.py``): brackets and colons dropped, "id" removed, the longest run
of integers joined by ``>`` taken as the ranking (a numbered list therefore yields its first id
only), a reply without any integer kept whole as one unknown id; unknown ids stay in the ranking
and take their places as non-relevant passages, and a reasoning block is read like any other text.
Metric ``ndcg_at_10``.

The lenient reader, :func:`parse_ranking` (metric ``ndcg_at_10_lenient``, reported under that
name), is kinder to chatty replies: the rerank prompt shows passages as ``[ID: <id>]`` and asks for
``[<id>] > [<id>] > ...``; real models answer that way, or with ``ID: 12 > ID: 7``, numbered or bulleted lists, ``12, 7, 3``, prose
naming the ids, and reasoning before or after the ranking. :func:`parse_ranking` reads, in this
order of trust: the longest ``>`` chain of ids (the later one of equally long chains, as a final
answer follows its reasoning), else the longest numbered or bulleted list (the first id of each
item), else every id mention in reply order, the marked ones (``[12]``, ``ID: 12``, ``ID12``,
``Passage 12``) when there are any, else the bare ones (list numbers are never read as ids). Only ids of the record
count; a repeated id keeps its first place; reasoning blocks are skipped. On the same replies the
two readers differ (unknown ids skipped vs ranked; numbered lists read whole vs first id), so a
figure says which it used. NDCG@10 is computed by ``pytrec_eval`` for both (trec_eval's
``ndcg_cut.10``: gain = grade, discount log2(rank + 1), ideal order from all graded passages).
"""

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import NamedTuple

from longbench100.core.errors import UserError
from longbench100.folders.data_records import DataRecord
from longbench100.text.answers import strip_reasoning

CUTOFF = 10
_HELMET_DROPPED = re.compile(r"[\[\]:]")
_HELMET_CHAIN = re.compile(r"(\d+)(?:\s*>\s*(\d+))*")

# an id mention: an alphanumeric token, maybe after "Passage" / "Document" / "Doc", "[", and "ID:" / "ID " / "ID"
_MENTION = re.compile(
    r"(?P<word>\b(?:passage|document|doc)s?\b\s*)?(?P<open>\[\s*)?(?P<prefix>\bID(?P<gap>\s*[:#=]?\s*))?"
    r"(?P<token>[A-Za-z0-9]+)",
    re.IGNORECASE,
)
# what joins two mentions of a ranking chain: a ">" (or arrow), with closing brackets and markdown around it
_CHAIN_LINK = re.compile(r"[\s\])*_`]*(?:-?>+|→|⟶|≻|»)[\s(*_`]*")
# a numbered or bulleted list item's marker at the start of a line: "1.", "2)", "(3)", "#4:", "-", "*", "Rank 5:"
_LIST_MARKER = re.compile(
    r"^(?P<indent>[ \t]*)(?:[-*•+]|(?P<number>\(?\d{1,3}[.):]|#\d{1,3}:?|rank\s*\d{1,3}\s*[.:)-]?))(?=\s)",
    re.IGNORECASE | re.MULTILINE,
)


class _Mention(NamedTuple):
    """One alphanumeric token of the reply: where its mention begins ("Passage", "[" and "ID:" included), where
    its token starts and ends, the record id it names (or None), and whether it is marked ("[12]", "ID: 12",
    "Passage 12")."""

    begin: int
    start: int
    end: int
    id: str | None
    marked: bool


@dataclass(frozen=True)
class _Marker:
    """A list item's marker: its span, its indentation and its kind ("1." numbered or "-" bulleted)."""

    start: int
    end: int
    indent: int
    numbered: bool


def helmet_ranking(reply: str) -> list[str]:
    """The ranking HELMET reads from ``reply``, best first, first occurrence of each id kept (unknown ids
    included; a reply without any integer is one unknown id: itself, after HELMET's clean-up)."""
    text = _HELMET_DROPPED.sub("", reply).lower().replace("id", "")
    longest = max((match.group(0) for match in _HELMET_CHAIN.finditer(text)), key=len, default="")
    ranked = (
        [part.strip() for part in longest.split(">") if part.strip().isdigit()]
        if longest
        else [text]
    )
    return list(dict.fromkeys(ranked))


def parse_ranking(reply: str, ids: list[str]) -> list[str]:
    """The ids of ``ids`` in the order ``reply`` ranks them, best first (see the module docstring for the rules).

    Unknown ids are ignored, a repeated id keeps its first place, reasoning blocks (``<think>``) are
    skipped; ids match exactly, or regardless of case when that is unambiguous. Returns ``[]`` when
    the reply names no id.
    """
    text = strip_reasoning(reply)
    mentions = _mentions(text, _Lookup.of(ids))
    markers = [
        _Marker(
            match.start(),
            match.end(),
            len(match["indent"].expandtabs(4)),
            match["number"] is not None,
        )
        for match in _LIST_MARKER.finditer(text)
    ]
    for candidates in (_chains(text, mentions), _list_blocks(text, mentions, markers)):
        best = max(candidates, key=lambda ranked: (len(ranked[1]), ranked[0]), default=None)
        if best is not None and len(best[1]) >= 2:
            return best[1]
    in_markers = {
        mention for marker in markers for mention in _within(mentions, marker.start, marker.end)
    }
    named = [
        mention for mention in mentions if mention.id is not None and mention not in in_markers
    ]
    marked = [mention for mention in named if mention.marked]
    return _unique(marked or named)


@dataclass(frozen=True)
class _Lookup:
    """The record's ids as written, and by lower-case form where only one id has that form."""

    exact: frozenset[str]
    folded: dict[str, str]

    @classmethod
    def of(cls, ids: list[str]) -> "_Lookup":
        """The lookup of ``ids``."""
        owners: dict[str, list[str]] = {}
        for identifier in dict.fromkeys(ids):
            owners.setdefault(identifier.lower(), []).append(identifier)
        return cls(
            frozenset(ids), {key: names[0] for key, names in owners.items() if len(names) == 1}
        )

    def resolve(self, token: str) -> str | None:
        """The id a token names: itself when it is an id, else the one id equal to it regardless of case."""
        return token if token in self.exact else self.folded.get(token.lower())


def _mentions(text: str, lookup: _Lookup) -> list[_Mention]:
    """Every token of ``text`` in order, with the id it names ("ID12" names 12 unless ID12 is itself an id)."""
    mentions = []
    for match in _MENTION.finditer(text):
        identifier = None
        if match["prefix"] and not match["gap"]:
            identifier = lookup.resolve(match["prefix"] + match["token"])
        identifier = identifier or lookup.resolve(match["token"])
        marked = bool(match["word"] or match["open"] or match["prefix"])
        mentions.append(
            _Mention(match.start(), match.start("token"), match.end(), identifier, marked)
        )
    return mentions


def _chains(text: str, mentions: list[_Mention]) -> list[tuple[int, list[str]]]:
    """Every run of mentions joined by ``>`` links, as (start offset, the ids it names in order)."""
    chains: list[list[_Mention]] = []
    for previous, mention in zip([None, *mentions], mentions):
        if previous is not None and _CHAIN_LINK.fullmatch(text, previous.end, mention.begin):
            chains[-1].append(mention)
        else:
            chains.append([mention])
    return [(chain[0].begin, _unique(chain)) for chain in chains if len(chain) >= 2]


def _list_blocks(
    text: str, mentions: list[_Mention], markers: list[_Marker]
) -> list[tuple[int, list[str]]]:
    """Every list, as (start offset, the first id named in each of its items, in order).

    A list is a run of items of one kind (numbered or bulleted) at one indentation; nested items and
    indented or blank lines between items belong to it; a line of text at the left margin ends it.
    The first marked id of an item counts, else its first bare one.
    """
    blocks: list[tuple[_Marker, list[str]]] = []
    previous_end: int | None = None
    for marker in markers:
        ends_list = previous_end is None or any(
            line.strip() and not line[:1].isspace()
            for line in text[previous_end : marker.start].split("\n")[1:]
        )
        head = None if ends_list else blocks[-1][0]
        other_kind = head is not None and (marker.indent, marker.numbered) == (
            head.indent,
            not head.numbered,
        )
        if head is None or marker.indent < head.indent or other_kind:
            blocks.append((marker, []))
            head = marker
        previous_end = marker.end
        if marker.indent > head.indent:
            continue
        line_end = text.find("\n", marker.end)
        item = [
            mention
            for mention in _within(mentions, marker.end, len(text) if line_end < 0 else line_end)
            if mention.id is not None
        ]
        chosen = next((mention for mention in item if mention.marked), item[0] if item else None)
        if chosen is not None and chosen.id is not None:  # (every mention in ``item`` names one)
            blocks[-1][1].append(chosen.id)
    return [(head.start, list(dict.fromkeys(ids))) for head, ids in blocks]


def _within(mentions: list[_Mention], start: int, end: int) -> list[_Mention]:
    """The mentions (in text order) whose token starts at an offset from ``start`` up to, not including, ``end``."""
    low = bisect_left(mentions, start, key=lambda mention: mention.start)
    high = bisect_left(mentions, end, lo=low, key=lambda mention: mention.start)
    return mentions[low:high]


def _unique(mentions: list[_Mention]) -> list[str]:
    """The ids the mentions name, first occurrence first, unknown tokens left out."""
    return list(dict.fromkeys(mention.id for mention in mentions if mention.id is not None))


def relevance_grades(record: DataRecord) -> dict[str, int]:
    """The record's ``gold.relevance`` ({passage id: grade}), checked: a non-empty object of non-negative
    integer grades with at least one relevant passage (grade above 0); a bad one is a :class:`UserError`."""
    relevance = (record.gold or {}).get("relevance")
    where = f"record {record.id} ({record.task} {record.label})"
    if not isinstance(relevance, dict) or not relevance:
        raise UserError(
            f"{where}: gold.relevance must be a non-empty object {{passage id: grade}} for ndcg_at_10"
        )
    bad = [key for key, grade in relevance.items() if type(grade) is not int or grade < 0]
    if bad:
        grade = relevance[bad[0]]
        raise UserError(
            f"{where}: gold.relevance grade of passage {bad[0]!r} is {grade!r}, not an integer >= 0"
        )
    if not any(relevance.values()):
        raise UserError(f"{where}: gold.relevance grades every passage 0, so NDCG is undefined")
    return relevance


def grade_levels(record: DataRecord) -> tuple[int, ...] | None:
    """The distinct grades of the record's ``gold.relevance`` in ascending order (``(0, 1)`` for binary
    judgements), or ``None`` when the record grades no passages (not a ranking record)."""
    relevance = (record.gold or {}).get("relevance")
    if not isinstance(relevance, dict) or not relevance:
        return None
    return tuple(sorted({grade for grade in relevance.values() if type(grade) is int}))


def ndcg_cut(ranking: list[str], relevance: dict[str, int], cutoff: int = CUTOFF) -> float:
    """trec_eval's NDCG at ``cutoff`` (via ``pytrec_eval``) of ``ranking`` (ids, best first, no repeats)
    against ``relevance`` ({id: grade}); 0 for an empty ranking."""
    if not ranking:
        return 0.0
    import pytrec_eval  # with numpy, loaded only where a ranking is graded

    measure = f"ndcg_cut.{cutoff}"
    evaluator = pytrec_eval.RelevanceEvaluator({"q": relevance}, {measure})
    run = {
        "q": {identifier: float(len(ranking) - place) for place, identifier in enumerate(ranking)}
    }
    return evaluator.evaluate(run)["q"][f"ndcg_cut_{cutoff}"]


def ndcg_at_10(prediction: str, record: DataRecord) -> float:
    """The rerank metric ``ndcg_at_10``: NDCG@10 of the ranking HELMET's parser reads from ``prediction``
    against the record's ``gold.relevance`` (graded: 0-3 on TREC DL data, 0-1 on binary data)."""
    return ndcg_cut(helmet_ranking(prediction), relevance_grades(record))


def ndcg_at_10_lenient(prediction: str, record: DataRecord) -> float:
    """``ndcg_at_10_lenient``: NDCG@10 of the ranking the lenient reader takes from ``prediction`` (record ids only)."""
    relevance = relevance_grades(record)
    return ndcg_cut(parse_ranking(prediction, list(relevance)), relevance)
