"""How well a shortcut may score on a task: the ``shortcut_limit`` and ``shortcut_reported`` fields of a suite file.

``shortcut_limit`` is either ``"chance + X"`` (the best shortcut may beat the task's chance level by
at most X, on the task's own 0-1 scale) or a plain number (an absolute ceiling, for tasks where the
anchor benchmark reports its own lexical baseline or chance is nil). ``shortcut_reported`` lists
baseline families that are shown but not held to the limit, because the task itself is made of
that skill (matching a summary to its passage is lexical by design); the suite file says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longbench100.core.errors import UserError

FAMILIES = ("context-free", "position", "outlier", "lexical", "copy", "frequency")
"""The baseline families, as docs/baselines.md describes them."""

DEFAULT_LIMIT = "chance + 0.10"
"""The limit of a task whose suite names none: chance plus 10 points."""

_RELATIVE = re.compile(r"^chance\s*\+\s*(\d*\.?\d+)$")


@dataclass(frozen=True)
class ShortcutLimit:
    """A task's limit: ``above_chance`` or ``absolute`` (exactly one is set), and the families only reported."""

    text: str
    above_chance: float | None = None
    absolute: float | None = None
    reported: tuple[str, ...] = ()

    def ceiling(self, chance: float) -> float:
        """The highest score a judged shortcut may reach on a task whose chance level is ``chance``."""
        if self.above_chance is not None:
            return chance + self.above_chance
        assert self.absolute is not None, "a limit sets exactly one of above_chance and absolute"
        return float(self.absolute)

    def record(self) -> dict:
        """The form a manifest stores (read back by :func:`limit_from_record`)."""
        return {
            "limit": self.absolute if self.absolute is not None else self.text,
            **({"reported": list(self.reported)} if self.reported else {}),
        }


def parse_limit(value: object, reported: object, where: str) -> ShortcutLimit:
    """Validate one task's ``shortcut_limit`` and ``shortcut_reported``; a bad value is a one-line :class:`UserError`."""
    if isinstance(reported, list) and all(isinstance(item, str) for item in reported):
        unknown = [item for item in reported if item not in FAMILIES]
        if unknown:
            raise UserError(
                f"{where}.shortcut_reported: unknown family {unknown[0]!r}; families: {', '.join(FAMILIES)}"
            )
        names = tuple(reported)
    else:
        raise UserError(
            f"{where}.shortcut_reported must be a list of baseline families ({', '.join(FAMILIES)})"
        )
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return ShortcutLimit(str(value), absolute=float(value), reported=names)
    if (
        isinstance(value, str)
        and (match := _RELATIVE.match(value.strip()))
        and float(match.group(1)) <= 1
    ):
        return ShortcutLimit(value.strip(), above_chance=float(match.group(1)), reported=names)
    raise UserError(
        f'{where}.shortcut_limit {value!r}: write "chance + 0.10" (10 points over chance) or a number from 0 to 1'
    )


def limit_from_record(record: object) -> ShortcutLimit:
    """A task's limit as a manifest stores it; the default limit when the manifest has none."""
    if not isinstance(record, dict):
        return parse_limit(DEFAULT_LIMIT, [], "manifest")
    return parse_limit(record.get("limit", DEFAULT_LIMIT), record.get("reported", []), "manifest")
