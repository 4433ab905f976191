"""RULER's QA tasks (qa_1 on SQuAD, qa_2 on HotpotQA; tasks/ruler_qa.py), re-derived from the prompt text: the
question's own paragraphs are all there among other paragraphs of the same dataset, RULER's layout (documents, then
the question), the exact budget with 32 tokens of answer room; SQuAD's same-article paragraphs come first; the suite
skips qa_1 in one line where its source is absent; RULER's string_match_part."""

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.scoring.metrics.parsers import string_match_part
from longbench100.text.tokenization import load_tokenizer
from tests.support.fixture_mirror import write_mirror
from tests.support.generate_helpers import generate, records

DOCUMENT = re.compile(r"^Document (\d+):\n", re.MULTILINE)
CLOSING = "\n\nUsing only the documents above, answer the question."


def documents(prompt: str) -> list[str]:
    """The numbered documents of a RULER QA prompt, in order (numbered 1, 2, ... as shown)."""
    marks = list(DOCUMENT.finditer(prompt))
    assert [int(mark.group(1)) for mark in marks] == list(range(1, len(marks) + 1))
    ends = [mark.start() for mark in marks[1:]] + [prompt.index(CLOSING)]
    return [prompt[mark.end() : end].strip() for mark, end in zip(marks, ends)]


def hotpot_rows(mirror: Path) -> list[dict]:
    return pq.read_table(
        mirror / "hotpotqa" / "hotpot_qa" / "distractor" / "train-00000-of-00001.parquet"
    ).to_pylist()


def paragraph(title: str, sentences: list[str]) -> str:
    """A HotpotQA paragraph as RULER writes it: the title on a line above the joined sentences."""
    return f"{title}\n{''.join(sentences).strip()}"


def test_qa_2_holds_every_paragraph_of_its_question_among_other_hotpotqa_paragraphs(
    mirror, tmp_path
):
    tokenizer = load_tokenizer("cl100k_base")
    out = generate(
        tmp_path / "qa",
        "--suite",
        "ruler",
        "--tasks",
        "qa_2",
        "--sources",
        str(mirror),
        "--rows",
        "3",
        "--lengths",
        "1k,2k",
    )
    rows = hotpot_rows(mirror)
    by_question = {row["question"]: row for row in rows}
    every_paragraph = {
        paragraph(title, sentences)
        for row in rows
        for title, sentences in zip(row["context"]["title"], row["context"]["sentences"])
    }
    for label, length in (("1k", 1024), ("2k", 2048)):
        for record in records(out, "qa_2", label):
            prompt = record["prompt"]
            assert prompt.endswith(f"Question: {record['question']} Answer:")
            assert tokenizer.count(prompt) == record["prompt_tokens"] <= length - 32
            source = by_question[record["question"]]
            assert record["answers"] == [source["answer"]]
            shown = documents(prompt)
            own = [
                paragraph(title, sentences)
                for title, sentences in zip(
                    source["context"]["title"], source["context"]["sentences"]
                )
            ]
            assert all(
                text in shown for text in own
            )  # the question's whole context, as RULER's read_hotpotqa
            others = [text for text in shown if text not in own]
            assert others and all(
                text in every_paragraph or any(full.startswith(text) for full in every_paragraph)
                for text in others
            )  # the rest: the dataset's own paragraphs (the last may be cut)
            assert len(set(shown)) == len(shown)


def squad_mirror(root: Path) -> Path:
    """A mirror holding only SQuAD, rewritten so that articles have several paragraphs (RULER's more_context)."""
    write_mirror(root, only={"squad_v2"})
    path = root / "rajpurkar" / "squad_v2" / "squad_v2" / "validation-00000-of-00001.parquet"
    rows = pq.read_table(path).to_pylist()
    for index, row in enumerate(rows):
        row["title"] = f"Article {index // 3}"
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows), path)
    return root


def test_qa_1_shows_the_articles_other_paragraphs_first(tmp_path):
    mirror = squad_mirror(tmp_path / "mirror")
    rows = pq.read_table(
        mirror / "rajpurkar" / "squad_v2" / "squad_v2" / "validation-00000-of-00001.parquet"
    ).to_pylist()
    out = generate(
        tmp_path / "qa",
        "--suite",
        "ruler",
        "--tasks",
        "qa_1",
        "--sources",
        str(mirror),
        "--rows",
        "3",
        "--lengths",
        "4k",
    )
    written = records(out, "qa_1", "4k")
    assert written
    for record in written:
        source = next(row for row in rows if row["question"] == record["question"])
        article = {row["context"].strip() for row in rows if row["title"] == source["title"]}
        shown = documents(record["prompt"])
        assert article <= set(shown)  # its paragraph and the rest of its article, which fit at 4k
        assert any(answer.lower() in source["context"].lower() for answer in record["answers"])


def test_the_suite_skips_qa_1_in_one_line_where_squad_is_absent(tmp_path):
    mirror = write_mirror(tmp_path / "mirror", only={"ruler_hotpotqa"})
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--suite",
            "ruler",
            "--tasks",
            "qa_1,qa_2",
            "--sources",
            str(mirror),
            "--rows",
            "1",
            "--lengths",
            "1k",
            "--out",
            str(tmp_path / "out"),
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("skipped:")]
    assert len(lines) == 1 and lines[0].startswith("skipped: qa_1: its source (squad_v2) is not in")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "qa_1" not in manifest["tasks"] and "qa_2" in manifest["tasks"]


def test_string_match_part_is_rulers_qa_metric():
    assert string_match_part("It was Mélanie Watt.", ["mélanie watt", "someone else"]) == 1.0
    assert string_match_part("Nobody", ["Mélanie Watt"]) == 0.0
    assert string_match_part("anything", ["", " "]) == 0.0
