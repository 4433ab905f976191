"""Ask the annotator model for every chunk a run needs, with the judge's machinery: cache, retries, preflight.

Replies are cached on disk like the judge's (``<cache>/annotator/<model>-<8 hex>/``), keyed by the model
and the sha256 of the prompt, which holds the prompt's wording (its version) and the chunk; so
regenerating at other lengths, seeds or row counts asks only for chunks not seen before, and changing
server (a local copy of the same model) costs nothing. Only readable replies are cached. A chunk left
without a label (a failed request, a cut-off or unreadable reply) stops the run with one line saying
how many and why, before anything is written; rerunning asks only for those. A reply that ran to the budget
with nothing usable (a small model repeating itself) is first asked once more with the loop penalty (OpenAI's
``frequency_penalty``, still greedy); a usable second reply is cached with the penalty it took. With ``allow_unlabelled`` the run
goes on without those labels instead, and a row whose building reads one of them is left out (and counted).
"""

from __future__ import annotations

from collections import Counter

from longbench100.core.errors import UserError
from longbench100.core.paths import cache_dir
from longbench100.judge.annotation_rubric import PROMPT_VERSIONS, annotation_prompt_text
from longbench100.judge.cache import JudgeCache
from longbench100.judge.grader import Judge, JudgePlan
from longbench100.judge.prompts import JudgePrompt
from longbench100.judge.setup import check_judge
from longbench100.llm.options import JudgeOptions

from .labels import Annotations


def annotation_prompt(kind: str, chunk: str) -> JudgePrompt:
    """The annotator prompt of one chunk (the chunk rides along to check the names against it)."""
    return JudgePrompt(kind, annotation_prompt_text(kind, chunk), reference=chunk)


def make_annotator(options: JudgeOptions) -> Judge:
    """The annotator: a judge model whose replies are cached under ``annotator/`` by model and prompt."""
    config = options.config()
    return Judge(config, JudgeCache(config.model, cache_dir() / "annotator"), role="annotator")


def plan_annotations(options: JudgeOptions, requests: list[tuple[str, str]]) -> JudgePlan:
    """What annotating ``requests`` ((kind, chunk) pairs) would cost after cache hits; sends nothing."""
    return make_annotator(options).plan(
        [annotation_prompt(kind, chunk) for kind, chunk in requests]
    )


def annotate(
    options: JudgeOptions,
    requests: list[tuple[str, str]],
    *,
    progress: bool = True,
    allow_unlabelled: bool = False,
) -> Annotations:
    """Label every (kind, chunk) pair: cached replies first, the rest asked of the annotator (checked first).

    Raises :class:`UserError` when the server does not answer, or when any chunk is left without a label unless
    ``allow_unlabelled`` (then the labels leave those chunks out and ``info["unlabelled"]`` counts them by reason).
    """
    annotator = make_annotator(options)
    prompts = [annotation_prompt(kind, chunk) for kind, chunk in dict.fromkeys(requests)]
    plan = annotator.plan(prompts)
    notes = (
        check_judge(annotator.config, options.api_key_env, role="annotator") if plan.calls else []
    )
    annotator.grade(prompts, progress=progress)
    verdicts = [annotator.verdicts[prompt.text] for prompt in prompts]
    failed = dict(
        Counter(
            verdict.reason or "no label" for verdict in verdicts if verdict.parts is None
        ).most_common()
    )
    if failed and not allow_unlabelled:
        refused = any("second ask failed" in reason for reason in failed)
        raise UserError(
            f"annotator {options.model}: {unlabelled_line(failed, len(prompts))}; nothing was written. Rerun to "
            "ask again for those only (the others are cached), try a larger --annotator-max-tokens or another "
            "--annotator-model, or give --allow-unlabelled to leave out the rows that need them"
            + (
                "; a server that refuses frequency_penalty needs --annotator-loop-penalty 0"
                if refused
                else ""
            )
        )
    labels = {
        (prompt.metric, prompt.reference): verdict.parts
        for prompt, verdict in zip(prompts, verdicts)
        if verdict.parts is not None
    }
    unlabelled = frozenset(
        (prompt.metric, prompt.reference)
        for prompt, verdict in zip(prompts, verdicts)
        if verdict.parts is None
    )
    kinds = Counter(prompt.metric for prompt in prompts)
    info = {
        "model": options.model,
        "base_url": options.base_url,
        "max_tokens": options.max_tokens,
        "temperature": 0.0,
        "prompt_versions": {
            kind.removeprefix("annotation_"): PROMPT_VERSIONS[kind] for kind in sorted(kinds)
        },
        "chunks": {
            kind.removeprefix("annotation_"): count for kind, count in sorted(kinds.items())
        },
        "calls": annotator.stats.calls,
        "cache_hits": annotator.stats.cache_hits,
        "prompt_tokens_sent": plan.prompt_tokens,
        "cut_off_replies_kept": sum(prompt.text in annotator.cut_off for prompt in prompts),
        "loop_penalty": options.loop_penalty,
        "second_asks": annotator.stats.second_asks,
        "usable_second_replies": annotator.stats.second_ask_labels,
        "names_not_in_chunk": sum((parts or {}).get("dropped", 0) for parts in labels.values()),
        "notes": notes,
        **({"unlabelled": {"chunks": sum(failed.values()), "reasons": failed}} if failed else {}),
    }
    return Annotations(labels, info, unlabelled)


def unlabelled_line(reasons: dict[str, int], chunks: int) -> str:
    """``"N of M chunks got no usable label (reason n, ...)"`` from the failed chunks' counts by reason (most first)."""
    listed = ", ".join(f"{reason} {count}" for reason, count in reasons.items())
    return f"{sum(reasons.values())} of {chunks} chunks got no usable label ({listed})"
