"""Time ``sources verify`` cold and warm, and raw tokenizer throughput on one and two threads.

Usage: python bench/bench_sources.py [--sources MIRROR] [--tokenizer cl100k_base]

Cold: an empty cache folder (every source parsed and tokenized). Warm: the same command again, which
reads the record and token-count caches. Each run is a fresh subprocess, timed end to end.
Throughput: every document text of the sources, tokenized with the tokenizer's batch API.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def time_verify(sources: str, tokenizer: str, cache: Path) -> float:
    """Wall seconds of one ``longbench100 sources verify`` subprocess."""
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "longbench100",
            "sources",
            "verify",
            "--sources",
            sources,
            "--tokenizer",
            tokenizer,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "LONGBENCH100_CACHE": str(cache)},
    )
    return time.perf_counter() - started


def throughput(sources: str, tokenizer_spec: str) -> list[tuple[int, float, int]]:
    """(threads, seconds, tokens) for tokenizing every document text once."""
    from longbench100.sources.corpus import load_corpus
    from longbench100.sources.locations import resolve_location
    from longbench100.text import tokenization

    tokenizer = tokenization.load_tokenizer(tokenizer_spec)
    corpus = load_corpus(resolve_location(sources), tokenizer, progress=False)
    texts = [document.text for document in corpus.documents.values()]
    rows = []
    for threads in (1, 2):
        tokenization.THREADS = threads
        started = time.perf_counter()
        tokens = sum(tokenizer.count_batch(texts))
        rows.append((threads, time.perf_counter() - started, tokens))
    return rows


def main() -> None:
    """Run the measurements and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=str(HERE.parent.parent / "shared" / "sources"))
    parser.add_argument("--tokenizer", default="cl100k_base")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch)
        cold = time_verify(args.sources, args.tokenizer, cache)
        warm = min(time_verify(args.sources, args.tokenizer, cache) for _ in range(3))
        os.environ["LONGBENCH100_CACHE"] = str(cache)
        rows = throughput(args.sources, args.tokenizer)
    print(
        f"sources verify ({args.tokenizer}): cold {cold:.2f} s, warm {warm:.2f} s (best of 3), warm is {cold / warm:.1f}x faster"
    )
    print("| threads | seconds | tokens | tokens/s |")
    print("|---:|---:|---:|---:|")
    for threads, seconds, tokens in rows:
        print(f"| {threads} | {seconds:.2f} | {tokens:,} | {tokens / seconds / 1e6:.2f} M |")


if __name__ == "__main__":
    main()
