"""Classic reference-based metrics: LongBench-style token F1 for QA, ROUGE-L F for summaries.

ROUGE-L comes in three variants (``ROUGE_VARIANTS``):

- ``longbench`` (the default): LongBench's official ``rouge_score``, i.e. the ``rouge`` package's
  summary-level ROUGE-L: text split into sentences at ``.``, union LCS of each reference sentence over
  the prediction's sentences, words counted once, case-sensitive; a pair the library rejects (an empty
  prediction, say) scores 0 as in LongBench. Computed by :mod:`.rouge_lcs` (bit-parallel LCS, the
  library's own walk), identical to the library on every pair the tests try, and about 15 times faster.
- ``longbench-library``: the same number from the ``rouge`` package itself, for whoever wants it literally.
- ``rouge-score``: Google's ``rouge-score`` ROUGE-L: one LCS over the whole lower-cased text.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import lru_cache
from itertools import repeat
from typing import TYPE_CHECKING

from rouge import Rouge

from longbench100.core.errors import UserError
from longbench100.core.workers import worker_pool
from longbench100.scoring.choices import DEFAULT_ROUGE_VARIANT, ROUGE_VARIANTS
from longbench100.scoring.metrics.rouge_lcs import NeedsLibrary, longbench_rouge_l_f
from longbench100.text.answers import normalize_answer, strip_reasoning, token_f1

if TYPE_CHECKING:
    from rouge_score import rouge_scorer


PARALLEL_MIN_PAIRS = 64
"""Below this many summaries ROUGE-L runs in-process; above, starting worker processes pays off."""


def qa_f1(prediction: str, answers: list[str]) -> float:
    """LongBench QA F1: normalised token F1 against each reference answer, the best one counts."""
    tokens = normalize_answer(strip_reasoning(prediction)).split()
    return max(
        (token_f1(tokens, normalize_answer(answer).split()) for answer in answers), default=0.0
    )


@lru_cache(maxsize=1)
def _rouge_score_scorer() -> rouge_scorer.RougeScorer:
    """One shared rouge-score ROUGE-L scorer (its default English tokenizer, no stemming); the library is
    imported here, when that variant is asked for, because importing it loads NLTK (about 1.5 s)."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def _rouge_score_f(prediction: str, reference: str) -> float:
    """rouge-score's ROUGE-L F-measure: one LCS over the whole lower-cased texts."""
    return _rouge_score_scorer().score(reference, prediction)["rougeL"].fmeasure


def _longbench_f(prediction: str, reference: str) -> float:
    """LongBench's ``rouge_score`` computed by :mod:`.rouge_lcs`; a pair whose walk is too deep to be sure
    of goes to the library itself (:func:`_longbench_library_guarded`), so the result is always the library's."""
    try:
        return longbench_rouge_l_f(prediction, reference)
    except NeedsLibrary:
        return _longbench_library_guarded(prediction, reference)
    except ValueError:  # an empty side: the library raises, LongBench scores 0
        return 0.0


def _longbench_library_guarded(prediction: str, reference: str) -> float:
    """LongBench's ``rouge_score``: the ``rouge`` package's ROUGE-L F, 0 where the library raises.

    LongBench calls ``Rouge().get_scores([pred], [ref], avg=True)["rouge-l"]["f"]`` inside a bare
    ``except`` returning 0; asking for ROUGE-L alone gives the same number (ROUGE-1/2 raise only on
    the empty inputs ROUGE-L raises on) without the n-gram work LongBench discards. The library rebuilds each LCS
    recursively, so a sentence pair of about a thousand words exceeds Python's recursion limit; the
    call runs in a fresh thread so that this limit is met at the same depth from every caller.
    """
    try:
        return _in_fresh_thread(_longbench_library_f, prediction, reference)
    except Exception:  # noqa: BLE001 - LongBench scores every failure of the library as 0
        return 0.0


def _longbench_library_f(prediction: str, reference: str) -> float:
    """The ``rouge`` package's summary-level ROUGE-L F of one pair (raises what the library raises)."""
    return Rouge(metrics=["rouge-l"], stats=["f"]).get_scores([prediction], [reference], avg=True)[
        "rouge-l"
    ]["f"]


def _in_fresh_thread(function: Callable[..., float], *args: str) -> float:
    """Run ``function(*args)`` on a new thread, whose Python stack starts empty, and return its result."""
    with ThreadPoolExecutor(1) as runner:
        return runner.submit(function, *args).result()


_ROUGE_L_BY_VARIANT: dict[str, Callable[[str, str], float]] = {
    "longbench": _longbench_f,
    "longbench-library": _longbench_library_guarded,
    "rouge-score": _rouge_score_f,
}


def check_rouge_variant(variant: str) -> str:
    """Return ``variant`` when it names a ROUGE-L variant, else raise a one-line :class:`UserError`."""
    if variant not in _ROUGE_L_BY_VARIANT:
        raise UserError(f"--rouge-variant {variant}: choose from {', '.join(ROUGE_VARIANTS)}")
    return variant


def rouge_l(prediction: str, answers: list[str], variant: str = DEFAULT_ROUGE_VARIANT) -> float:
    """ROUGE-L F of the whole prediction (reasoning removed) against each reference, the best one counts."""
    score_pair = _ROUGE_L_BY_VARIANT[check_rouge_variant(variant)]
    text = strip_reasoning(prediction)
    return max((score_pair(text, answer) for answer in answers), default=0.0)


def _rouge_l_pair(pair: tuple[str, list[str]], variant: str) -> float:
    """:func:`rouge_l` on one ``(prediction, references)`` pair (a picklable worker function)."""
    return rouge_l(*pair, variant=variant)


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
    """:func:`rouge_l` of ``variant`` for many ``(prediction, references)`` pairs, in order.

    Both libraries compute the LCS in pure Python (about 12 ms for two 200-word summaries), so with at
    least ``min_parallel`` pairs the work is spread over ``workers`` processes (default: every
    available CPU). Workers are forked when the caller runs a single thread, else spawned (forking a
    threaded process is unsafe); if the pool cannot run, the pairs are scored in-process. A pair
    given more than once (the same answer against the same references) is scored once.
    """
    check_rouge_variant(variant)
    distinct = list(dict.fromkeys((text, tuple(references)) for text, references in pairs))
    scored = _rouge_l_distinct(
        [(text, list(references)) for text, references in distinct], variant, workers, min_parallel
    )
    by_pair = dict(zip(distinct, scored, strict=True))
    return [by_pair[(text, tuple(references))] for text, references in pairs]


def _rouge_l_distinct(
    pairs: list[tuple[str, list[str]]], variant: str, workers: int | None, min_parallel: int
) -> list[float]:
    """:func:`rouge_l_many` of pairs that are all different: in-process, or over worker processes
    when there are many."""
    workers = min(workers or available_cpus(), len(pairs))
    if workers < 2 or len(pairs) < min_parallel:
        return [rouge_l(*pair, variant=variant) for pair in pairs]
    single_thread = (
        threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
    )
    try:
        with worker_pool(workers, "fork" if single_thread else "spawn") as pool:
            chunksize = max(1, len(pairs) // (workers * 4))
            return list(pool.map(_rouge_l_pair, pairs, repeat(variant), chunksize=chunksize))
    except (BrokenProcessPool, OSError):
        return [rouge_l(*pair, variant=variant) for pair in pairs]
