"""The choices and claims behind rag_hard / rerank: BM25 library speed and determinism, and how much harder
BM25 negatives are than random ones.

Usage: python bench/bench_retrieval.py [--sources MIRROR] [--rows 10] [--lengths 8k,16k,32k,64k]
Needs the candidate besides the chosen one: pip install rank-bm25

Libraries: index time and per-query time over the rag-mini-bioasq corpus for its first 200 questions,
bm25s (ours) against rank-bm25 (BM25Okapi), each with its own usual tokenisation; whether two builds
give identical scores; how many of bm25s's top 10 rank-bm25 also ranks in its top 10.
Negatives: ``generate --tasks rag_hard,rerank`` with ``--negatives bm25`` and ``random`` (same seed and
rows), then the BM25 score of every placed negative (recorded in ``gold.negative_scores``), per task
and source: mean, median, share above zero.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
WORD = re.compile(r"\w\w+")


def compare_libraries(sources: str, queries: int = 200) -> None:
    """Print index and query times, determinism and top-10 agreement of bm25s and rank-bm25."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from longbench100.sources.bm25 import _build
    from longbench100.sources.loader import load_source
    from longbench100.sources.locations import resolve_location

    location = resolve_location(sources)
    data = load_source(location, location.registry()["rag_mini_bioasq"])
    ids = list(data.documents)
    texts = [data.documents[doc_id].text for doc_id in ids]
    questions = [item.question for item in data.items[:queries]]
    start = time.perf_counter()
    ours = _build("rag_mini_bioasq", ids, texts)
    ours_index = time.perf_counter() - start
    start = time.perf_counter()
    ours_scores = [ours.scores(question) for question in questions]
    ours_query = (time.perf_counter() - start) / len(questions)
    again = _build("rag_mini_bioasq", ids, texts)
    identical = all(np.array_equal(a, again.scores(q)) for a, q in zip(ours_scores, questions))
    start = time.perf_counter()
    other = BM25Okapi([WORD.findall(text.lower()) for text in texts])
    other_index = time.perf_counter() - start
    start = time.perf_counter()
    other_scores = [other.get_scores(WORD.findall(question.lower())) for question in questions]
    other_query = (time.perf_counter() - start) / len(questions)
    overlap = statistics.mean(
        len(set(np.argsort(-a, kind="stable")[:10]) & set(np.argsort(-b, kind="stable")[:10])) / 10
        for a, b in zip(ours_scores, other_scores)
    )
    print(f"corpus: {len(texts)} passages, {len(questions)} questions")
    print(
        f"bm25s:     index {ours_index:.2f} s, query {ours_query * 1000:.2f} ms, identical scores on rebuild: {identical}"
    )
    print(f"rank-bm25: index {other_index:.2f} s, query {other_query * 1000:.2f} ms")
    print(f"top-10 overlap between the two: {overlap:.2f}")


def compare_negatives(sources: str, rows: int, lengths: str) -> None:
    """Generate both variants and print the BM25 scores of the placed negatives."""
    with tempfile.TemporaryDirectory() as folder:
        for kind in ("bm25", "random"):
            out = Path(folder) / kind
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "longbench100",
                    "generate",
                    "--tasks",
                    "rag_hard,rerank",
                    "--sources",
                    sources,
                    "--lengths",
                    lengths,
                    "--rows",
                    str(rows),
                    "--workers",
                    "1",
                    "--quiet",
                    "--negatives",
                    kind,
                    "--out",
                    str(out),
                ],
                check=True,
                cwd=HERE.parent,
                stdout=subprocess.DEVNULL,
            )
            print(f"--negatives {kind}: generated in {time.perf_counter() - start:.1f} s")
            for task in ("rag_hard", "rerank"):
                scores: dict[str, list[float]] = defaultdict(list)
                for path in sorted((out / task).glob("*.jsonl")):
                    for line in path.read_text().splitlines():
                        record = json.loads(line)
                        placed = [entry["bm25"] for entry in record["gold"]["negative_scores"]]
                        scores[record["gold"]["sources"][0]].extend(placed)
                        scores["all"].extend(placed)
                for source, values in scores.items():
                    print(
                        f"  {task:9} {source:16} n={len(values):6} mean {statistics.mean(values):.2f} "
                        f"median {statistics.median(values):.2f} above 0: {sum(v > 0 for v in values) / len(values):.1%}"
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=str(HERE.parent.parent / "shared" / "sources"))
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--lengths", default="8k,16k,32k,64k")
    arguments = parser.parse_args()
    compare_libraries(arguments.sources)
    compare_negatives(arguments.sources, arguments.rows, arguments.lengths)


if __name__ == "__main__":
    main()
