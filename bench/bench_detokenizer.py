"""Our Treebank detokenizer against NLTK's on every line a source mirror hands it: identical output, and the time each takes.

Usage: python bench/bench_detokenizer.py --sources MIRROR

Loads every active source that declares the ``detokenize`` cleaning step, with an empty cache,
records each line the step passes to the detokenizer (the lines :func:`longbench100.sources.cleaning.detokenizer_acts_on`
selects, with the quotes, dashes and ellipses guarded as the step guards them), then runs both
detokenizers over the distinct lines, best of two passes each. Exits 1 on any difference. Also
times importing NLTK's detokenizer in a fresh process (what each cleaning process paid before).
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
sys.path.insert(0, str(HERE.parent))


def tokenized_lines(sources: str) -> list[str]:
    """The distinct lines the ``detokenize`` step of the mirror's sources hands to the detokenizer,
    guarded as it guards them."""
    from longbench100.sources import cleaning
    from longbench100.sources.loader import load_source
    from longbench100.sources.locations import active_entries, resolve_location

    seen: set[str] = set()
    step = cleaning.CLEANING_STEPS["detokenize"]

    def recording(text: str) -> str:
        stand_ins = cleaning._stand_ins(text)
        seen.update(
            cleaning._guard(line, stand_ins)
            for line in text.split("\n")
            if cleaning.detokenizer_acts_on(line)
        )
        return step(text)

    cleaning.CLEANING_STEPS["detokenize"] = recording
    location = resolve_location(sources)
    for entry in active_entries(location, location.registry()).values():
        if "detokenize" in (entry.clean or ()):
            load_source(location, entry)
    cleaning.CLEANING_STEPS["detokenize"] = step
    return sorted(seen)


def best_of_two(function, lines: list[str]) -> tuple[float, list[str]]:
    """The faster of two passes of ``function`` over ``lines`` (CPU seconds) and its outputs."""
    timings = []
    for _ in range(2):
        start = time.process_time()
        outputs = [function(line) for line in lines]
        timings.append(time.process_time() - start)
    return min(timings), outputs


def import_seconds() -> float:
    """Wall seconds to import NLTK's detokenizer in a fresh interpreter."""
    code = "import time; s = time.perf_counter(); import nltk.tokenize.treebank; print(time.perf_counter() - s)"
    return float(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sources", required=True, help="a local mirror of the sources (hub layout)"
    )
    args = parser.parse_args()
    os.environ["LONGBENCH100_CACHE"] = tempfile.mkdtemp(prefix="lb100-detok-")
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    from longbench100.text.treebank_detokenizer import detokenize_line

    lines = tokenized_lines(args.sources)
    nltk = TreebankWordDetokenizer()
    nltk_seconds, expected = best_of_two(lambda line: nltk.detokenize(line.split(" ")), lines)
    our_seconds, ours = best_of_two(detokenize_line, lines)
    differences = sum(a != b for a, b in zip(ours, expected))
    changed = sum(a != line.strip() for a, line in zip(expected, lines))
    print(
        f"{len(lines)} distinct lines, {sum(map(len, lines)) / 1e6:.1f} M characters; the detokenizer changes {changed}"
    )
    print(
        f"NLTK {nltk_seconds:.2f} s CPU, ours {our_seconds:.2f} s ({nltk_seconds / our_seconds:.1f}x); "
        f"lines that differ: {differences}"
    )
    print(f"importing nltk.tokenize.treebank in a fresh process: {import_seconds():.2f} s")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
