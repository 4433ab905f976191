"""Render the LLM-judge rubrics (jinja2 templates in ``rubrics/``) for one answer to grade.

Two judge styles (``judge_style.py``): the 100-LongBench rubrics (``qa_judge``, ``summary_judge``)
and HELMET's (``qa_judge_helmet``; ``summary_judge_helmet``, which combines a precision call on the
summary's sentences with a recall call on the reference's key points, extracted once per reference).
:data:`RUBRICS` names the rubric of each metric the judge grades a whole reply by; ``section_judge``
grades one section at a time (:func:`section_prompt`). Each rubric carries its
:class:`ReplyReader`, and :func:`reply_reader` finds the reader of every call the judge makes.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2

from longbench100.catalog.judge_styles import QA_HELMET, SUMMARY_HELMET
from longbench100.judge.annotation_rubric import ANNOTATION_KINDS, read_annotation
from longbench100.judge.coverage_rubric import COVERAGE_METRIC, coverage_parts, coverage_score
from longbench100.judge.parse import (
    helmet_qa_parts,
    helmet_qa_score,
    key_points_parts,
    qa_parts,
    qa_score,
    recall_parts,
    recall_score,
    section_parts,
    section_score,
    summary_parts,
    summary_score,
)
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

ReplyParts = Callable[[JudgePrompt, str], dict | None]
"""The sub-scores of a judge reply to a prompt, or ``None`` when it holds no valid verdict."""


@dataclass(frozen=True)
class ReplyReader:
    """How the judge's reply to one kind of prompt is read: ``parts`` gives its sub-scores,
    ``score`` the 0-1 score of valid sub-scores, and ``cut_off_parts`` (when set) the sub-scores
    of what a reply cut off at the reply budget completed (without it, such a reply is ungraded)."""

    parts: ReplyParts
    score: Callable[[dict], float]
    cut_off_parts: ReplyParts | None = None


@dataclass(frozen=True)
class Rubric:
    """A rubric the judge grades a whole reply by: how its prompt is built, how its reply is
    read."""

    prompt: ReplyRubric
    reader: ReplyReader


def _against_reference(rubric: Callable[[str | None, str, str], JudgePrompt | None]) -> ReplyRubric:
    """A summary rubric as a :data:`ReplyRubric`: it grades against the first gold answer (the
    reference summary)."""
    return lambda instruction, answers, reply: rubric(instruction, answers[0], reply)


def _qa_rubric(metric: str) -> ReplyRubric:
    """The QA rubric ``metric`` (``qa_judge`` or ``qa_judge_helmet``) as a :data:`ReplyRubric`."""
    return lambda question, answers, reply: qa_prompt(question, answers, reply, metric)


def _reply_only(parts: Callable[[str], dict | None]) -> ReplyParts:
    """A parser of the reply alone as :data:`ReplyParts`."""
    return lambda _prompt, reply: parts(reply)


def _numbered(parts: Callable[[str, int], dict | None]) -> ReplyParts:
    """A parser of a reply over the prompt's numbered items as :data:`ReplyParts`."""
    return lambda prompt, reply: parts(reply, prompt.n_sentences)


def _annotation(cut_off: bool) -> ReplyParts:
    """The label of an annotation reply, read against the prompt's chunk
    (:func:`read_annotation`)."""
    return lambda prompt, reply: read_annotation(
        prompt.metric, reply, prompt.reference, cut_off=cut_off
    )


def _extracted(_parts: dict) -> float:
    """The score of a valid extraction or annotation, which grades nothing: 1."""
    return 1.0


SUMMARY_READER = ReplyReader(_numbered(summary_parts), summary_score)
"""The ``summary_judge`` rubric's reader (also a HELMET summary's precision call)."""

RUBRICS: dict[str, Rubric] = {
    "qa_judge": Rubric(_qa_rubric("qa_judge"), ReplyReader(_reply_only(qa_parts), qa_score)),
    QA_HELMET: Rubric(
        _qa_rubric(QA_HELMET), ReplyReader(_reply_only(helmet_qa_parts), helmet_qa_score)
    ),
    "summary_judge": Rubric(_against_reference(summary_prompt), SUMMARY_READER),
    SUMMARY_HELMET: Rubric(_against_reference(helmet_summary_prompt), SUMMARY_READER),
}
"""The rubric of each metric the judge grades a whole reply by, by metric name."""

CALL_READERS: dict[str, ReplyReader] = {
    KEY_POINTS: ReplyReader(_reply_only(key_points_parts), _extracted),
    KEY_POINT_RECALL: ReplyReader(_numbered(recall_parts), recall_score),
    SECTION_JUDGE: ReplyReader(_reply_only(section_parts), section_score),
    COVERAGE_METRIC: ReplyReader(_reply_only(coverage_parts), coverage_score),
    **{
        kind: ReplyReader(_annotation(cut_off=False), _extracted, _annotation(cut_off=True))
        for kind in ANNOTATION_KINDS
    },
}
"""The reader of every other call the judge makes, by the metric its prompt carries: key-point
extraction and recall, ETHIC sections, coverage and chunk annotations."""


def reply_reader(prompt: JudgePrompt) -> ReplyReader:
    """The reader of the judge's reply to ``prompt``, by the metric it carries."""
    rubric = RUBRICS.get(prompt.metric)
    return rubric.reader if rubric is not None else CALL_READERS[prompt.metric]
