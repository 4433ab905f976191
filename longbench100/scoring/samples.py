"""The per-sample score record that flows from metrics to aggregates and reports."""

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ScoredSample:
    """One data record's outcome for one model.

    ``score`` is on the 0-1 scale, or ``None`` when the sample could not be graded (for example the
    judge never returned a parsable verdict); ungraded samples are counted, never scored as 0.
    ``filtered`` marks QA samples dropped by the QA filter (closed-book score at or above the threshold).
    ``depth`` is the gold depth (0-1) from the data record's ``gold.depth`` and ``source`` its first gold
    source; both are ``None`` when the record has none.
    """

    id: str
    task: str
    label: str
    length: int
    row: int
    score: float | None
    filtered: bool = False
    closed_book_score: float | None = None
    metric: str = ""
    depth: float | None = None
    source: str | None = None

    def to_json(self) -> dict:
        """Return the sample as a plain dict for results.json."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "ScoredSample":
        """Rebuild a sample from its results.json form."""
        return cls(**data)
