"""A synthetic local mirror in hub layout, written from the real registry entries.

Every file that a packaged ``sources/*.toml`` entry names is written with the fields its mapping
reads, filled with made-up sentences (never copied text), so the real mappings, readers and task
builders can be tested without the upstream data or ../shared.
"""

from __future__ import annotations

import io
import json
import random
import re
import tarfile
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from longbench100.core.paths import packaged_dir
from longbench100.sources.readers import is_tar_archive
from longbench100.sources.registry import FileSpec, SourceEntry, load_registry

WORDS = (
    "river market engine garden council harbor signal ledger orchard lantern meadow circuit quarry beacon canal "
    "teacher farmer pilot clerk surveyor weaver baker miner sailor painter mayor nurse judge builder courier "
    "quietly slowly early nearly often rarely later again soon together"
).split()
VERBS = (
    "built found moved opened closed measured repaired painted sold counted crossed mapped".split()
)


def sentence(rng: random.Random) -> str:
    """One made-up sentence."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(5, 12))]
    words.insert(2, rng.choice(VERBS))
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    """A made-up paragraph of ``sentences`` sentences."""
    return " ".join(sentence(rng) for _ in range(sentences))


PEOPLE = (
    "Anna Brook",
    "Mr. Tallis",
    "Mrs. Verey",
    "Tom",
    "Clara",
    "Dr. Oakes",
    "Hester",
    "Captain Rowe",
    "Ned",
    "Lucy Fane",
)
BOOKS = 3
BOOK_PARAGRAPHS = 320  # about 30k tokens a book: long enough for one-document tasks at 16k


def book(rng: random.Random, number: int) -> str:
    """A made-up book in Project Gutenberg's frame: licence header, START line, paragraphs naming people, END line."""
    paragraphs = []
    for index in range(BOOK_PARAGRAPHS):
        sentences = [sentence(rng) for _ in range(rng.randint(3, 7))]
        if (
            rng.random() < 0.7
        ):  # most paragraphs name somebody, at a sentence's opening or inside it
            place = rng.randrange(len(sentences))
            name, verb, word = rng.choice(PEOPLE), rng.choice(VERBS), rng.choice(WORDS)
            sentences.insert(
                place, f"{name} {verb} the {word}." if index % 2 else f"The {word} {verb} {name}."
            )
        text = " ".join(sentences)
        cut = [index for index, char in enumerate(text) if char == " "][
            ::9
        ]  # hard-wrapped lines, as Gutenberg's
        paragraphs.append(
            "".join("\n" if index in cut[1:] else char for index, char in enumerate(text))
        )
    body = "\n\n".join(paragraphs)
    return (
        f"The Project Gutenberg EBook of Book {number}\n\nThis eBook is for the use of anyone anywhere.\n\n"
        f"*** START OF THIS PROJECT GUTENBERG EBOOK BOOK {number} ***\n\nProduced by a volunteer.\n\n\n{body}\n\n"
        f"End of the Project Gutenberg EBook of Book {number}\n\n*** END OF THIS PROJECT GUTENBERG EBOOK BOOK {number} ***\n\nLicence text.\n"
    )


# A made-up classification set: requests about eight everyday topics. Every class has train rows; the
# last has no test rows; the first test row repeats a train text of its class (as real sets sometimes do).
CLASS_NAMES = ("weather", "travel", "cooking", "music", "sport", "money", "health", "garden")
TRAIN_PER_CLASS = 5
TEST_PER_CLASS = 3


def _request(label: int, key: str) -> str:
    """A made-up request about class ``label``'s topic; the same ``key`` gives the same text."""
    return f"Please help with {CLASS_NAMES[label]}: {sentence(random.Random(key)).lower()}"


def _classification_rows(spec: FileSpec) -> list[dict]:
    """Labelled requests for a classification file: ``TRAIN_PER_CLASS`` (train) or ``TEST_PER_CLASS`` (test) per class, as class indices."""
    item = spec.item
    split = item.split or "train"
    per_class = TRAIN_PER_CLASS if split == "train" else TEST_PER_CLASS
    classes = range(len(CLASS_NAMES)) if split == "train" else range(len(CLASS_NAMES) - 1)
    keys = [
        (label, f"{split}-{number}-{label}") for number in range(per_class) for label in classes
    ]
    if split != "train":
        keys[0] = (0, "train-0-0")
    return [{item.text: _request(label, key), item.label: label} for label, key in keys]


RANKING_QUERIES = 12
RANKING_CANDIDATES = 40  # per query: grades 3, 2 and 1 a few times each, the rest 0


def _ranking_rows(spec: FileSpec, rng: random.Random) -> list[dict]:
    """Re-ranking rows in HELMET's layout (``{"qid", "query", "ctxs": [{"id", "text", "label"}]}``): each query's
    candidates graded 0-3; the last candidate of each query is the first of the next query (a passage that
    two queries share keeps its id and text), and the first query lists one candidate twice."""
    item, document = spec.item, spec.document
    list_name, text_key = document.text.rsplit(".", 1)
    id_key, grade_key = document.id.rsplit(".", 1)[1], item.grades.rsplit(".", 1)[1]
    rows = []
    shared: dict | None = None
    for index in range(RANKING_QUERIES):
        grades = [3, 2, 2, 1, 1, 1] + [0] * (RANKING_CANDIDATES - 6)
        rng.shuffle(grades)
        candidates = [
            {
                id_key: f"{7000 + index * 100 + n}",
                text_key: paragraph(rng, rng.randint(1, 3)),
                grade_key: grade,
            }
            for n, grade in enumerate(grades)
        ]
        if shared is not None:
            candidates[0] = {**shared, grade_key: 0}
        if index == 0:
            candidates.append(dict(candidates[1]))
        shared = candidates[-1]
        rows.append(
            {
                item.id: f"q{index}",
                item.question: f"what does the {rng.choice(WORDS)} {rng.choice(VERBS)} in part {index}",
                list_name: candidates,
            }
        )
    return rows


def _span(text: str, start: int) -> str:
    """Two consecutive words of ``text`` from about word ``start`` (an extractive answer), or a made-up one without text."""
    words = re.findall(r"[a-z]+", text.lower())
    if len(words) < 2:
        return f"the {WORDS[start]}"
    offset = start % (len(words) - 1)
    return " ".join(words[offset : offset + 2])


def _rows_for(
    entry: SourceEntry, spec: FileSpec, rng: random.Random, corpus: dict[int, str]
) -> list[dict]:
    """Rows carrying exactly the fields ``spec`` maps, with synthetic content of varied length; QA answers
    are spans of the row's document or of the ``corpus`` documents (by id) the row refers to."""
    corpus_ids = list(range(30))
    if spec.item is not None and spec.item.kind == "classification":
        return _classification_rows(spec)
    if spec.item is not None and spec.item.kind == "ranking":
        return _ranking_rows(
            spec, random.Random(f"ranking-{entry.name}")
        )  # its own generator: other sources' rows stay as they were
    if "gutenberg" in entry.clean:
        # each book from its own generator, so adding books leaves every other source's made-up rows as they were
        return [
            {
                spec.document.text: book(random.Random(f"book-{number}"), number),
                spec.document.id: str(number),
            }
            for number in range(1, BOOKS + 1)
        ]
    rows = []
    count = 30 if spec.document and spec.item is None else 12
    for index in range(count):
        row: dict = {}
        if spec.document is not None:
            if (
                spec.document.split == "lists"
            ):  # HotpotQA's layout: parallel title and sentence lists, nested
                titles = [f"{rng.choice(WORDS).title()} {index}-{n}" for n in range(1, 5)]
                _put(row, spec.document.title, titles)
                _put(
                    row,
                    spec.document.text,
                    [
                        [sentence(rng)] + [" " + sentence(rng) for _ in range(rng.randint(1, 4))]
                        for _ in titles
                    ],
                )
            elif spec.document.split:
                passages = [
                    f"Passage {n}:\n{rng.choice(WORDS).title()} {index}-{n}\n{paragraph(rng, rng.randint(2, 5))}"
                    for n in range(1, 5)
                ]
                row[spec.document.text] = "\n".join(passages)
            else:
                row[spec.document.text] = "\n\n".join(
                    paragraph(rng, 6) for _ in range(rng.randint(1, 12))
                )
            if spec.document.id:
                row[spec.document.id] = (
                    index if spec.format == "parquet" else f"{entry.name}-{index}"
                )
            if spec.document.title and spec.document.split != "lists":
                row[spec.document.title] = f"Title {index}"
        if spec.item is not None:
            item = spec.item
            if item.id:
                row[item.id] = f"{entry.name}-q{index}"
            questions = [
                f"What did the {rng.choice(WORDS)} {rng.choice(VERBS)} in part {index}-{k}?"
                for k in range(2)
            ]
            answer_starts = [WORDS.index(rng.choice(WORDS)) for _ in range(2)]
            summaries = [paragraph(rng, 2) for _ in range(2)]
            if item.doc_ids:
                row[item.doc_ids] = rng.sample(corpus_ids, 2)
            if item.doc_titles:  # the first two paragraphs support the answer
                _put(row, item.doc_titles, _get(row, spec.document.title)[:2])
                grounds = " ".join(
                    "".join(sentences) for sentences in _get(row, spec.document.text)[:2]
                )
            elif spec.document:
                grounds = row.get(spec.document.text, "")
            else:
                grounds = " ".join(corpus.get(i, "") for i in row.get(item.doc_ids, []))
            answers = [_span(grounds, start) for start in answer_starts]
            if item.kind == "summary" and spec.document and not spec.document.split:
                # a summary of the row's one document repeats its words, as a real one would
                summaries = [_closing_sentences(grounds, skip) for skip in (0, 2)]
            if item.parallel:
                row[item.question] = (
                    questions if item.kind == "qa" else ["Please summarize the text."] * 2
                )
                row[item.answers or item.summary] = answers if item.kind == "qa" else summaries
            else:
                if item.question:
                    row[item.question] = questions[0]
                if item.kind == "qa":
                    _put(row, item.answers, [answers[0]] if spec.format == "jsonl" else answers[0])
                else:
                    row[item.summary] = [summaries[0]] if spec.member else summaries[0]
            for name, values in item.where:  # every fourth row fails the entry's row filter
                row[name] = None if index % 4 == 3 else values[0]
        rows.append(row)
    return rows


def _closing_sentences(text: str, skip: int) -> str:
    """Two sentences of ``text``, ``skip`` sentences before its end (fewer when it is short)."""
    sentences = text.replace("\n", " ").split(". ")
    return ". ".join(sentences[-2 - skip : len(sentences) - skip or None]).strip().rstrip(".") + "."


def _put(row: dict, name: str, value: object) -> None:
    """Set field ``name`` of ``row``; a dotted name (``context.title``) writes inside nested objects."""
    *parents, last = name.split(".")
    for part in parents:
        row = row.setdefault(part, {})
    row[last] = value


def _get(row: dict, name: str) -> object:
    """Field ``name`` of ``row`` (dotted names read nested objects)."""
    for part in name.split("."):
        row = row[part]
    return row


def _merge_rows(earlier: list[dict], later: list[dict]) -> list[dict]:
    """Rows of a file two entries read: the earlier entry's rows, plus the fields only the later one maps."""
    return [{**extra, **row} for row, extra in zip(earlier, later)]


def _with_class_names(table: pa.Table, columns: set[str]) -> pa.Table:
    """``table`` with the hub's ``huggingface`` schema metadata naming the classes of ``columns`` (ClassLabel)."""
    if not columns:
        return table
    features = {
        name: {"names": list(CLASS_NAMES), "_type": "ClassLabel"}
        if name in columns
        else {"dtype": "string", "_type": "Value"}
        for name in table.column_names
    }
    return table.replace_schema_metadata(
        {"huggingface": json.dumps({"info": {"features": features}})}
    )


OWN_GENERATOR = frozenset({"ruler_hotpotqa", "squad_v2"})


def write_mirror(root: Path, *, only: set[str] | None = None, seed: int = 7) -> Path:
    """Write a synthetic mirror of every registered source (or of those named in ``only``) under ``root``."""
    rng = random.Random(seed)
    files: dict[tuple[Path, str | None, str], list[dict]] = {}
    class_columns: dict[Path, set[str]] = {}
    for entry in load_registry(packaged_dir("sources")).values():
        if only is not None and entry.name not in only:
            continue
        corpus: dict[int, str] = {}
        # sources added later draw from their own generator, so every earlier source's made-up rows stay as they were
        entry_rng = random.Random(f"rows-{entry.name}") if entry.name in OWN_GENERATOR else rng
        for spec in entry.files:
            rows = _rows_for(entry, spec, entry_rng, corpus)
            if spec.document is not None and spec.document.id and spec.item is None:
                corpus.update({index: row[spec.document.text] for index, row in enumerate(rows)})
            key = (
                root / entry.repo_id / spec.path.replace("*", "00000-of-00001"),
                spec.member,
                spec.format,
            )  # a wildcard names one shard
            if spec.item is not None and spec.item.kind == "classification":
                class_columns.setdefault(key[0], set()).add(spec.item.label)
            files[key] = _merge_rows(files[key], rows) if key in files else rows
    zips: dict[Path, dict[str, bytes]] = {}
    for (path, member, file_format), rows in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if member:
            zips.setdefault(path, {})[member] = "".join(
                json.dumps(row) + "\n" for row in rows
            ).encode()
            continue
        if file_format == "parquet":
            pq.write_table(
                _with_class_names(pa.Table.from_pylist(rows), class_columns.get(path, set())), path
            )
        else:
            path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for path, members in zips.items():
        path.write_bytes(tar_archive(members) if is_tar_archive(path) else zip_archive(members))
    return root


def zip_archive(members: dict[str, bytes]) -> bytes:
    """A zip archive holding ``members`` (name -> bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, data in sorted(members.items()):
            archive.writestr(member, data)
    return buffer.getvalue()


def tar_archive(members: dict[str, bytes]) -> bytes:
    """A gzip-compressed tar archive holding ``members`` after an unrelated first member (as HELMET's data.tar.gz holds many)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, data in [("data/README.txt", b"other data\n"), *sorted(members.items())]:
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
