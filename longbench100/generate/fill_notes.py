"""What ``generate`` says when the prompts of one task and length fill much less than their budget:
one line for one cause."""

from __future__ import annotations

from pathlib import Path

from .manifest import underfilled_entry, underfilled_line
from .options import RanOutRow
from .output import LOW_FILL, median_fill


def low_fill_note(
    path: Path,
    task: str,
    label: str,
    budget: int,
    ran_out: list[RanOutRow],
    unavailable: list[str],
    prompt_tokens: list[int] | None = None,
) -> str | None:
    """The one line on a data file whose prompts fill much less than their budget, or ``None``.

    Where rows ran out of padding (``ran_out``, as the fitter saw them; ``unavailable``: the task's
    padding sources the run could not read), the fitter's own note, which the manifest keeps as
    ``underfilled``; otherwise (tasks without padding) the written file's median fill, when it is
    below :data:`LOW_FILL`: from ``prompt_tokens``, every line's count, where the caller wrote them
    all, else read back.
    """
    if ran_out:
        entry = underfilled_entry(task, label, budget, ran_out, unavailable)
        return f"underfilled: {underfilled_line(entry)}"
    fill = median_fill(path, budget, prompt_tokens)
    if fill is None or fill >= LOW_FILL:
        return None
    return (
        f"warning: {task} {label}: the prompts fill {fill:.2%} of the budget (median): the "
        "sources hold too little text for this length; choose a shorter length or larger "
        "sources"
    )
