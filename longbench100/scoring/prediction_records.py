"""What a prediction is once read, from our own files or another tool's: one answer, and the
answers of one ``--predictions`` path with what the writing tool's log says about them."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Prediction:
    """One model answer: ``prediction`` (None when the request failed) and the closed-book answer.

    The fingerprints are those ``predict`` records (``None`` when the file has none, e.g. another tool's):
    the sha256 of the prompt and closed-book prompt that were sent, and of the data folder's manifest.
    ``epoch`` numbers the repeats of a run that answered every prompt more than once (Inspect's
    ``--epochs``; ``None`` for one answer per prompt); ``prompt_difference`` says how the sent
    prompt differed from the stored one when the writing tool's log shows it (lm-eval's message
    list).
    """

    id: str
    prediction: str | None
    closed_book_prediction: str | None
    where: str
    prompt_sha256: str | None = None
    closed_book_prompt_sha256: str | None = None
    data_manifest_sha256: str | None = None
    epoch: int | None = None
    prompt_difference: str | None = None


OWN_HINT = "was --data generated with another seed or from another folder?"
OWN_RETRY_HINT = "rerun predict with --retry-failed"


@dataclass(frozen=True)
class PredictionSource:
    """The predictions read from one ``--predictions`` path and what the writing tool's log says
    about them.

    ``model`` is the model the log names (``None`` for our own files); ``mismatch_hint`` names the
    plausible causes when prompts differ from the data's; ``epochs`` lists the epoch numbers present
    (empty: one answer per prompt); ``retry_hint`` says how to redo failed requests.
    """

    predictions: list[Prediction]
    model: str | None = None
    mismatch_hint: str = OWN_HINT
    epochs: tuple[int, ...] = ()
    retry_hint: str = OWN_RETRY_HINT
