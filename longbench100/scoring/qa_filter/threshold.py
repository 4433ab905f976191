"""The QA filter threshold option: a number in [0, 1], or ``off``."""

from longbench100.core.errors import UserError

DEFAULT_THRESHOLD = "0.5"


def parse_threshold(text: str) -> float | None:
    """Parse ``--qa-filter``: ``off`` (no filter) gives ``None``, else a number from 0 to 1."""
    if text.strip().lower() == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"--qa-filter {text}: give a number from 0 to 1, or off") from None
    if not 0.0 <= value <= 1.0:
        raise UserError(f"--qa-filter {text}: give a number from 0 to 1, or off")
    return value
