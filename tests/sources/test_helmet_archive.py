"""bench/helmet_rerank_data.py: a BM25 run with passage text joined with TREC judgements gives rows in HELMET's
re-ranking layout that the ``helmet_msmarco`` source reads back with every grade (unjudged candidates 0) in
BM25's order, and a run without judgements stops."""

from __future__ import annotations

import json

import pytest

from longbench100.sources.loader import load_source
from longbench100.sources.locations import resolve_location
from tests.support.bench_scripts import load_bench_script

helmet_rerank_data = load_bench_script("helmet_rerank_data")

RUN = [
    {
        "query": "how long do fleas live",
        "hits": [
            {
                "content": "Fleas live up to a year.",
                "qid": 11,
                "docid": "501",
                "rank": 2,
                "score": 9.0,
            },
            {
                "content": "A flea lives about three months without a host.",
                "qid": 11,
                "docid": "500",
                "rank": 1,
                "score": 9.5,
            },
            {
                "content": "Ticks are not insects.",
                "qid": 11,
                "docid": "502",
                "rank": 3,
                "score": 4.0,
            },
        ],
    },
    {
        "query": "what is a wrap dress",
        "hits": [
            {
                "content": "A wrap dress closes by wrapping one side over the other.",
                "qid": 12,
                "docid": "600",
                "rank": 1,
                "score": 7.0,
            },
            {
                "content": "Dresses come in many cuts.",
                "qid": 12,
                "docid": "601",
                "rank": 2,
                "score": 5.0,
            },
        ],
    },
    {
        "query": "a query nobody judged",
        "hits": [
            {"content": "Some passage.", "qid": 13, "docid": "700", "rank": 1, "score": 3.0},
        ],
    },
]
QRELS = "11 Q0 500 3\n11 Q0 502 1\n11 Q0 999 2\n12 Q0 601 2\n"


def test_rows_read_back_with_their_grades_in_bm25_order(tmp_path):
    run, qrels = tmp_path / "run.json", tmp_path / "qrels.txt"
    run.write_text(json.dumps(RUN), encoding="utf-8")
    qrels.write_text(QRELS, encoding="utf-8")
    mirror = tmp_path / "mirror"
    helmet_rerank_data.main([str(run), str(qrels), "--mirror", str(mirror)])
    location = resolve_location(str(mirror))
    data = load_source(location, location.registry()["helmet_msmarco"])
    items = {item.id.split("/", 1)[1]: item for item in data.items}
    assert sorted(items) == ["11", "12"]  # the unjudged query is left out
    flea = items["11"]
    assert flea.question == "how long do fleas live"
    assert [doc_id.split("/", 1)[1] for doc_id in flea.doc_ids] == ["500", "501", "502"]
    assert list(flea.grades) == [3, 0, 1]
    assert data.documents[flea.doc_ids[0]].text == "A flea lives about three months without a host."
    assert list(items["12"].grades) == [0, 2]


def test_a_run_without_judgements_stops(tmp_path):
    run, qrels = tmp_path / "run.json", tmp_path / "qrels.txt"
    run.write_text(json.dumps(RUN[2:]), encoding="utf-8")
    qrels.write_text(QRELS, encoding="utf-8")
    with pytest.raises(SystemExit, match="no query of the run has judgements"):
        helmet_rerank_data.main([str(run), str(qrels), "--mirror", str(tmp_path / "mirror")])
    qrels.write_text("11 500 3\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="line 1 is not"):
        helmet_rerank_data.main([str(run), str(qrels), "--mirror", str(tmp_path / "mirror")])
    with pytest.raises(SystemExit, match="cannot read the run or the judgements"):
        helmet_rerank_data.main(
            [str(tmp_path / "missing.json"), str(qrels), "--mirror", str(tmp_path / "mirror")]
        )
