"""What a prediction run did: samples answered, failed (by reason) and skipped, tokens and wall time."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class RunSummary:
    """Counts for one run of ``predict``; ``failed`` maps an error reason (``HTTP 400``) to a count.

    ``skipped_failed`` counts, by reason, the skipped samples whose record is a failure; ``changed``
    counts the samples redone because the data's prompt changed since their record was made.
    ``empty`` counts the answers (closed-book ones included) that the server returned empty or blank
    (``content`` null or ``""``), by ``finish_reason``; they are recorded as ``""`` without an error.
    """

    total: int = 0
    done: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    skipped: int = 0
    skipped_failed: Counter[str] = field(default_factory=Counter)
    changed: int = 0
    empty: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0

    def lines(self) -> list[str]:
        """Return the human-readable summary printed at the end of a run."""
        failed = sum(self.failed.values())
        reasons = ", ".join(f"{reason}: {count}" for reason, count in by_count(self.failed))
        rate = self.requests / self.wall_s if self.wall_s > 0 else 0.0
        lines = [
            f"samples:  {self.total} selected, {self.done} done, {failed} failed, "
            f"{self.skipped} skipped (finished earlier)",
            f"tokens:   {self.prompt_tokens + self.completion_tokens} "
            f"({self.prompt_tokens} prompt + {self.completion_tokens} completion, as reported by the server)",
            f"time:     {self.wall_s:.1f} s wall, {self.requests} requests ({rate:.1f}/s)",
        ]
        if failed:
            lines.append(f"failed:   {reasons}")
        if any(reason.endswith("HTTP 400") for reason in self.failed):
            lines.append(
                "          HTTP 400 mostly means prompt + answer exceed the context (vLLM: --max-model-len)"
            )
        empty = sum(self.empty.values())
        if empty:
            by_reason = ", ".join(
                f"finish_reason {reason}: {count}" for reason, count in by_count(self.empty)
            )
            lines.append(
                f'empty:    {empty} answers were empty ({by_reason}); recorded as "", they score 0'
            )
            if "length" in self.empty:
                lines.append(
                    "          an empty answer cut at max_tokens mostly means a reasoning model ran out of "
                    "tokens: raise --max-new-tokens"
                )
        if self.skipped_failed:
            lines.append(
                f"note:     {sum(self.skipped_failed.values())} skipped samples had failed; "
                "redo them with --retry-failed"
            )
        if self.changed:
            lines.append(
                f"note:     {self.changed} samples were redone because their prompt changed in the data "
                "since they were answered"
            )
        return lines


def by_count(counter: Counter[str]) -> list[tuple[str, int]]:
    """Counts, largest first, ties by name: the same summary whatever order the requests finished in."""
    return sorted(counter.items(), key=lambda pair: (-pair[1], pair[0]))
