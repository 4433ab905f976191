"""Integration over the real upstream files in ../shared/sources (skipped where that mirror is absent)."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.text.tokenization import load_tokenizer
from tests.conftest import SHARED_SOURCES

pytestmark = pytest.mark.skipif(
    not (SHARED_SOURCES / "README.md").exists(),
    reason="../shared/sources (real upstream mirror) is absent",
)

PRESENT = [
    "cnn_dailymail",
    "financial_qa",
    "hotpot_qa",
    "hotpotqa",
    "legal_contract_qa",
    "meeting_summ",
    "multidoc_qa",
    "musique",
    "natural_question",
    "patent_summ",
    "qmsum",
    "rag_mini_bioasq",
    "review_summ",
    "scientific_qa",
    "tv_show_summ",
    "leval_gov_report_summ",
    "leval_news_summ",
    "rag_mini_bioasq_summary",
    "helmet_msmarco",
    "ruler_hotpotqa",
]
DOCUMENTS_ONLY = {"project_gutenberg": 13}  # whole books, no items
CLASSIFICATION = {
    "banking77": 13078,
    "clinc150": 20750,
    "trec_coarse": 5881,
    "trec_fine": 5882,
}  # train + test items, no documents


def test_verify_lists_every_source_present_with_counts() -> None:
    result = CliRunner().invoke(main, ["sources", "verify", "--sources", str(SHARED_SOURCES)])
    assert result.exit_code == 0, result.output
    rows = {
        line.split()[1]: line.split()
        for line in result.output.splitlines()
        if re.match(r"^\s*(\d+|-) \S+ ", line)
    }
    for name in PRESENT:
        assert name in rows and int(rows[name][2]) > 0 and int(rows[name][3]) > 0, name
    for name in ("qasper", "2wikimqa", "multi_news_e", "squad_v2"):
        assert rows[name][2] == "missing:"
    assert rows["rag_mini_bioasq_rerank"][2:4] == [
        "stand-in,",
        "unused",
    ]  # the mirror holds HELMET's own archive
    assert rows["cnn_dailymail"][2:4] == [
        "999",
        "999",
    ]  # 1000 articles, one exact duplicate merged (and its item)
    assert rows["leval_news_summ"][3:6] == ["11", "0", "1"]  # two identical news items count once
    for name, items in CLASSIFICATION.items():
        assert rows[name][2:4] == ["0", str(items)], name
    assert (
        f"{len(PRESENT) + len(CLASSIFICATION) + len(DOCUMENTS_ONLY)} sources loaded, 9 missing, 0 malformed"
        in result.output
    )


def test_generate_fills_real_budgets(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--sources",
            str(SHARED_SOURCES),
            "--lengths",
            "4k,8k",
            "--rows",
            "3",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    tokenizer = load_tokenizer()
    for path in sorted(out.glob("*/*.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(records) == 3, path
        fills = [tokenizer.count(r["prompt"]) / r["length"] for r in records]
        assert max(fills) <= 1 and statistics.median(fills) >= 0.97, (path, fills)


def test_declared_cleaning_leaves_no_markup_mojibake_entities_tokenization_or_fragments() -> None:
    from longbench100.sources.loader import load_source
    from longbench100.sources.locations import resolve_location

    location = resolve_location(str(SHARED_SOURCES))
    registry = location.registry()
    noise = {
        "natural_question": re.compile(
            r"</?(?:H\d|P|Table|Tr|Td|Th|Li|Ul|Ol|Dl|Dd|Dt)\b", re.IGNORECASE
        ),
        "review_summ": re.compile(r"â€|Ã[\x80-\xbf]"),
        "qmsum": re.compile(r"\{(?:disfmarker|vocalsound|nonvocalsound|pause|gap|comment)\}"),
        "meeting_summ": re.compile(
            r"\{(?:disfmarker|vocalsound|nonvocalsound|pause|gap|comment)\}"
        ),
        "rag_mini_bioasq": re.compile(
            r"</?(?:b|br|i|sup|sub|AbstractText)\b|&(?:amp|lt|gt|quot|#\d+);"
        ),
        "hotpotqa": re.compile(r"<ref\b|\{\{|\|accessdate=|&amp;"),
        "scientific_qa": re.compile(
            r"\b(?:BIBREF|TABREF|FIGREF|SECREF|INLINEFORM|DISPLAYFORM)\d+|\\mathbf"
        ),
        "trec_coarse": re.compile(r"``|''|\w \?$|\w 's\b"),
        "multidoc_qa": re.compile(r"\b(?:don|doesn|won|isn) t\b|\byou (?:ll|re|ve)\b"),
        "financial_qa": re.compile(r"&amp;"),
        "patent_summ": re.compile(r"&#39;"),
        "review_summ_fffd": re.compile("\ufffd"),
    }
    for key, pattern in noise.items():
        name = key.removesuffix("_fffd")
        data = load_source(location, registry[name])
        texts = [doc.text for doc in data.documents.values()]
        texts += [text for item in data.items for text in (item.question or "", *item.answers)]
        left = [text for text in texts if pattern.search(text)]
        assert not left, (name, len(left), pattern.search(left[0]).group(0))
    passages = load_source(location, registry["rag_mini_bioasq"]).documents.values()
    assert not [
        doc.text for doc in passages if re.match(r"[a-z]+[ ,;:]", doc.text)
    ]  # no snippet opens mid-sentence
    table = next(
        doc.text
        for doc in load_source(location, registry["natural_question"]).documents.values()
        if "Statue of Liberty" in doc.text[:60]
    )
    assert (
        "Dedicated | October 28, 1886" in table.splitlines()
    )  # table cells kept, one row per line


def test_bioasq_summary_questions_are_multi_document_items() -> None:
    from longbench100.sources.loader import load_source
    from longbench100.sources.locations import resolve_location

    location = resolve_location(str(SHARED_SOURCES))
    data = load_source(location, location.registry()["rag_mini_bioasq_summary"])
    # 362 summary questions with two passages or more; snippet_fragments empties the passages that are only
    # a fragment, and one summary question and one other question lose all theirs (skipped as empty)
    assert len(data.items) == 361 and data.filtered_items == 1947
    assert all(
        item.kind == "summary" and item.question and len(item.doc_ids) >= 2 for item in data.items
    )
