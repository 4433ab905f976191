"""Every cleaned record of a source mirror, read by this checkout and by a reference commit:
identical, and the CPU each spends reading and cleaning.

Usage: python bench/check_cleaning_identity.py --sources MIRROR [--reference REV]

The reference (default ``main``) is taken out of git into a temporary folder. Each side then reads
every active source of the mirror in a fresh process with an empty cache folder (so every text is
parsed and cleaned) and reports, per source, a digest of each document (id, text, title) and one of
everything else the load produced (items, the counts of dropped items, the texts each cleaning step
changed). Exits 1 when any source differs, naming the sources and the first documents that differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def digest(text: str) -> str:
    """A short sha256 of ``text``."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def read_sources(sources: str) -> dict[str, dict]:
    """Per active source: its documents' digests, the digest of the rest of its records and the CPU
    seconds its load took (run in the child, with the checkout under test first on the import
    path)."""
    from longbench100.sources.loader import load_source
    from longbench100.sources.locations import active_entries, resolve_location

    location = resolve_location(sources)
    report = {}
    for name, entry in active_entries(location, location.registry()).items():
        started = time.process_time()
        data = load_source(location, entry)
        seconds = time.process_time() - started
        documents = {
            key: digest(f"{document.id}\0{document.text}\0{document.title}")
            for key, document in data.documents.items()
        }
        rest = repr(
            (
                data.items,
                data.skipped_empty,
                data.filtered_items,
                data.duplicate_items,
                sorted(data.unanswerable.items()),
                sorted(data.cleaned.items()),
            )
        )
        report[name] = {"documents": documents, "rest": digest(rest), "seconds": seconds}
    return report


def run_side(package_root: Path, sources: str) -> dict[str, dict]:
    """:func:`read_sources` in a fresh process importing ``longbench100`` from ``package_root``."""
    with tempfile.TemporaryDirectory(prefix="lb100-clean-check-") as cache:
        environment = {**os.environ, "PYTHONPATH": str(package_root), "LONGBENCH100_CACHE": cache}
        completed = subprocess.run(
            [sys.executable, __file__, "--sources", sources, "--child"],
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(completed.stdout)


def export_reference(revision: str, folder: Path) -> None:
    """The package and registry of ``revision`` (``git archive``), unpacked into ``folder``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "longbench100", "sources"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")


def differences(reference: dict[str, dict], ours: dict[str, dict]) -> list[str]:
    """One line per source whose records differ between the two reports."""
    lines = []
    for name in sorted(set(reference) | set(ours)):
        if name not in reference or name not in ours:
            lines.append(f"{name}: read by one side only")
            continue
        theirs, mine = reference[name], ours[name]
        differing = [
            key
            for key in sorted(set(theirs["documents"]) | set(mine["documents"]))
            if theirs["documents"].get(key) != mine["documents"].get(key)
        ]
        if differing:
            lines.append(f"{name}: {len(differing)} documents differ, e.g. {differing[:3]}")
        if theirs["rest"] != mine["rest"]:
            lines.append(f"{name}: items or counts differ")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sources", required=True, help="a local mirror of the sources (hub layout)"
    )
    parser.add_argument("--reference", default="main", help="the git revision to compare with")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(read_sources(args.sources)))
        return 0
    with tempfile.TemporaryDirectory(prefix="lb100-reference-") as folder:
        export_reference(args.reference, Path(folder))
        reference = run_side(Path(folder), args.sources)
    ours = run_side(ROOT, args.sources)
    documents = sum(len(report["documents"]) for report in ours.values())
    print(f"{len(ours)} sources, {documents} documents; CPU seconds to read and clean", end="")
    print(" (reference -> ours):")
    for name in sorted(ours, key=lambda name: -reference.get(name, {}).get("seconds", 0.0)):
        before = reference.get(name, {}).get("seconds", float("nan"))
        print(f"  {name:28s} {before:6.2f} -> {ours[name]['seconds']:6.2f}")
    total_before = sum(report["seconds"] for report in reference.values())
    total_after = sum(report["seconds"] for report in ours.values())
    print(f"  {'all':28s} {total_before:6.2f} -> {total_after:6.2f}")
    found = differences(reference, ours)
    print("\n".join(found) if found else "IDENTICAL: every document, item and count")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
