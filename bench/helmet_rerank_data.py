"""Rebuild HELMET's re-ranking file from public pieces, to measure rerank where HELMET's archive cannot be fetched.

HELMET's rerank reads ``data/msmarco/test_reranking_data_k1000_dep3.jsonl`` from its ``data.tar.gz`` on the hub:
the TREC Deep Learning 2019 passage queries, each with BM25's candidates from MS MARCO and their TREC grades
0-3 (an unjudged candidate counts as 0, as TREC's evaluation treats it). Two public files give the same kind
of rows, for a shallower depth:

- a BM25 run with the passages' text, as castorini/rank_llm kept it (``retrieve_results/BM25/
  retrieve_results_dl19.json``: 43 queries x BM25's top 100 over MS MARCO, each hit's ``content``, ``qid``,
  ``docid``, ``rank``);
- TREC's judgements for those queries (castorini/anserini-tools ``qrels/qrels.dl19-passage.txt``:
  ``qid Q0 docid grade``).

This script joins them into HELMET's row layout (``{"qid", "query", "ctxs": [{"id", "text", "label"}]}``,
candidates in BM25's order) and writes a ``data.tar.gz`` holding that member where a source mirror keeps
HELMET's archive, so ``generate --suite helmet --sources MIRROR`` builds rerank from it (source
``helmet_msmarco``). What differs from HELMET's own file: 100 candidates per query instead of up to 1,000
(rerank shows a grade-balanced prefix, so prompts up to about 8k-16k tokens draw only on these; longer ones
add the mirror's other passages as grade 0, as with HELMET's file once a query's candidates run out).

Usage: python bench/helmet_rerank_data.py RUN.json QRELS.txt --mirror DIR
  DIR gets ``princeton-nlp/HELMET/data.tar.gz``; link the rest of a source mirror beside it.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tarfile
from collections import Counter, defaultdict
from pathlib import Path

MEMBER = "data/msmarco/test_reranking_data_k1000_dep3.jsonl"
ARCHIVE = Path("princeton-nlp") / "HELMET" / "data.tar.gz"


def read_grades(qrels: Path) -> dict[str, dict[str, int]]:
    """TREC judgements: ``{qid: {docid: grade}}`` from ``qid Q0 docid grade`` lines."""
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    for number, line in enumerate(qrels.read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise SystemExit(f"{qrels}: line {number} is not 'qid Q0 docid grade'")
        qid, _, docid, grade = fields
        grades[qid][docid] = int(grade)
    return grades


def helmet_rows(run: list[dict], grades: dict[str, dict[str, int]]) -> list[dict]:
    """One HELMET re-ranking row per judged query of ``run``: its candidates in BM25's order, unjudged ones graded 0."""
    rows = []
    for query in run:
        hits = sorted(query["hits"], key=lambda hit: hit["rank"])
        qid = str(hits[0]["qid"])
        if qid not in grades:
            continue
        ctxs = [
            {
                "id": str(hit["docid"]),
                "text": hit["content"],
                "label": grades[qid].get(str(hit["docid"]), 0),
            }
            for hit in hits
        ]
        rows.append({"qid": qid, "query": query["query"], "ctxs": ctxs})
    return rows


def write_archive(rows: list[dict], path: Path) -> None:
    """A gzip-compressed tar holding ``rows`` as HELMET's re-ranking member (JSON lines)."""
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, mode="w:gz") as archive:
        info = tarfile.TarInfo(MEMBER)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, join the run with its judgements and write the archive."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "run", type=Path, help="BM25 run with passage text (rank_llm's retrieve_results JSON)"
    )
    parser.add_argument("qrels", type=Path, help="TREC judgements for the run's queries")
    parser.add_argument(
        "--mirror",
        type=Path,
        required=True,
        help="source mirror folder to write HELMET's archive into",
    )
    args = parser.parse_args(argv)
    try:
        run = json.loads(args.run.read_text(encoding="utf-8"))
        grades = read_grades(args.qrels)
    except (OSError, ValueError) as error:
        raise SystemExit(f"cannot read the run or the judgements: {error}") from None
    rows = helmet_rows(run, grades)
    if not rows:
        raise SystemExit("no query of the run has judgements")
    target = args.mirror / ARCHIVE
    write_archive(rows, target)
    counts = Counter(ctx["label"] for row in rows for ctx in row["ctxs"])
    print(
        f"{target}: {len(rows)} queries, {sum(counts.values())} candidates, grades "
        + ", ".join(f"{grade}: {counts[grade]}" for grade in sorted(counts)),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
