"""Render the LLM-judge rubrics (jinja2 templates in ``rubrics/``) for one answer to grade."""

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2

from .text import split_sentences, strip_reasoning

RUBRIC_DIR = Path(__file__).resolve().parent / "rubrics"


@dataclass(frozen=True)
class JudgePrompt:
    """A prompt for the judge: ``metric`` is ``qa_judge`` or ``summary_judge``; summaries carry their sentence count."""

    metric: str
    text: str
    n_sentences: int = 0


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


def qa_prompt(question: str | None, answers: list[str], prediction: str) -> JudgePrompt | None:
    """Return the QA rubric prompt, or ``None`` when the answer is empty (it scores 0 without a judge)."""
    text = strip_reasoning(prediction)
    if not text:
        return None
    rendered = _template("qa_judge.jinja2").render(
        question=question or "(not recorded)", answers=answers, prediction=text
    )
    return JudgePrompt("qa_judge", rendered)


def summary_prompt(instruction: str | None, reference: str, prediction: str) -> JudgePrompt | None:
    """Return the summary rubric prompt over the whole summary split into numbered sentences,
    or ``None`` when it has no sentence (it scores 0 without a judge)."""
    sentences = split_sentences(strip_reasoning(prediction))
    if not sentences:
        return None
    rendered = _template("summary_judge.jinja2").render(
        instruction=instruction or "Summarise the documents.", reference=reference, sentences=sentences
    )
    return JudgePrompt("summary_judge", rendered, len(sentences))
