"""Judge styles: which rubrics grade the judge tasks (``score --judge-style``, a suite's ``judge_style``).

``100-longbench`` (the default) grades QA with fluency 0-2 x correctness 0-3 and summaries by the
share of supported sentences; ``helmet`` follows HELMET's model-based evaluation: QA fluency 0/1 x
correctness 0-3, summaries fluency x F1 of sentence precision and key-point recall (docs/results.md).
"""

from longbench100.core.errors import UserError

JUDGE_STYLES = ("100-longbench", "helmet")
DEFAULT_JUDGE_STYLE = JUDGE_STYLES[0]

QA_HELMET = "qa_judge_helmet"
SUMMARY_HELMET = "summary_judge_helmet"

HELMET_METRICS = {"qa_judge": QA_HELMET, "summary_judge": SUMMARY_HELMET}
"""The metric that grades each judge family in the ``helmet`` style."""


def check_judge_style(style: str, where: str) -> str:
    """``style`` when it is a known judge style; else a :class:`UserError` naming ``where`` it came from."""
    if style not in JUDGE_STYLES:
        raise UserError(f"{where} {style!r}: choose from {', '.join(JUDGE_STYLES)}")
    return style


def resolve_judge_style(option: str | None, suite: dict | None) -> str:
    """The run's judge style: ``option`` (``--judge-style``), else the data's suite record's ``judge_style``, else the default."""
    if option is not None:
        return check_judge_style(option, "--judge-style")
    recorded = (suite or {}).get("judge_style", DEFAULT_JUDGE_STYLE)
    if not isinstance(recorded, str):
        raise UserError(
            f"manifest.json: suite.judge_style must be one of {', '.join(JUDGE_STYLES)}"
        )
    return check_judge_style(recorded, "manifest.json: suite.judge_style")


def style_metric(family: str, style: str) -> str:
    """The metric that grades the judge family ``family`` (``qa_judge``, ``summary_judge``) in ``style`` (a family
    HELMET has no rubric of its own for, such as ``section_judge``, keeps its own)."""
    return HELMET_METRICS.get(family, family) if style == "helmet" else family
