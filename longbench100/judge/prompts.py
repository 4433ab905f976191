"""Render the LLM-judge rubrics (jinja2 templates in ``rubrics/``) for one answer to grade.

Two judge styles (``judge_style.py``): the 100-LongBench rubrics (``qa_judge``, ``summary_judge``)
and HELMET's (``qa_judge_helmet``; ``summary_judge_helmet``, which combines a precision call on the
summary's sentences with a recall call on the reference's key points, extracted once per reference).
:data:`RUBRICS` names the rubric of each metric the judge grades a whole reply by; ``section_judge``
grades one section at a time (:func:`section_prompt`).
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2

from longbench100.catalog.judge_styles import QA_HELMET, SUMMARY_HELMET
from longbench100.text.answers import split_sentences, strip_reasoning
from longbench100.text.sentences import sentence_ends

RUBRIC_DIR = Path(__file__).resolve().parent / "rubrics"

KEY_POINTS = "key_points"
KEY_POINT_RECALL = "key_point_recall"
SECTION_JUDGE = "section_judge"


@dataclass(frozen=True)
class JudgePrompt:
    """A prompt for the judge, graded under the rubric ``metric``.

    ``n_sentences`` is the number of numbered items the prompt shows (a summary's sentences, or the
    key points of a recall call). A ``summary_judge_helmet`` prompt's ``text`` is its precision call
    (the ``summary_judge`` rubric over the summary's sentences); it also keeps the ``reference``
    summary and the model's ``summary``, from which the judge builds its recall call.
    """

    metric: str
    text: str
    n_sentences: int = 0
    reference: str = ""
    summary: str = ""

    def precision_call(self) -> "JudgePrompt":
        """The ``summary_judge`` call a ``summary_judge_helmet`` prompt makes (its own text)."""
        return JudgePrompt("summary_judge", self.text, self.n_sentences)


@lru_cache(maxsize=None)
def _template(name: str) -> jinja2.Template:
    """Load one rubric template (strict: a missing variable is an error)."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(RUBRIC_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return environment.get_template(name)


def qa_prompt(
    question: str | None, answers: list[str], prediction: str, metric: str = "qa_judge"
) -> JudgePrompt | None:
    """Return the QA rubric prompt of ``metric`` (``qa_judge`` or ``qa_judge_helmet``), or ``None`` when
    the answer is empty (it scores 0 without a judge)."""
    text = strip_reasoning(prediction)
    if not text:
        return None
    rendered = _template(f"{metric}.jinja2").render(
        question=question or "(not recorded)", answers=answers, prediction=text
    )
    return JudgePrompt(metric, rendered)


def _summary_rubric(instruction: str | None, reference: str, sentences: list[str]) -> str:
    """The ``summary_judge`` rubric over numbered sentences."""
    return _template("summary_judge.jinja2").render(
        instruction=instruction or "Summarise the documents.",
        reference=reference,
        sentences=sentences,
    )


def summary_prompt(instruction: str | None, reference: str, prediction: str) -> JudgePrompt | None:
    """Return the summary rubric prompt over the whole summary split into numbered sentences,
    or ``None`` when it has no sentence (it scores 0 without a judge)."""
    sentences = split_sentences(strip_reasoning(prediction))
    if not sentences:
        return None
    return JudgePrompt(
        "summary_judge", _summary_rubric(instruction, reference, sentences), len(sentences)
    )


def section_prompt(section: str, summary: str) -> JudgePrompt:
    """The ETHIC rubric prompt for one section summary (consistency, relevance, faithfulness against the section)."""
    return JudgePrompt(
        SECTION_JUDGE, _template(f"{SECTION_JUDGE}.jinja2").render(section=section, summary=summary)
    )


def output_sentences(text: str) -> list[str]:
    """The sentences of a model's summary by the generator's segmenter (``text/sentences.py``), line by line."""
    sentences = []
    for line in text.splitlines():
        starts = [0, *sentence_ends(line)]
        sentences += [
            line[start:end].strip() for start, end in zip(starts, [*starts[1:], len(line)])
        ]
    return [sentence for sentence in sentences if sentence]


def helmet_summary_prompt(
    instruction: str | None, reference: str, prediction: str
) -> JudgePrompt | None:
    """Return the HELMET summary prompt (its precision call over :func:`output_sentences`, plus the reference
    and summary for its recall call), or ``None`` when the summary has no sentence (it scores 0 without a judge)."""
    summary = strip_reasoning(prediction)
    sentences = output_sentences(summary)
    if not sentences:
        return None
    text = _summary_rubric(instruction, reference, sentences)
    return JudgePrompt(SUMMARY_HELMET, text, len(sentences), reference=reference, summary=summary)


def key_points_prompt(reference: str) -> JudgePrompt:
    """The call that extracts the key points of a reference summary (once per reference)."""
    return JudgePrompt(KEY_POINTS, _template("key_points.jinja2").render(reference=reference))


def recall_prompt(key_points: list[str], summary: str) -> JudgePrompt:
    """The call that checks which of the reference's ``key_points`` a model's ``summary`` conveys."""
    text = _template("key_point_recall.jinja2").render(key_points=key_points, summary=summary)
    return JudgePrompt(KEY_POINT_RECALL, text, len(key_points))


ReplyRubric = Callable[[str | None, list[str], str], JudgePrompt | None]
"""A rubric for a whole reply: from the question (or instruction), the gold answers and the reply,
the judge prompt, or ``None`` when the reply has nothing to grade (it scores 0 without a judge)."""


def _against_reference(rubric: Callable[[str | None, str, str], JudgePrompt | None]) -> ReplyRubric:
    """A summary rubric as a :data:`ReplyRubric`: it grades against the first gold answer (the
    reference summary)."""
    return lambda instruction, answers, reply: rubric(instruction, answers[0], reply)


def _qa_rubric(metric: str) -> ReplyRubric:
    """The QA rubric ``metric`` (``qa_judge`` or ``qa_judge_helmet``) as a :data:`ReplyRubric`."""
    return lambda question, answers, reply: qa_prompt(question, answers, reply, metric)


RUBRICS: dict[str, ReplyRubric] = {
    "qa_judge": _qa_rubric("qa_judge"),
    QA_HELMET: _qa_rubric(QA_HELMET),
    "summary_judge": _against_reference(summary_prompt),
    SUMMARY_HELMET: _against_reference(helmet_summary_prompt),
}
"""The rubric of each metric the judge grades a whole reply by, by metric name."""
