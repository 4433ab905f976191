"""Classic reference-based metrics: LongBench-style token F1 for QA, ROUGE-L F for summaries."""

import multiprocessing
import os
import threading
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import lru_cache

from rouge_score import rouge_scorer

from .text import normalize_answer, strip_reasoning

ROUGE_VARIANTS = ("rouge-score",)
"""ROUGE-L implementations ``score --rouge-variant`` can choose (recorded in results.json settings)."""
DEFAULT_ROUGE_VARIANT = "rouge-score"

PARALLEL_MIN_PAIRS = 64
"""Below this many summaries ROUGE-L runs in-process; above, starting worker processes pays off."""


def token_f1(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    """Bag-of-tokens F1 between two token lists (0 when they share no token)."""
    same = sum((Counter(prediction_tokens) & Counter(reference_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(prediction_tokens)
    recall = same / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def qa_f1(prediction: str, answers: list[str]) -> float:
    """LongBench QA F1: normalised token F1 against each reference answer, the best one counts."""
    tokens = normalize_answer(strip_reasoning(prediction)).split()
    return max((token_f1(tokens, normalize_answer(answer).split()) for answer in answers), default=0.0)


@lru_cache(maxsize=1)
def _scorer() -> rouge_scorer.RougeScorer:
    """One shared ROUGE-L scorer (rouge-score's default English tokenizer, no stemming, like LongBench)."""
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l(prediction: str, answers: list[str]) -> float:
    """ROUGE-L F-measure of the whole prediction against each reference, the best one counts."""
    text = strip_reasoning(prediction)
    return max((_scorer().score(answer, text)["rougeL"].fmeasure for answer in answers), default=0.0)


def _rouge_l_pair(pair: tuple[str, list[str]]) -> float:
    """:func:`rouge_l` on one ``(prediction, references)`` pair (a picklable worker function)."""
    return rouge_l(*pair)


def available_cpus() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def rouge_l_many(
    pairs: list[tuple[str, list[str]]],
    variant: str = DEFAULT_ROUGE_VARIANT,
    *,
    workers: int | None = None,
    min_parallel: int = PARALLEL_MIN_PAIRS,
) -> list[float]:
    """:func:`rouge_l` for many ``(prediction, references)`` pairs, in order, with the named ROUGE ``variant``.

    rouge-score computes the LCS in pure Python (about 12 ms for two 200-word summaries), so with at
    least ``min_parallel`` pairs the work is spread over ``workers`` processes (default: every
    available CPU). Workers are forked when the caller runs a single thread, else spawned (forking a
    threaded process is unsafe); if the pool cannot run, the pairs are scored in-process.
    """
    if variant not in ROUGE_VARIANTS:
        raise ValueError(f"unknown ROUGE-L variant {variant!r}; choose from {', '.join(ROUGE_VARIANTS)}")
    workers = min(workers or available_cpus(), len(pairs))
    if workers < 2 or len(pairs) < min_parallel:
        return [rouge_l(*pair) for pair in pairs]
    single_thread = threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if single_thread else "spawn")
    try:
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            return list(pool.map(_rouge_l_pair, pairs, chunksize=max(1, len(pairs) // (workers * 4))))
    except (BrokenProcessPool, OSError):
        return [rouge_l(*pair) for pair in pairs]
