"""Length labels: ``Nk`` means N x 1024 tokens; plain integers are token counts."""

import re

from longbench100.core.errors import UserError

_LABEL = re.compile(r"^\s*(\d+)\s*([kK]?)\s*$")

DEFAULT_BASE_LABELS = (
    "2k",
    "4k",
    "6k",
)  # the paper's base lengths, for data made before suites recorded theirs


def parse_length(label: str) -> int:
    """Return the token budget for a label such as ``8k`` (8192) or ``5000``; reject anything else."""
    match = _LABEL.match(label)
    if not match or int(match.group(1)) == 0:
        raise UserError(
            f"bad length label {label!r}: use N or Nk with N > 0 (e.g. 2k, 8k, 128k, 5000)"
        )
    value = int(match.group(1))
    return value * 1024 if match.group(2) else value


def canonical_label(budget: int) -> str:
    """Return the label for a budget: ``8k`` for 8192, the plain number otherwise."""
    return f"{budget // 1024}k" if budget % 1024 == 0 else str(budget)


def normalized_label(label: str) -> str:
    """The canonical label of a length label (``8192`` and ``8k`` are both ``8k``); a bad one is a
    one-line :class:`UserError`."""
    return canonical_label(parse_length(label))


def parse_length_list(text: str) -> list[tuple[str, int]]:
    """Parse a comma-separated list of labels into ``(canonical label, budget)`` pairs, sorted; a
    length given twice (``2k,2k``, ``2k,2048``) is a one-line error."""
    parts = [part for part in text.split(",") if part.strip()]
    if not parts:
        raise UserError("no lengths given: pass e.g. --lengths 2k,4k,6k,8k")
    given = [parse_length(part) for part in parts]
    twice = sorted({canonical_label(budget) for budget in given if given.count(budget) > 1})
    if twice:
        raise UserError(f"lengths {text!r}: {', '.join(twice)} given more than once")
    budgets = sorted(set(given))
    return [(canonical_label(budget), budget) for budget in budgets]
