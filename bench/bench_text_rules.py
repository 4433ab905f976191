"""Compare sentence segmenters and near-duplicate finders on the real sources (the choices behind text/sentences.py and near_duplicates.py).

Usage: python bench/bench_text_rules.py [--sources MIRROR] [--per-source 10]
Needs the candidates besides the chosen ones: pip install pysbd syntok blingfire datasketch

Segmenters: CPU chars/s over ``--per-source`` random documents of every source, and sentence
ends placed wrongly (inside an abbreviation or initial) or missed on an abbreviation-heavy text of
our own. Near-duplicates: CPU seconds and pairs found over every document, exact shingle overlap
(ours) against MinHash LSH (datasketch, 128 permutations, Jaccard threshold 0.5).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
ABBREVIATION_SENTENCES = [
    "Dr. A. B. Moss met Mr. Hale at 9 a.m. in the U.S. capital on Tuesday.",
    "The U.S. Senate and Gov. Reyes agreed on the plan, e.g. new rail lines.",
    "She said it would start soon.",
    "Lt. Col. J. K. Ortiz of No. 4 Squadron flew to St. Paul and Ft. Lee afterwards.",
    "Costs rose 3.5 percent vs. the year before!",
    "Sen. Ruiz, R-Tex., and Rep. Lowe spoke at the Washington, D.C. office.",
    "Prof. E. Park (Ph.D.) arrived late.",
    "The firm, Acme Inc., grew.",
]


def segmenters() -> dict:
    """Name -> function giving the end offsets of the sentences of a text."""
    import blingfire
    import pysbd
    import sentencex
    import syntok.segmenter as syntok

    from longbench100.text.sentences import sentence_ends

    pysbd_segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    old_rule = re.compile(r"""[.!?。！？]["'”’)\]]*(?=\s)|\n""")
    return {
        "previous regex": lambda text: [match.end() for match in old_rule.finditer(text)],
        "sentencex": lambda text: [
            span["start_index"] + len(span["text"].rstrip())
            for span in sentencex.get_sentence_boundaries("en", text)
        ],
        "sentencex + ending rules (ours)": sentence_ends,
        "blingfire": lambda text: [
            end for _, end in blingfire.text_to_sentences_and_offsets(text)[1]
        ],
        "syntok": lambda text: [
            sentence[-1].offset + len(sentence[-1].value)
            for paragraph in syntok.analyze(text)
            for sentence in paragraph
        ],
        "pysbd": lambda text: [span.end for span in pysbd_segmenter.segment(text)],
    }


def abbreviation_errors(ends_of) -> tuple[int, int]:
    """(wrong ends, missed ends) on the abbreviation-heavy text."""
    text = " ".join(ABBREVIATION_SENTENCES)
    truth, position = set(), 0
    for sentence in ABBREVIATION_SENTENCES:
        position = text.index(sentence, position) + len(sentence)
        truth.add(position)
    found = {len(text[:end].rstrip()) for end in ends_of(text)} - {0}
    return len(found - truth), len(truth - found)


def load_documents(sources: str):
    """Every document of every active source."""
    from longbench100.sources.loader import load_source
    from longbench100.sources.locations import active_entries, resolve_location

    location = resolve_location(sources)
    return [
        document
        for entry in active_entries(location, location.registry()).values()
        for document in load_source(location, entry).documents.values()
    ]


def near_duplicate_pairs_minhash(documents) -> set[tuple[str, str]]:
    """Pairs found by datasketch's MinHash LSH on the same 8-word shingles (Jaccard threshold 0.5)."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    pairs: set[tuple[str, str]] = set()
    for document in documents:
        words = re.findall(r"\w+", document.text.lower())
        shingles = {" ".join(words[i : i + 8]).encode() for i in range(len(words) - 7)}
        if not shingles:
            continue
        signature = MinHash.bulk([list(shingles)], num_perm=128)[0]
        pairs.update(tuple(sorted((other, document.id))) for other in lsh.query(signature))
        lsh.insert(document.id, signature)
    return pairs


def main() -> None:
    """Run both comparisons and print markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=str(HERE.parent.parent / "shared" / "sources"))
    parser.add_argument("--per-source", type=int, default=10)
    args = parser.parse_args()
    documents = load_documents(args.sources)
    by_source: dict[str, list] = {}
    for document in documents:
        by_source.setdefault(document.source, []).append(document)
    sample = [
        d.text
        for docs in by_source.values()
        for d in random.Random(0).sample(docs, min(args.per_source, len(docs)))
    ]
    chars = sum(len(text) for text in sample)
    print(f"segmenters over {len(sample)} documents, {chars / 1e6:.1f} M chars")
    print("| segmenter | CPU chars/s | wrong ends | missed ends |\n|---|---:|---:|---:|")
    for name, ends_of in segmenters().items():
        started = time.process_time()
        for text in sample:
            ends_of(text)
        seconds = time.process_time() - started
        wrong, missed = abbreviation_errors(ends_of)
        print(f"| {name} | {chars / seconds / 1e6:.2f} M | {wrong} | {missed} |")

    from longbench100.sources.near_duplicates import _group

    distinct = list({document.text: document for document in documents}.values())
    started = time.process_time()
    exact = _group(distinct)
    exact_seconds = time.process_time() - started
    exact_members = set(exact.canonical)
    started = time.process_time()
    minhash_pairs = near_duplicate_pairs_minhash(distinct)
    minhash_seconds = time.process_time() - started
    print(f"\nnear-duplicates over {len(distinct)} distinct texts")
    minhash_members = {doc_id for pair in minhash_pairs for doc_id in pair}
    same_group = sum(
        exact.canonical.get(a, a) == exact.canonical.get(b, b) for a, b in minhash_pairs
    )
    print("| method | CPU s | documents with a near-copy | dropped |\n|---|---:|---:|---:|")
    print(
        f"| exact shingle overlap >= 0.5 (ours) | {exact_seconds:.1f} | {len(exact_members)} | {sum(exact.dropped.values())} |"
    )
    print(
        f"| MinHash LSH, Jaccard >= 0.5 (datasketch) | {minhash_seconds:.1f} | {len(minhash_members)} | - |"
    )
    print(
        f"MinHash pairs: {len(minhash_pairs)}, of which {same_group} inside one exact group; "
        f"exact members MinHash misses: {len(exact_members - minhash_members)}"
    )


if __name__ == "__main__":
    main()
