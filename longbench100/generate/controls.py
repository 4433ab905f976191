"""The control twins of every sample: its prompt without the gold, and with another row's context.

For each record of a finished data file, two controls are written to
``OUT/controls/<task>/<label>.jsonl`` (a data folder of its own), each at the same budget, with the
record's question, options and answer key:

- ``gold_removed``: the spans that hold the material the answer depends on (what
  :func:`~longbench100.analysis.prompt_parts.gold_block_spans` declares per task: recorded gold
  spans, the numbered gold passages, the asked records) are filled with other text of the task's
  sources (:meth:`TaskBuilder.control_pool`), or, for a task that makes its own text, with the
  stretches of the same context around the gold; a passage keeps its heading, so the question still
  names it, but a titled document's title goes with its body (whole titled documents fill it); a
  label-mapping task (ICL, ``gold.mapping``) keeps its demonstrations with every label redrawn at
  random instead;
- ``context_swapped``: the context of the next row (in row order, cyclically) whose answer differs,
  between this row's instruction and question.

Every twin fits its own row's budget: the length less the row's own answer room
(``gold.answer_tokens``) where that is more than the task's. A twin is counted from its record's
stored count and the stretches its edits touch (:mod:`longbench100.text.edited_count`) where the
tokenizer counts by segments, else whole: the same number either way.

Options a template shows at the end of its context (organizing's shuffled summaries) belong to the
question: both twins keep them as they are
(:func:`~longbench100.analysis.prompt_parts.options_in_question`).

A score above chance on either is a score that does not come from the gold. The main data file is
never touched; the controls are built from it after it is final, so a resumed run rebuilds them from
the same bytes. Each twin is also told as segments of the file's prompts and the pool's texts
(:class:`Twin`), kept as recipes (:mod:`longbench100.generate.twin_recipes`) that a later run of the
same data file spells its twins from."""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from longbench100.analysis.prompt_parts import (
    Block,
    PromptParts,
    gold_block_spans,
    options_in_question,
    split_prompt,
)
from longbench100.core.atomic import write_lines_atomic
from longbench100.core.digests import file_sha256
from longbench100.core.errors import UserError
from longbench100.fitting.refill import (
    Home,
    PoolEntry,
    PoolText,
    Segment,
    opening_of,
    refill_spans,
)
from longbench100.fitting.rng import derive_rng
from longbench100.folders.layout import CONTROL_KINDS, controls_folder, data_file_path
from longbench100.generate.json_lines import (
    EscapedText,
    RecurringForms,
    escaped_body,
    json_line_parts,
    read_back,
)
from longbench100.generate.prompt_counts import prompt_counts
from longbench100.generate.twin_recipes import TwinRecipe, keep_recipes, read_recipes
from longbench100.sources.records import Document
from longbench100.tasks.icl import relabelled_demonstrations
from longbench100.tasks.negatives import passage_body
from longbench100.text.edited_count import Edit, Known, apply_edits, count_edited
from longbench100.text.joint_tokenizer import JointTokenizer
from longbench100.text.tokenization import Tokenizer
from longbench100.text.units import Span

MAX_REPAIRS = 12
_HEADING = re.compile(r"(?:Passage|Paragraph) \d+:\n")
_TITLED = re.compile(r"Document \[\d+\] \(Title: .*\): ")  # a titled document's heading line


@dataclass(frozen=True)
class ControlsResult:
    """What was written for one task and length: rows per control kind and the file's sha256."""

    rows: dict[str, int]
    sha256: str


class DocumentEntries(Sequence[PoolEntry]):
    """Documents as pool entries, each document's text read only when its entry is (a pool that
    cleans a document when first read cleans only what the twins draw)."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = documents

    def __len__(self) -> int:
        return len(self.documents)

    def __getitem__(self, index: int) -> PoolEntry:  # type: ignore[override]  # no slices
        document = self.documents[index]
        return document.text, None, document


def controls_file_path(out: Path, task: str, label: str) -> Path:
    """``OUT/controls/<task>/<label>.jsonl``."""
    return data_file_path(controls_folder(out), task, label)


@dataclass
class _Row:
    """One record of the data file (its ``index`` there, from 0) with its prompt split into
    instruction, context and question."""

    record: dict
    parts: PromptParts
    index: int


@dataclass(frozen=True)
class Twin:
    """A twin's record (made by :func:`_control_record` of row ``row``'s record with the fields
    ``extra``) and its prompt as segments of the data file's prompts (``("prompt", row, start,
    end)``) and the pool's texts (``("pool", index, ...)``, ``("titled", index, ...)``);
    ``segments`` is ``None`` where a fill's homes are not known."""

    record: dict
    row: int
    extra: dict
    segments: list[Segment] | None


class ControlBuilder:
    """Builds the control twins of one task and length's records."""

    def __init__(
        self, pool: list[Document], tokenizer: Tokenizer, chat: bool, budget: int, seed: int
    ) -> None:
        """``pool``: what fills the gold's room (the task builder's ``control_pool``). What a twin
        counts whole is counted as the prompts are, from the counts of its pieces (the same count
        as a whole tokenization)."""
        self.tokenizer = tokenizer
        self.count: Callable[[str], int] = tokenizer.count_rendered if chat else tokenizer.count
        self.budget = budget
        self.seed = seed
        # a record's stored count is its prompt's by this counter (a joint tokenizer stores another)
        self.spliced = not chat and tokenizer.counting == "segments"
        # each document's text and count are read when a twin first draws it (a short run reads few)
        self.pool = DocumentEntries(pool)
        self.titled: dict[int, str] = {}  # pool documents as titled documents are shown, by index
        self.several = isinstance(tokenizer, JointTokenizer)  # counts each twin's prompt per member

    def records(self, records: list[dict], where: str) -> list[dict]:
        """The controls of ``records`` (one data file's, in file order): each row's gold-removed
        twin, then its context-swapped one; a twin that cannot be made (nothing to fill the gold's
        room with, no other row) is left out."""
        return [twin.record for twin in self.twins(records, where)]

    def twins(self, records: list[dict], where: str) -> list[Twin]:
        """:meth:`records`' controls, each with its prompt's segments."""
        rows = [
            _Row(
                record,
                options_in_question(
                    record["task"],
                    split_prompt(
                        record["task"], record["prompt"], f"{where}:{index + 1}", record["gold"]
                    ),
                ),
                index,
            )
            for index, record in enumerate(records)
        ]
        controls = []
        for index, row in enumerate(rows):
            removed = self.gold_removed(row)
            if removed is not None:
                controls.append(removed)
            swapped = self.context_swapped(rows, index)
            if swapped is not None:
                controls.append(swapped)
        return controls

    def recipes(self, records: list[dict], twins: list[Twin]) -> list[TwinRecipe] | None:
        """The recipes of ``twins`` (of ``records``), or ``None`` when one of them cannot be told
        as segments that spell its prompt exactly."""
        recipes = []
        for twin in twins:
            if (
                twin.segments is None
                or self._spelled(records, twin.segments) != twin.record["prompt"]
            ):
                return None
            recipes.append(
                TwinRecipe(
                    twin.row,
                    twin.record["control"],
                    twin.segments,
                    twin.record["prompt_tokens"],
                    twin.extra,
                )
            )
        return recipes

    def _record(self, record: dict, kind: str, prompt: str, tokens: int, extra: dict) -> dict:
        """``record``'s ``kind`` twin with ``prompt`` (counted ``tokens`` when fitted) and the
        fields ``extra``; its counts are its own prompt's, by each tokenizer where several are."""
        return _control_record(
            record, kind, prompt, prompt_counts(self.tokenizer, prompt, tokens), extra
        )

    def fit(self, records: list[dict], recipes: list[TwinRecipe]) -> bool:
        """Whether every recipe names a row of ``records`` and every segment a stretch that lies
        inside a prompt of ``records`` or a text of the pool."""
        for recipe in recipes:
            if recipe.row >= len(records):
                return False
            for segment in recipe.segments:
                if isinstance(segment, str):
                    continue
                kind, reference, start, end = segment
                if reference >= (len(records) if kind == "prompt" else len(self.pool)):
                    return False
                if not start <= end <= len(self._text_of(records, kind, reference)):
                    return False
        return True

    def from_recipes(
        self,
        records: list[dict],
        recipes: list[TwinRecipe],
        forms: Sequence[EscapedText | str] | None = None,
    ) -> Iterator[dict]:
        """The controls ``recipes`` spell from ``records`` and the pool, one at a time (recipes
        that :meth:`fit` them), each prompt in its JSON form (:class:`EscapedText`, to be written
        by :func:`json_line`), joined from the forms of its segments: each stretch of a data
        prompt between two places where a segment starts or ends is escaped once for all twins,
        and so is each other text they spell (a pool document, a heading)."""
        escaped = _EscapedPrompts(records, recipes, forms)
        recurring = RecurringForms()
        for recipe in recipes:
            record = records[recipe.row]
            counts = prompt_counts(
                self.tokenizer,
                self._spelled(records, recipe.segments) if self.several else "",
                recipe.tokens,
            )
            prompt = EscapedText(
                tuple(
                    piece
                    for segment in recipe.segments
                    for piece in (
                        escaped.stretch(segment[1], segment[2], segment[3])
                        if not isinstance(segment, str) and segment[0] == "prompt"
                        else (recurring.form(self._spelled(records, [segment])),)
                    )
                )
            )
            yield _control_record(record, recipe.kind, prompt, counts, recipe.extra)

    def _spelled(self, records: list[dict], segments: list[Segment]) -> str:
        """The text ``segments`` spell from ``records``' prompts and the pool's texts."""
        return "".join(
            segment
            if isinstance(segment, str)
            else self._text_of(records, segment[0], segment[1])[segment[2] : segment[3]]
            for segment in segments
        )

    def _text_of(self, records: list[dict], kind: str, reference: int) -> str:
        """The text a segment of ``kind`` names by ``reference``: a prompt of ``records``, a pool
        text, or a pool document as a titled document is shown."""
        if kind == "prompt":
            return records[reference]["prompt"]
        if kind == "pool":
            return self.pool[reference][0]
        if reference not in self.titled:
            self.titled[reference] = _titled([self.pool[reference]])[0][0]
        return self.titled[reference]

    def gold_removed(self, row: _Row) -> Twin | None:
        """The twin without the gold: a label-mapping task's demonstrations relabelled at random,
        any other task's gold spans holding other text of the same sources."""
        record, parts = row.record, row.parts
        rng = derive_rng(self.seed, record["task"], record["length"], record["row"], "gold_removed")
        mapping = record["gold"].get("mapping")
        if isinstance(mapping, dict):
            context = relabelled_demonstrations(parts.context, len(mapping), rng)
            return self._with_context(row, row, context, "gold_removed", {"filled_from": []})
        start = len(parts.head) + len(parts.joint)
        spans = [
            self._without_heading(parts.context, span, start)
            for span in _removed_spans(record["task"], record["gold"], parts.blocks)
        ]
        titles = [_title_start(record["prompt"], a) for a, _ in spans]
        titled = any(title is not None for title in titles)
        spans = [
            (a if title is None else title, b)
            for (a, b), title in zip(spans, titles, strict=True)
            if b > a
        ]
        if self.pool:
            gold_documents = frozenset(record["gold"].get("doc_ids") or ())
            entries, homes = self._padding_like(record, titled)
            pool_text = PoolText(
                entries, rng, record["prompt"], gold_documents, titled, homes=homes
            )
        else:
            stretches = _own_stretches(parts.context, spans, start)
            pool_text = PoolText(
                [(text, None, None) for text, _ in stretches],
                rng,
                None,
                count=self.tokenizer.count,
                homes=[("prompt", row.index, offset) for _, offset in stretches],
            )
        refilled = refill_spans(
            self.tokenizer,
            lambda edits, known: self._count_edited(record, edits, known),
            record["prompt"],
            spans,
            pool_text,
            self._budget_of(record),
        )
        if refilled is None:
            return None
        extra = {"filled_from": [{"source": d.source, "id": d.id} for d in pool_text.drawn]}
        twin = self._record(record, "gold_removed", refilled.prompt, refilled.tokens, extra)
        edits = [(a, b, new) for (a, b), new in zip(spans, refilled.fills, strict=True)]
        segments = _edited_segments(row.index, len(record["prompt"]), edits)
        return Twin(twin, row.index, extra, segments)

    def _padding_like(self, record: dict, titled: bool) -> tuple[Sequence[PoolEntry], list[Home]]:
        """The pool entries of the sources the record's own padding came from (all of the pool when
        it names none there), with their homes: a fill from a source the prompt shows nowhere else
        would stand out as the one passage unlike the others, and so point at the gold's place.
        With ``titled``, the titled documents among them as shown (all of them when none is)."""
        sources = {distractor["source"] for distractor in record.get("distractors") or ()}
        documents = self.pool.documents
        same = [index for index, document in enumerate(documents) if document.source in sources]
        chosen = same or range(len(documents))
        if titled:
            with_titles = [index for index in chosen if documents[index].title]
            if with_titles:
                titled_entries = _titled([self.pool[index] for index in with_titles])
                return titled_entries, [("titled", index, 0) for index in with_titles]
        entries = DocumentEntries([documents[index] for index in chosen]) if same else self.pool
        return entries, [("pool", index, 0) for index in chosen]

    def context_swapped(self, rows: list[_Row], index: int) -> Twin | None:
        """The twin holding another row's context: the next row whose answers differ, else the next
        row."""
        if len(rows) < 2:
            return None
        others = [rows[(index + step) % len(rows)] for step in range(1, len(rows))]
        own = rows[index]
        other = next(
            (row for row in others if row.record["answers"] != own.record["answers"]), others[0]
        )
        return self._with_context(
            own, other, other.parts.context, "context_swapped", {"context_of": other.record["id"]}
        )

    def _with_context(
        self, row: _Row, base: _Row, context: str, kind: str, extra: dict
    ) -> Twin | None:
        """``row``'s record as a ``kind`` twin holding ``context`` (``base``'s context, or an
        opening of it, or a text in its place) between its instruction and question, the context's
        end cut off until the prompt fits the row's own budget."""
        budget = self._budget_of(row.record)
        start = len(base.parts.head) + len(base.parts.joint)
        for _ in range(MAX_REPAIRS):
            opening = base.parts.context.startswith(context)
            middle = (start + len(context), "") if opening else (start, context)
            around = [
                (0, start, row.parts.head + row.parts.joint),
                (middle[0], len(base.record["prompt"]), middle[1] + row.parts.tail),
            ]
            tokens = self._count_edited(base.record, around)
            if tokens <= budget:
                prompt = apply_edits(base.record["prompt"], around)
                own = len(row.record["prompt"])
                segments = _edited_segments(
                    base.index,
                    len(base.record["prompt"]),
                    [
                        (0, start, [("prompt", row.index, 0, len(around[0][2]))]),
                        (
                            middle[0],
                            len(base.record["prompt"]),
                            [middle[1], ("prompt", row.index, own - len(row.parts.tail), own)],
                        ),
                    ],
                )
                twin = self._record(row.record, kind, prompt, tokens, extra)
                return Twin(twin, row.index, extra, segments)
            context_tokens = (
                self._tokens_between(base.record, start, start + len(context))
                if opening
                else self.tokenizer.count(context)
            )
            context = opening_of(
                self.tokenizer, context, context_tokens - (tokens - budget) - 1, context_tokens
            )
        return None

    def _count_edited(
        self, record: dict, edits: Sequence[Edit], known: Sequence[Known] | None = None
    ) -> int:
        """The token count of ``record``'s prompt with ``edits`` made: from its stored count and the
        stretches around the edits (``known``: the counts of their old and new texts, where known)
        where the tokenizer allows (a sole tokenizer counting by segments, whose count the record
        stores), else the edited prompt counted whole."""
        stored = record.get("prompt_tokens")
        if self.spliced and isinstance(stored, int):
            counted = count_edited(self.tokenizer, record["prompt"], stored, edits, known)
            if counted is not None:
                return counted
        return self.count(apply_edits(record["prompt"], edits))

    def _tokens_between(self, record: dict, start: int, end: int) -> int:
        """The token count (:meth:`Tokenizer.count`'s) of ``record``'s prompt's characters
        ``start:end``: from its stored count where :meth:`_count_edited` can, else counted."""
        prompt = record["prompt"]
        if self.spliced:
            return self._count_edited(record, [(0, start, ""), (end, len(prompt), "")])
        return self.tokenizer.count(prompt[start:end])

    def _budget_of(self, record: dict) -> int:
        """The tokens the record's prompt may use: the task's budget, less what the record's own
        answer room (``gold.answer_tokens``) takes beyond it."""
        room = record["gold"].get("answer_tokens")
        if not isinstance(room, int):
            return self.budget
        return min(self.budget, record["length"] - room)

    @staticmethod
    def _without_heading(context: str, span: Span, start: int) -> Span:
        """A gold block's span in the prompt, less the passage heading it opens with (kept, so the
        question's passage numbers still point somewhere)."""
        heading = _HEADING.match(context, span[0])
        return (start + (heading.end() if heading else span[0]), start + span[1])


def write_controls(
    out: Path,
    task: str,
    label: str,
    controls: ControlBuilder,
    recipes: Path | None = None,
    built: list[dict] | None = None,
    forms: Sequence[EscapedText | str] | None = None,
) -> ControlsResult:
    """Build and write the controls of ``OUT/<task>/<label>.jsonl`` (its final file) atomically;
    spelled from the recipes kept at ``recipes`` where there are some, else built (and their
    recipes kept there). ``built``: the file's records as the run built them, in file order (each
    taken as the file's line reads back, :func:`read_back`), instead of reading the file;
    ``forms``: their prompts' JSON forms as written, whose parts twins spelled from the recipes
    take as they are."""
    data = data_file_path(out, task, label)
    if built is not None:
        records = [read_back(record) for record in built]
    else:
        with data.open(encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle]
    made = _made_controls(controls, records, str(data), recipes, forms)
    rows = dict.fromkeys(CONTROL_KINDS, 0)
    digest = hashlib.sha256()

    def lines() -> Iterator[bytes]:  # each line in its parts, written one after another
        for record in made:
            rows[record["control"]] += 1
            for part in json_line_parts(record):
                digest.update(part)
                yield part

    write_lines_atomic(controls_file_path(out, task, label), lines())
    return ControlsResult(rows, digest.hexdigest())


def _made_controls(
    controls: ControlBuilder,
    records: list[dict],
    where: str,
    recipes: Path | None,
    forms: Sequence[EscapedText | str] | None = None,
) -> Iterable[dict]:
    """The controls of ``records``: spelled from the recipes at ``recipes`` where they are there
    and fit these records and pool, else built, their recipes kept there."""
    kept = read_recipes(recipes) if recipes is not None else None
    if kept is not None and controls.fit(records, kept):
        return controls.from_recipes(records, kept, forms)
    twins = controls.twins(records, where)
    if recipes is not None:
        made = controls.recipes(records, twins)
        if made is not None:
            keep_recipes(recipes, made)
    return [twin.record for twin in twins]


class _EscapedPrompts:
    """The JSON forms (:func:`escaped_body`) of the stretches of a data file's prompts that
    recipes spell twins from, each stretch between two places where a segment starts or ends
    escaped once, when first asked for: from the parts of the prompt's form as the data file
    was written, where ``forms`` gives it (:meth:`EscapedText.stretch`)."""

    def __init__(
        self,
        records: list[dict],
        recipes: list[TwinRecipe],
        forms: Sequence[EscapedText | str] | None = None,
    ) -> None:
        places: dict[int, set[int]] = {}
        for recipe in recipes:
            for segment in recipe.segments:
                if not isinstance(segment, str) and segment[0] == "prompt":
                    places.setdefault(segment[1], set()).update(segment[2:])
        self._records = records
        self._places = {row: sorted(found) for row, found in places.items()}
        self._written = forms
        self._forms: dict[tuple[int, int], tuple[bytes, ...]] = {}  # (row, start place) -> form

    def stretch(self, row: int, start: int, end: int) -> list[bytes]:
        """The JSON form of row ``row``'s prompt's characters ``start:end`` (a segment of the
        recipes), as the forms of the stretches it spans."""
        places = self._places[row]
        number = bisect.bisect_left(places, start)
        forms: list[bytes] = []
        while places[number] < end:
            at, to = places[number], places[number + 1]
            form = self._forms.get((row, at))
            if form is None:
                form = self._forms[row, at] = self._escaped(row, at, to)
            forms.extend(form)
            number += 1
        return forms

    def _escaped(self, row: int, start: int, end: int) -> tuple[bytes, ...]:
        """The JSON form of row ``row``'s prompt's characters ``start:end``."""
        prompt = self._records[row]["prompt"]
        written = self._written[row] if self._written is not None else None
        if isinstance(written, EscapedText):
            return written.stretch(prompt, start, end)
        return (escaped_body(prompt[start:end]),)


def read_controls_result(out: Path, task: str, label: str) -> ControlsResult:
    """The rows per kind and sha256 of a controls file an earlier (resumed) run wrote."""
    path = controls_file_path(out, task, label)
    rows = dict.fromkeys(CONTROL_KINDS, 0)
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            kind = _json_object(line, f"{path}:{number}").get("control")
            if kind not in rows:
                raise UserError(f"{path}:{number}: not a control record (no known 'control' kind)")
            rows[kind] += 1
    return ControlsResult(rows, file_sha256(path))


def _json_object(line: str, where: str) -> dict:
    """One line of a controls file read as a JSON object; a one-line error naming ``where`` when it
    is not one (a file cut or damaged)."""
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if not isinstance(record, dict):
        raise UserError(
            f"{where}: not a JSON record; restore the file, or delete it and resume to build it"
            " again"
        )
    return record


def _own_stretches(context: str, spans: list[Span], start: int) -> list[tuple[str, int]]:
    """The stretches of the context around the gold spans (offsets into the prompt, whose context
    starts at ``start``), stripped, each with its offset in the prompt (for tasks with no
    sources)."""
    cuts = [0, *(offset - start for span in spans for offset in span), len(context)]
    stretches = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=True):
        text = context[a:b].strip()
        if text:
            stretches.append((text, start + a + len(context[a:b]) - len(context[a:b].lstrip())))
    return stretches


def _edited_segments(
    row: int, length: int, edits: Sequence[tuple[int, int, list[Segment] | None]]
) -> list[Segment] | None:
    """Row ``row``'s prompt (``length`` characters) with the characters ``start:end`` of each edit
    (in order, not overlapping) replaced by its segments, as segments (empty ones left out);
    ``None`` when an edit's are not known."""
    segments: list[Segment] = []
    position = 0
    for start, end, new in edits:
        if new is None:
            return None
        segments += [("prompt", row, position, start), *new]
        position = end
    segments.append(("prompt", row, position, length))
    return [
        segment
        for segment in segments
        if (segment if isinstance(segment, str) else segment[3] > segment[2])
    ]


def _removed_spans(task: str, gold: dict, blocks: tuple[Block, ...]) -> list[Span]:
    """The spans a gold-removed twin takes out: the gold blocks (:func:`gold_block_spans`), and for
    kv_retrieval and kv_retrieval_chain every record of the asked chain, not only those looked up (a
    chain left shorter than the decoys, all of one shape, would point at the answer)."""
    if task in ("kv_retrieval", "kv_retrieval_chain"):
        keys = set(gold.get("chain", [])[:-1])
        return [block.span for block in blocks if block.key in keys]
    return gold_block_spans(task, gold, blocks)


def _title_start(prompt: str, at: int) -> int | None:
    """Where the title of the titled document whose body starts at ``at`` begins (its
    ``(Title: T): ``, which goes with the body: titles are often the answer); ``None`` when the
    text at ``at`` is no titled document's body."""
    line_start = prompt.rfind("\n", 0, at) + 1
    line = prompt[line_start:at]
    return line_start + line.index("(Title: ") if _TITLED.fullmatch(line) else None


def _titled(
    pool: Sequence[PoolEntry],
) -> list[PoolEntry]:
    """The pool's titled documents, each as a titled document is shown, title with body."""
    return [
        (f"(Title: {document.title}): {passage_body(document)}", tokens, document)
        for _, tokens, document in pool
        if document is not None and document.title
    ]


def _control_record(
    record: dict, kind: str, prompt: str | EscapedText, counts: dict, extra: dict
) -> dict:
    """``record`` as a control twin: its own id, the kind and the twinned id, the new prompt and
    its token counts (:func:`~longbench100.generate.prompt_counts.prompt_counts`); the gold's
    recorded spans (which no longer point at gold) are dropped."""
    gold = {key: value for key, value in record["gold"].items() if key != "spans"}
    twin = {"id": f"{record['id']}-{kind}", "control": kind, "twin_of": record["id"]}
    rest = {key: value for key, value in record.items() if key != "id"}
    return {**twin, **rest, "prompt": prompt, **counts, "gold": gold, **extra}
