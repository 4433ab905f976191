"""The no-model strategies: each answers a sample from its prompt alone, without understanding it.

Every baseline belongs to a family (docs/baselines.md): ``context-free`` answers from the question
and options only (or from the answers of the task's other rows, never the row's own); ``position``
picks by place (first, middle or last passage, the announced total, alphabetical order);
``outlier`` picks the passage least like the others; ``lexical`` matches the question (or target,
or summary) to the context by TF-IDF; ``copy`` copies openings of the context as a summary;
``frequency`` counts words or labels. Which baselines apply depends on the task's answer kind
(:data:`ANSWER_KINDS`); a baseline that cannot answer a sample returns ``None`` and is scored 0.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from longbench100.catalog.entities import ENTITY_TYPES
from longbench100.folders.data_records import DataRecord
from longbench100.scoring.metrics.sections import parse_sections
from longbench100.text.sentences import TERMINAL_THEN_BLANK

from .lexical import bm25_scores, most_similar, outlier_index, overlap, query_similarities
from .prompt_view import Passage, PromptView

if TYPE_CHECKING:  # numpy loads where a strategy uses it
    import numpy as np

ANSWER_KINDS: dict[str, str] = {
    "counting_stars": "option",
    "kv_retrieval": "record_value",
    "kv_retrieval_chain": "record_value",
    "passage_retrieval": "passage_number",
    "passage_count": "count",
    "single_doc_qa": "qa",
    "multi_doc_qa": "qa",
    "rag_hard": "retrieved_qa",
    "single_doc_sum": "summary",
    "multi_doc_sum": "summary",
    "document_summarizing": "section_summaries",
    "document_organizing": "order",
    "attributing": "passage_set",
    "rerank": "ranking",
    "section_summarizing": "section_summaries",
    "organizing": "section_order",
    "recalling": "names",
    "long_doc_qa": "qa",
    "long_doc_sum": "summary",
    "qa_1": "qa",
    "qa_2": "qa",
    "common_words": "words",
    "frequent_words": "words",
    **{
        name: "label"
        for name in ("icl_trec_coarse", "icl_trec_fine", "icl_banking77", "icl_clinc150")
    },
    **{
        name: "needle"
        for name in (
            "niah_single_1",
            "niah_single_2",
            "niah_single_3",
            "niah_multivalue",
            "niah_multiquery",
            "variable_tracking",
        )
    },
    **{
        name: "listed_values"
        for name in ("niah_multikey_1", "niah_multikey_2", "niah_multikey_3", "json_kv")
    },
}
"""Each task's kind of answer, which decides the baselines that apply to it."""

RULER_WORD_LISTS = (
    "NVIDIA/RULER scripts/data/synthetic/common_words_extraction.py, "
    "scripts/data/synthetic/freq_words_extraction.py"
)
"""RULER's word lists are shuffled uniformly (common words 30 times, the others 3; coded words by a
Zipf law), so any stretch of the list shows the most frequent words on top."""
SUBSTRING_METRICS = "NVIDIA/RULER scripts/eval/synthetic/constants.py"
"""RULER's string_match_all (and HELMET's substring match) credits an answer found anywhere in the
reply, so a reply listing several values of the context is graded as if it named the asked one."""

STAR_SENTENCES = "uservan/100-LongBench utils/data_utils.py (generate_dataset_counting_stars)"
"""100-LongBench writes each star sentence ("The little penguin counted N") before a passage and asks
for the counts in the order they appear, so the option whose counts occur in that order among the
context's numbers is the one the star sentences spell out."""
NEEDLE_FORMATS = (
    "NVIDIA/RULER scripts/data/synthetic/niah.py, variable_tracking.py; "
    "scripts/eval/synthetic/constants.py (string_match_all); princeton-nlp/HELMET data.py "
    "(load_json_kv: UUID keys and values, substring match)"
)
"""RULER's needles carry values of one shape (7-digit numbers, UUIDs, 5-letter VAR names) that the
haystack never holds otherwise, and its metric credits a reply listing them all, so a pattern reader
of that shape finds every needle without reading anything else."""
EXACT_COPIES = "uservan/100-LongBench utils/data_utils.py (generate_dataset_passage_count)"
"""100-LongBench's passage_count repeats paragraphs as exact copies, so counting the distinct
passage texts is the count asked for."""
HELMET_ICL = (
    "princeton-nlp/HELMET data.py (load_icl: labelled demonstrations from the training set)"
)
"""HELMET's demonstrations are labelled training examples of the test text's own classes, so
reading the label of the demonstration most like the test text is nearest-neighbour
classification: the in-context learning the task asks for, done crudely."""

ETHIC_ORGANIZING = (
    "dmis-lab/ETHIC utils.py (calculate_score, Organizing: LCS of the reply's order with the "
    "answer), inference.py (each prompt is the dataset's User_msg: the sections, then their "
    "summaries)"
)
"""ETHIC's organizing shows each section with a summary of it: a faithful summary names the people
and things of its section, so matching a summary to the section that shares its words is the task
itself."""

OPENING_WORDS = 60
"""Words of a section's opening that the ``section_openings`` baselines read (the validity issue's attack)."""

LEAD_SENTENCES = 3
"""Sentences of each named passage that ``lead_sentences`` copies as a summary."""

CHANCE_DRAWS = 20
"""Random answers drawn per sample where chance is estimated by sampling (orders and rankings), and
the most other rows' answers a free-text sample's chance is taken over."""

# a run of capitalised words inside a sentence (after a lowercase word or a comma): how a name looks
_INNER_CAPITALISED = re.compile(
    r"(?<=[a-z,;] )((?:(?:Mr|Mrs|Ms|Dr|Miss|Sir|Lady|Lord|Captain)\.? )?[A-Z][a-z]+(?: [A-Z][a-z]+){0,2})"
)
_NOT_NAMES = frozenset(
    "I The A An And But He She It They We You His Her My Our Their This That God Heaven Sir Madam Lady Lord Mr Mrs Miss "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August "
    "September October November December English French Christian".split()
)
_LABEL_LINE = re.compile(r"^label: (\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class Attempt:
    """What a baseline may use: the record (its prompt and question; never its answers), the prompt's
    view, and the gold answers of the task's other rows (for the learned-prior baseline)."""

    record: DataRecord
    view: PromptView
    other_rows_answers: Counter
    # passage_count: distinct / announced paragraphs, averaged over the other rows
    count_ratio: float | None = None


@dataclass(frozen=True)
class Baseline:
    """One strategy: its name, family, a one-line description and the function that answers.

    ``anchor`` names the anchor benchmark's file whose own construct or metric lets this strategy
    score on real prompts (docs/baselines.md): such a baseline is reported there as the anchor's,
    not held to the task's limit; on the control twins it is judged like every other."""

    name: str
    family: str
    description: str
    answer: Callable[[Attempt], str | None]
    anchor: str | None = None


def _first_passage(attempt: Attempt) -> str | None:
    return attempt.view.passages[0].label if attempt.view.passages else None


def _middle_passage(attempt: Attempt) -> str | None:
    passages = attempt.view.passages
    return passages[len(passages) // 2].label if passages else None


def _last_passage(attempt: Attempt) -> str | None:
    return attempt.view.passages[-1].label if attempt.view.passages else None


def _outlier_passage(attempt: Attempt) -> str | None:
    index = outlier_index([passage.text for passage in attempt.view.passages])
    return attempt.view.passages[index].label if index is not None else None


def _longest_passage(attempt: Attempt) -> str | None:
    passages = attempt.view.passages
    return max(passages, key=lambda passage: len(passage.text)).label if passages else None


def _shortest_passage(attempt: Attempt) -> str | None:
    passages = attempt.view.passages
    return min(passages, key=lambda passage: len(passage.text)).label if passages else None


def _query(attempt: Attempt) -> str:
    return attempt.record.question or ""


def _top_passage(attempt: Attempt) -> str | None:
    passages = attempt.view.passages
    if not passages:
        return None
    return passages[most_similar(_query(attempt), [passage.text for passage in passages])].label


def _prior_answer(attempt: Attempt) -> str | None:
    """The answer most often right in the task's other rows."""
    common = attempt.other_rows_answers.most_common(1)
    return common[0][0] if common else None


def _option_agreement(attempt: Attempt, positional: bool) -> str | None:
    """The option sharing most elements (or elements in the same place) with the other options."""
    lists = [(number, re.findall(r"-?\d+", text)) for number, text in attempt.view.options]
    lists = [(number, values) for number, values in lists if values]
    if not lists:
        return None

    def agreement(values: list[str]) -> int:
        total = 0
        for _, others in lists:
            if positional:
                total += sum(a == b for a, b in zip(values, others))
            else:
                total += sum((Counter(values) & Counter(others)).values())
        return total

    return max(lists, key=lambda entry: agreement(entry[1]))[0]


def _question_overlap_option(attempt: Attempt) -> str | None:
    options = attempt.view.options
    if not options:
        return None
    return max(options, key=lambda option: overlap(option[1], _query(attempt)))[0]


def _unused_value(attempt: Attempt) -> str | None:
    """The first record value that is never used as a key: the end of a chain, found without following it."""
    keys = {key for key, _ in attempt.view.records}
    ends = [value for _, value in attempt.view.records if value not in keys]
    return ends[0] if ends else None


def _chain_start_value(attempt: Attempt) -> str | None:
    """The value of the first record whose key is no record's value: a chain's first link, found
    without the question."""
    values = {value for _, value in attempt.view.records}
    starts = [value for key, value in attempt.view.records if key not in values]
    return starts[0] if starts else None


def _last_record_value(attempt: Attempt) -> str | None:
    return attempt.view.records[-1][1] if attempt.view.records else None


def _announced_total(attempt: Attempt) -> str | None:
    total = attempt.view.listed or len(attempt.view.passages)
    return str(total) if total else None


def _sentences(text: str) -> list[str]:
    return [sentence for sentence in TERMINAL_THEN_BLANK.split(text.strip()) if sentence]


def _document_passages(attempt: Attempt) -> list[Passage]:
    """The named passages (else every passage); a prompt without numbered passages (one long document, as in
    long_doc_qa) gives its body: after the opening instruction, before the closing question or request."""
    passages = attempt.view.named_passages()
    body = "" if passages else attempt.view.body
    return passages or ([Passage("1", body)] if body else [])


def _best_sentence(attempt: Attempt) -> str | None:
    """The sentence of the named passages (else of the whole context) that shares most words with the question."""
    sentences = [
        sentence for passage in _document_passages(attempt) for sentence in _sentences(passage.text)
    ]
    if not sentences:
        return None
    return sentences[most_similar(_query(attempt), sentences)]


def _lead(attempt: Attempt) -> str | None:
    """The first sentences of each named passage (the classic lead baseline of summarisation)."""
    parts = [
        " ".join(_sentences(passage.text)[:LEAD_SENTENCES])
        for passage in _document_passages(attempt)
    ]
    return "\n".join(part for part in parts if part) or None


def _section_openings_summaries(attempt: Attempt) -> str | None:
    """Each section's opening words, in the reply format the task asks for."""
    passages = attempt.view.passages
    if not passages:
        return None
    return "\n".join(
        f"Section {passage.label}: {' '.join(passage.text.split()[:OPENING_WORDS])}"
        for passage in passages
    )


def _openings_order(attempt: Attempt) -> str | None:
    """Each section's summary: the one sharing most words with the section's opening (greedy, best pairs first)."""
    sections, summaries = attempt.view.passages, attempt.view.summaries
    if not sections or not summaries:
        return None
    openings = [" ".join(section.text.split()[:OPENING_WORDS]) for section in sections]
    pairs = sorted(
        (
            (overlap(opening, text), i, letter)
            for i, opening in enumerate(openings)
            for letter, text in summaries
        ),
        reverse=True,
    )
    chosen: dict[int, str] = {}
    used: set[str] = set()
    for _, index, letter in pairs:
        if index not in chosen and letter not in used:
            chosen[index] = letter
            used.add(letter)
    return " > ".join(chosen.get(index, "") for index in range(len(sections)))


def _capitalised_names(text: str, minimum: int) -> list[str]:
    """Capitalised runs inside sentences that occur at least ``minimum`` times, most frequent first (a name guesser)."""
    counts = Counter(
        match
        for match in _INNER_CAPITALISED.findall(text)
        if match.split()[0] not in _NOT_NAMES or len(match.split()) > 1
    )
    return [name for name, count in counts.most_common() if count >= minimum]


# a legal reference as contracts write them: a section, article, exhibit ... with its number or letter, or a named act
_REFERENCE = re.compile(
    r"\b(?:(?:Sections?|Articles?|Clauses?|Exhibits?|Schedules?|Appendix|Annex|Paragraphs?) [0-9A-Z][0-9A-Za-z.()]*"
    r"|(?:[A-Z][a-z]+ ){1,5}Act(?: of \d{4})?)"
)


def _references(text: str, minimum: int) -> list[str]:
    """Legal-reference-shaped runs that occur at least ``minimum`` times, most frequent first (a reference guesser)."""
    counts = Counter(match.rstrip(".") for match in _REFERENCE.findall(text))
    return [reference for reference, count in counts.most_common() if count >= minimum]


def _mention_guesser(attempt: Attempt) -> Callable[[str, int], list[str]]:
    """How to guess the mentions a recalling prompt asks for: legal references where it asks for them, else names."""
    return (
        _references
        if ENTITY_TYPES["legal_references"].what in attempt.view.prompt
        else _capitalised_names
    )


def _running_text(attempt: Attempt) -> str:
    """The context of a prompt: its passages, else its one unnumbered text (recalling), else the whole prompt."""
    return attempt.view.context or attempt.view.body or attempt.view.prompt


def _names_in_opening(attempt: Attempt) -> str | None:
    """The names (or references) guessed from the first tenth of the context: what a model that stops reading early would list."""
    context = _running_text(attempt)
    return "; ".join(_mention_guesser(attempt)(context[: max(1, len(context) // 10)], 1)) or None


def _names_everywhere(attempt: Attempt) -> str | None:
    """Every name-shaped (or reference-shaped) run that occurs twice or more in the whole context."""
    return "; ".join(_mention_guesser(attempt)(_running_text(attempt), 2)) or None


def _alphabetical_order(attempt: Attempt) -> str | None:
    letters = [letter for letter, _ in attempt.view.summaries]
    return " > ".join(sorted(letters)) if letters else None


def _attribution_target(attempt: Attempt) -> str:
    """attributing's question and target text, as the prompt shows them after "Target"."""
    prompt = attempt.view.prompt
    start = prompt.rfind("\nTarget ")
    end = prompt.rfind("\n\nWhich passages")
    return prompt[start:end] if start >= 0 and end > start else _query(attempt)


def _top_passages(attempt: Attempt) -> str | None:
    """Passages whose TF-IDF similarity to the target stands out: at least half the best score."""
    passages = attempt.view.passages
    if not passages:
        return None
    scores = query_similarities(
        _attribution_target(attempt), [passage.text for passage in passages]
    )
    if not scores.max() > 0:
        return None
    return ", ".join(
        passage.label for passage, score in zip(passages, scores) if score >= scores.max() / 2
    )


def _lexical_ranking(attempt: Attempt) -> str | None:
    passages = attempt.view.passages
    if not passages:
        return None
    scores = query_similarities(_query(attempt), [passage.text for passage in passages])
    order = sorted(range(len(passages)), key=lambda index: -scores[index])
    return " > ".join(f"[{passages[index].label}]" for index in order)


def _prompt_order_ranking(attempt: Attempt) -> str | None:
    passages = attempt.view.passages
    return " > ".join(f"[{passage.label}]" for passage in passages) if passages else None


def _answer_room_words(attempt: Attempt) -> int:
    match = re.search(r"Reply with the (\d+) words", attempt.view.prompt) or re.search(
        r"which (\d+) (?:coded )?words", attempt.view.prompt
    )
    return int(match.group(1)) if match else 10


def _frequent_in_part(attempt: Attempt, share: int) -> str | None:
    """The most frequent words of the first ``1/share`` of the context (after any worked example)."""
    context = attempt.view.context or attempt.view.after_examples
    text = context[: max(1, len(context) // share)]
    counts = Counter(re.findall(r"[A-Za-z]+", text))
    top = [word for word, _ in counts.most_common(_answer_room_words(attempt))]
    return ", ".join(top) or None


def _frequent_in_opening(attempt: Attempt) -> str | None:
    """The most frequent words of the first tenth of the context: what a model that stops reading
    early would say."""
    return _frequent_in_part(attempt, 10)


def _frequent_in_first_quarter(attempt: Attempt) -> str | None:
    """The most frequent words of the first quarter of the context."""
    return _frequent_in_part(attempt, 4)


def _distinct_words(attempt: Attempt, backwards: bool) -> str | None:
    """The first distinct words of the list the row asks about, as many as the answer holds, read
    from its start (or from its end, backwards): no counting."""
    listed = attempt.view.after_examples.strip().split("\n\n")[-1]  # past the instruction
    words = re.findall(r"[A-Za-z]+", listed)
    distinct = list(dict.fromkeys(reversed(words) if backwards else words))
    return ", ".join(distinct[: _answer_room_words(attempt)]) or None


def _first_distinct_words(attempt: Attempt) -> str | None:
    """The first distinct words of the list, in the order they first appear."""
    return _distinct_words(attempt, backwards=False)


def _last_distinct_words(attempt: Attempt) -> str | None:
    """The first distinct words of the list read backwards from its end."""
    return _distinct_words(attempt, backwards=True)


def _numbers_in_context(attempt: Attempt) -> str | None:
    """The option with the most of its numbers occurring, as whole numbers, in the context (first on
    a tie)."""
    present = set(
        re.findall(r"(?<![\d.])\d+(?![\d.])", attempt.view.context or attempt.view.prompt)
    )
    lists = [(number, re.findall(r"\d+", text)) for number, text in attempt.view.options]
    lists = [(number, values) for number, values in lists if values]
    if not lists:
        return None
    return max(
        lists, key=lambda entry: sum(value in present for value in entry[1]) / len(entry[1])
    )[0]


def _numbers_in_order(attempt: Attempt) -> str | None:
    """The first option whose numbers occur, in its order, among the context's whole numbers."""
    present = re.findall(r"(?<![\d.])\d+(?![\d.])", attempt.view.context or attempt.view.prompt)
    for number, text in attempt.view.options:
        wanted = re.findall(r"\d+", text)
        remaining = iter(present)
        if wanted and all(value in remaining for value in wanted):  # a subsequence, in order
            return number
    return None


def _distinct_passages(attempt: Attempt) -> str | None:
    """The number of distinct passage texts (exact copies counted once)."""
    passages = attempt.view.passages
    return str(len({passage.text.strip() for passage in passages})) if passages else None


_NEEDLE_SHAPES = re.compile(
    r"\b(?:\d{7}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b"
    r"|(?<=VAR )[A-Z]{5}\b"
)


def _needle_shaped_values(attempt: Attempt) -> str | None:
    """Every 7-digit number, UUID and 5-letter VAR name of the prompt that its question does not
    name, in one reply."""
    asked = set(_NEEDLE_SHAPES.findall(attempt.record.question or ""))
    values = [
        value
        for value in dict.fromkeys(_NEEDLE_SHAPES.findall(attempt.view.prompt))
        if value not in asked
    ]
    return ", ".join(values) or None


_DEMONSTRATION = re.compile(r"^text: (.*)\nlabel: (\S+)$", re.MULTILINE)


def _nearest_demonstration(attempt: Attempt) -> str | None:
    """The label of the demonstration most like the text to label (TF-IDF cosine)."""
    demonstrations = _DEMONSTRATION.findall(attempt.view.prompt)
    asked = attempt.view.prompt.rsplit("\ntext: ", 1)[-1].split("\nlabel:", 1)[0]
    if not demonstrations:
        return None
    return demonstrations[most_similar(asked, [text for text, _ in demonstrations])][1]


def _ratio_of_total(attempt: Attempt) -> str | None:
    """The announced total times the share of distinct paragraphs seen in the task's other rows."""
    total = attempt.view.listed or len(attempt.view.passages)
    if not total or attempt.count_ratio is None:
        return None
    return str(max(1, round(total * attempt.count_ratio)))


_NEEDLE_VALUE = re.compile(r'special magic \w+ for [^\n]*? is: ([^\s]+?)\.(?:\s|$)|": "([^"]+)"')


def _first_and_last_value(attempt: Attempt) -> str | None:
    """The first and the last value the context lists (needles, or a JSON object's values), in one
    reply."""
    values = [first or second for first, second in _NEEDLE_VALUE.findall(attempt.view.prompt)]
    return f"{values[0]}, {values[-1]}" if values else None


GRID_PLACES = 11
"""The most places of ``grid_place_values``: 0%, 10%, ..., 100%, the paired depth grid the generator
once put each row's gold on (row r at place r mod 11; json_kv's six places first to last)."""

VALUE_REPLY_CHARACTERS = 250
"""About the 128-token answer room of the needle and JSON tasks in characters: eleven 7-digit
numbers, or six UUIDs, with their separators."""


def _grid_place_values(attempt: Attempt) -> str | None:
    """The value nearest each of a few evenly spaced places from the first value of the context to
    the last (0%, 10%, ..., 100%; fewer places where eleven values would not fit the answer room),
    in one reply: it scores whenever the gold sits on a fixed grid of depths. ``None`` where the
    context lists no more values than there are places: the reply would name every value, which the
    anchor's substring metric credits whatever the placement (niah_multikey_1's four needles)."""
    found = [
        (match.start(), match.group(1) or match.group(2))
        for match in _NEEDLE_VALUE.finditer(attempt.view.prompt)
    ]
    if not found:
        return None
    mean_length = sum(len(value) for _, value in found) / len(found) + len(", ")
    places = max(2, min(GRID_PLACES, int(VALUE_REPLY_CHARACTERS // mean_length)))
    if len(found) <= places:
        return None
    first, last = found[0][0], found[-1][0]
    chosen: list[str] = []
    for step in range(places):
        target = first + (last - first) * step / (places - 1)
        value = min(found, key=lambda entry: abs(entry[0] - target))[1]
        if value not in chosen:
            chosen.append(value)
    return ", ".join(chosen)


_TITLED_DOCUMENT = re.compile(r"^Document \[\d+\] \(Title: ([^\n]*?)\): ", re.MULTILINE)


FALLING_ORDER = -0.35
"""The rank correlation of place and BM25 score at or below which ``titles_at_score_rise`` takes
the documents as shown best first: rag_hard's documents shown by score gave -0.43 to -1.00 (20
rows at 8k and 32k, the prompt's own BM25), a seeded random order -0.24 to 0.32."""


def _place_score_correlation(scores: np.ndarray) -> float:
    """Spearman's rank correlation of the documents' places with their scores (tied scores share
    their mean rank); 0 where the scores are all equal."""
    import numpy as np

    _, tie_group, group_sizes = np.unique(scores, return_inverse=True, return_counts=True)
    group_ends = np.cumsum(group_sizes)
    ranks = (group_ends - (group_sizes - 1) / 2)[tie_group]
    if len(group_sizes) < 2:
        return 0.0
    return float(np.corrcoef(np.arange(len(scores)), ranks)[0, 1])


def _titles_at_score_rise(attempt: Attempt) -> str | None:
    """Where the documents are shown best first by BM25 score (the question against each numbered
    document; rank correlation of place and score at most :data:`FALLING_ORDER`), the titles of the
    two documents at the steepest rise from one document to the next: a block inserted into that
    order (the gold) stands out there. ``None`` where the order does not fall: the strategy reads
    the order, not the best match."""
    import numpy as np

    titles = _TITLED_DOCUMENT.findall(attempt.view.prompt)
    passages = attempt.view.passages
    if len(passages) < 2 or len(titles) != len(passages):
        return None
    scores = bm25_scores(
        _query(attempt),
        [f"{title} {passage.text}" for title, passage in zip(titles, passages)],
    )
    if _place_score_correlation(scores) > FALLING_ORDER:
        return None
    rise = int(np.argmax(np.diff(scores))) + 1
    return "; ".join(titles[rise : rise + 2])


def _majority_label(attempt: Attempt) -> str | None:
    """The label the demonstrations use most often."""
    labels = Counter(_LABEL_LINE.findall(attempt.view.prompt))
    return labels.most_common(1)[0][0] if labels else None


def _answer(text: str) -> Callable[[Attempt], str | None]:
    return lambda attempt: text


_PRIOR = Baseline(
    "prior_answer",
    "context-free",
    "the answer most often right in the task's other rows",
    _prior_answer,
)
_FIRST = Baseline("first_passage", "position", "the first passage", _first_passage)
_MIDDLE = Baseline("middle_passage", "position", "the middle passage", _middle_passage)
_LAST = Baseline("last_passage", "position", "the last passage", _last_passage)

_ALPHABETICAL_ORDER = Baseline(
    "alphabetical_order",
    "position",
    "the summaries' letters in alphabetical order",
    _alphabetical_order,
)
_OPENINGS_ORDER = Baseline(
    "section_openings",
    "lexical",
    f"each section's summary: the one sharing most words with its first {OPENING_WORDS} words",
    _openings_order,
)

_NEEDLE_READER = Baseline(
    "needle_shaped_values",
    "lexical",
    "every 7-digit number, UUID and 5-letter VAR name the question does not name, in one reply",
    _needle_shaped_values,
    anchor=NEEDLE_FORMATS,
)

BASELINES: dict[str, tuple[Baseline, ...]] = {
    "option": (
        Baseline(
            "option_consensus",
            "context-free",
            "the option sharing most counts with the other options",
            lambda attempt: _option_agreement(attempt, positional=False),
        ),
        Baseline(
            "option_position_consensus",
            "context-free",
            "the option agreeing most, place by place, with the other options",
            lambda attempt: _option_agreement(attempt, positional=True),
        ),
        Baseline(
            "option_question_overlap",
            "context-free",
            "the option sharing most words with the question",
            _question_overlap_option,
        ),
        Baseline(
            "numbers_in_context",
            "lexical",
            "the option whose numbers all (or most) occur in the context",
            _numbers_in_context,
        ),
        Baseline(
            "numbers_in_order",
            "lexical",
            "the first option whose numbers occur in its order among the context's numbers",
            _numbers_in_order,
            anchor=STAR_SENTENCES,
        ),
        _PRIOR,
    ),
    "record_value": (
        Baseline(
            "unused_value",
            "context-free",
            "the first record value never used as a key",
            _unused_value,
        ),
        Baseline(
            "chain_start_value",
            "context-free",
            "the value of the first record whose key is no record's value",
            _chain_start_value,
        ),
        Baseline(
            "last_record_value", "position", "the value of the last record", _last_record_value
        ),
    ),
    "passage_number": (
        _FIRST,
        _MIDDLE,
        _LAST,
        Baseline(
            "outlier_passage",
            "outlier",
            "the passage least like the others (TF-IDF)",
            _outlier_passage,
        ),
        Baseline(
            "longest_passage", "outlier", "the longest passage (characters)", _longest_passage
        ),
        Baseline(
            "shortest_passage", "outlier", "the shortest passage (characters)", _shortest_passage
        ),
        Baseline(
            "top_passage",
            "lexical",
            "the passage most like the question or summary (TF-IDF)",
            _top_passage,
        ),
        _PRIOR,
    ),
    "count": (
        Baseline(
            "announced_total",
            "position",
            "the number of passages the prompt announces",
            _announced_total,
        ),
        Baseline(
            "distinct_passages",
            "frequency",
            "the number of distinct passage texts (exact copies counted once)",
            _distinct_passages,
            anchor=EXACT_COPIES,
        ),
        Baseline(
            "ratio_of_total",
            "context-free",
            "the announced total times the distinct share seen in other rows",
            _ratio_of_total,
        ),
        _PRIOR,
    ),
    "qa": (
        Baseline("answer_yes", "context-free", "always 'yes'", _answer("yes")),
        Baseline("copy_question", "context-free", "the question as it stands", _query),
        Baseline("answer_no", "context-free", "always 'no'", _answer("no")),
        _PRIOR,
        Baseline(
            "best_sentence",
            "lexical",
            "the sentence of the named passages most like the question (TF-IDF)",
            _best_sentence,
        ),
    ),
    "summary": (
        Baseline(
            "lead_sentences",
            "copy",
            f"the first {LEAD_SENTENCES} sentences of each named passage",
            _lead,
        ),
    ),
    "section_summaries": (
        Baseline(
            "section_openings",
            "copy",
            f"the first {OPENING_WORDS} words of each section",
            _section_openings_summaries,
        ),
    ),
    "order": (_ALPHABETICAL_ORDER, _OPENINGS_ORDER),
    "section_order": (_ALPHABETICAL_ORDER, replace(_OPENINGS_ORDER, anchor=ETHIC_ORGANIZING)),
    "names": (
        _PRIOR,
        Baseline(
            "names_in_opening",
            "position",
            "capitalised runs inside sentences (legal-reference runs where those are asked) "
            "in the first tenth of the context",
            _names_in_opening,
        ),
        Baseline(
            "capitalised_runs",
            "lexical",
            "capitalised runs inside sentences (legal-reference runs where those are asked) "
            "seen twice or more in the context",
            _names_everywhere,
        ),
    ),
    "passage_set": (
        _FIRST,
        Baseline(
            "top_passages",
            "lexical",
            "passages scoring at least half the best TF-IDF similarity to question and target",
            _top_passages,
        ),
    ),
    "ranking": (
        Baseline(
            "prompt_order", "position", "the passages in the order shown", _prompt_order_ranking
        ),
        Baseline(
            "lexical_ranking",
            "lexical",
            "passages by TF-IDF similarity to the question",
            _lexical_ranking,
        ),
    ),
    "words": (
        Baseline(
            "frequent_in_opening",
            "frequency",
            "the most frequent words of the first tenth of the context (after the worked example)",
            _frequent_in_opening,
            anchor=RULER_WORD_LISTS,
        ),
        Baseline(
            "frequent_in_first_quarter",
            "frequency",
            "the most frequent words of the first quarter of the context",
            _frequent_in_first_quarter,
            anchor=RULER_WORD_LISTS,
        ),
        Baseline(
            "first_distinct_words",
            "position",
            "the first distinct words of the list, as many as the answer holds (no counting)",
            _first_distinct_words,
            anchor=RULER_WORD_LISTS,
        ),
        Baseline(
            "last_distinct_words",
            "position",
            "the first distinct words of the list read backwards from its end (no counting)",
            _last_distinct_words,
            anchor=RULER_WORD_LISTS,
        ),
        _PRIOR,
    ),
    "label": (
        Baseline(
            "majority_label", "frequency", "the label the demonstrations use most", _majority_label
        ),
        Baseline(
            "nearest_demonstration",
            "lexical",
            "the label of the demonstration most like the text to label (TF-IDF)",
            _nearest_demonstration,
            anchor=HELMET_ICL,
        ),
        _PRIOR,
    ),
    "needle": (_PRIOR, _NEEDLE_READER),
    "listed_values": (
        _PRIOR,
        _NEEDLE_READER,
        Baseline(
            "first_and_last_value",
            "position",
            "the first and the last value of the context, both in one reply",
            _first_and_last_value,
            anchor=SUBSTRING_METRICS,
        ),
        Baseline(
            "grid_place_values",
            "position",
            "the value nearest each of 0%, 10%, ..., 100% of the listed values (six places for "
            "UUIDs), in one reply",
            _grid_place_values,
        ),
    ),
}
"""The baselines of each answer kind, in the order tables list them."""

# rag_hard: the qa baselines, and one that reads the order of retrieval scores (a place in the
# prompt, so it is judged as a position baseline, not reported as the lexical ones are)
BASELINES["retrieved_qa"] = (
    *BASELINES["qa"],
    Baseline(
        "titles_at_score_rise",
        "position",
        "the titles of the two documents at the steepest rise in BM25 score from one document to "
        "the next",
        _titles_at_score_rise,
    ),
)


def cut_passage_numbers(record: DataRecord) -> set[str]:
    """The numbers of the passages that are a cut-off filler (never the gold of a passage task): the
    record's padding, in prompt order, takes the passage numbers its gold passages leave free."""
    gold = set((record.gold or {}).get("passages") or [])
    padding = iter(record.distractors or ())
    cut, number = set(), 0
    for entry in padding:
        number += 1
        while number in gold:
            number += 1
        if isinstance(entry, dict) and entry.get("truncated"):
            cut.add(str(number))
    return cut


def possible_counts(record: DataRecord, view: Callable[[], PromptView]) -> tuple[int, int]:
    """The counts a counting sample could hold, both ends included: the range its generator drew
    from (``gold.possible``), else (a record without it) 1 to the announced number of passages
    (``view()`` splits the prompt only then)."""
    possible = (record.gold or {}).get("possible")
    if isinstance(possible, list) and len(possible) == 2:
        return int(possible[0]), int(possible[1])
    shown = view()
    return 1, shown.listed or len(shown.passages)


def baselines_for(task: str) -> tuple[Baseline, ...]:
    """The baselines that apply to ``task`` (none for a task of unknown kind)."""
    return BASELINES.get(ANSWER_KINDS.get(task, ""), ())


def chance_answers(
    record: DataRecord, view: Callable[[], PromptView], other_rows_answers: Counter
) -> list[str]:
    """Answers whose mean score is the task's chance level for one sample: every *possible*
    candidate where the answer is one of a few (options that hold a list of counts, passages that
    are not the cut-off filler, counts, labels, values), seeded random draws for orders and
    rankings, every passage for a passage set; where the answer is free text, the task's other rows'
    answers (what an answer about something else scores; for section summaries, other rows'
    section summaries, one for each section, :func:`other_sections_answers`). A candidate that can
    never be right on a real prompt is left out. ``view()`` splits the prompt: only the kinds that
    look at it call it (a free-text answer's chance never reads its prompt)."""
    kind = ANSWER_KINDS.get(record.task, "")
    rng = random.Random(record.row)
    if kind == "option":
        return [number for number, text in view().options if re.search(r"\d", text)]
    if kind == "passage_number":
        cut = cut_passage_numbers(record)
        return [passage.label for passage in view().passages if passage.label not in cut]
    if kind == "count":
        low, high = possible_counts(record, view)
        return [str(number) for number in range(low, high + 1)]
    if kind == "record_value":
        return sorted({value for _, value in view().records})
    if kind == "label":
        return sorted(set(_LABEL_LINE.findall(view().prompt)))
    if kind in ("order", "section_order"):
        letters = [letter for letter, _ in view().summaries]
        return (
            [" > ".join(rng.sample(letters, len(letters))) for _ in range(CHANCE_DRAWS)]
            if letters
            else []
        )
    if kind == "ranking":
        labels = [passage.label for passage in view().passages]
        return (
            [
                " > ".join(f"[{label}]" for label in rng.sample(labels, len(labels)))
                for _ in range(CHANCE_DRAWS)
            ]
            if labels
            else []
        )
    if kind == "passage_set":
        passages = view().passages
        return [", ".join(passage.label for passage in passages)] if passages else []
    if kind == "section_summaries":
        return other_sections_answers(len(view().passages), other_rows_answers)
    return sorted(other_rows_answers)[:CHANCE_DRAWS]


def other_sections_answers(sections: int, other_rows_answers: Counter) -> list[str]:
    """Answers that give each of ``sections`` sections the summary of a section of another row, each
    draw from its own place in their list: what an answer about something else scores, with a
    summary for every section whatever the other rows' section counts (at 128k one row has 20
    sections, another 140, and another row's whole answer would leave most of them blank)."""
    summaries = [
        summary
        for answer in sorted(other_rows_answers)
        for _, summary in sorted(parse_sections(answer).items())
    ]
    if not summaries or not sections:
        return []
    return [
        "\n".join(
            f"Section {number}: {summaries[(draw * sections + number - 1) % len(summaries)]}"
            for number in range(1, sections + 1)
        )
        for draw in range(min(CHANCE_DRAWS, len(summaries)))
    ]
