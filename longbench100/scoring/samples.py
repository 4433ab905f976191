"""The per-sample score record that flows from metrics to aggregates, reports and the per-sample log."""

from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class ScoredSample:
    """One data record's outcome for one model.

    ``score`` is on the 0-1 scale, or ``None`` when the sample could not be graded (for example the
    judge never returned a parsable verdict); ungraded samples are counted, never scored as 0, and
    ``ungraded_reason`` says why (with the judge's raw reply in ``judge_reply`` when there was one).
    ``filtered`` marks QA samples dropped by the QA filter (closed-book score at or above the threshold).
    ``depth`` (0-1) and ``source`` locate the gold material (the data record's ``gold.depth`` and first
    ``gold.sources`` entry); ``prediction`` and ``answers`` are the graded answer and the gold answers;
    ``parts`` holds the judge's sub-scores and reasoning for judge metrics. ``also`` holds the 0-1 scores
    of the task's secondary metrics (``TaskInfo.also``) by name, ``None`` for a task without any.
    ``relevance_grades`` lists the distinct grades of a ranking record's ``gold.relevance`` (``(0, 1)``:
    binary judgements), ``None`` for other records. ``epoch_scores`` holds each epoch's score when a
    run answered every prompt several times (``score`` is then their mean), ``None`` otherwise.
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
    prediction: str | None = None
    answers: tuple[str, ...] = ()
    depth: float | None = None
    source: str | None = None
    parts: dict | None = None
    judge_reply: str | None = None
    ungraded_reason: str | None = None
    also: dict[str, float] | None = None
    relevance_grades: tuple[int, ...] | None = None
    epoch_scores: tuple[float | None, ...] | None = None

    def to_json(self) -> dict:
        """Return the sample as a plain dict for results.json (``also`` only for a task with secondary metrics,
        ``relevance_grades`` only for a ranking record, ``epoch_scores`` only for a run with
        epochs)."""
        data = asdict(self)
        data["answers"] = list(self.answers)
        for key in ("also", "relevance_grades", "epoch_scores"):
            if data[key] is None:
                del data[key]
            elif isinstance(data[key], tuple):
                data[key] = list(data[key])
        return data

    @classmethod
    def from_json(cls, data: dict) -> "ScoredSample":
        """Rebuild a sample from its results.json form (keys this version does not know are ignored)."""
        known = {field.name for field in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["answers"] = tuple(values.get("answers", ()))
        for key in ("relevance_grades", "epoch_scores"):
            if values.get(key) is not None:
                values[key] = tuple(values[key])
        return cls(**values)
