"""Time ``longbench100 score`` on 10,000 synthetic classic-metric predictions (no judge, no network).

Generates a data folder and predictions in a temporary folder: the eight tasks at eight lengths
(2k-256k labels, prompts are short stand-ins: scoring never reads them), answers of realistic size
(QA answers of 2-30 words, summaries of 120-260 words against references of the same size), then
times each stage of scoring in-process and the whole command end to end.

    .venv/bin/python bench/bench_score.py [--n 10000] [--seed 0] [--rouge-variant longbench]
    .venv/bin/python bench/bench_score.py --summaries-only [--n 2000]

``--rouge-variant longbench-library`` scores with the ``rouge`` package itself (what ``longbench`` computed
before it got its own LCS): the same numbers, so the printed results hash must not change. With
``--summaries-only`` the data holds summaries alone, and the bench compares ``score``'s time less its
start-up (a one-record score run) with what the ``rouge`` package alone needs for the same pairs.
"""

import argparse
import hashlib
import json
import os
import random
import tempfile
import time
import uuid
from pathlib import Path

from click.testing import CliRunner

from longbench100.catalog.suites import load_suite
from longbench100.catalog.task_info import TASKS
from longbench100.cli import main
from longbench100.core.lengths import parse_length
from longbench100.folders.data_records import load_data
from longbench100.scoring.aggregates.aggregate import aggregate
from longbench100.scoring.grading import choose_metrics
from longbench100.scoring.metrics.classic import (
    _longbench_library_guarded,
    available_cpus,
    rouge_l_many,
)
from longbench100.scoring.predictions import load_predictions, match_predictions
from longbench100.scoring.scorer import score_predictions

LABELS = ("2k", "4k", "6k", "8k", "16k", "32k", "64k", "128k")
WORDS = (
    "the council budget river storm city report meeting patent review season court contract market growth "
    "energy policy school water health company workers data model study results members plan year"
).split()


def sentence(rng: random.Random, low: int, high: int) -> str:
    """A random sentence of ``low``-``high`` words drawn from a small vocabulary."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."


def text(rng: random.Random, words: int) -> str:
    """Random prose of about ``words`` words."""
    sentences = []
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(sentence(rng, 8, 24))
    return " ".join(sentences)


def gold_and_answer(task: str, rng: random.Random) -> tuple[list[str], str, str | None]:
    """Gold answers, a model answer (right about half the time) and a closed-book answer for one record."""
    if task == "kv_retrieval":
        value = str(uuid.UUID(int=rng.getrandbits(128)))
        answer = value if rng.random() < 0.5 else str(uuid.UUID(int=rng.getrandbits(128)))
        return [value], f"The value associated with the key is {answer}.", None
    if task in ("counting_stars", "passage_retrieval", "passage_count"):
        gold = rng.randint(1, 30)
        said = gold if rng.random() < 0.5 else rng.randint(1, 30)
        phrasing = {
            "counting_stars": "The answer is option {}.",
            "passage_retrieval": "Passage {}.",
            "passage_count": "After reading them all, there are {} unique paragraphs.",
        }[task]
        return [str(gold)], phrasing.format(said), None
    if task in ("single_doc_qa", "multi_doc_qa"):
        gold = sentence(rng, 2, 12)
        answer = gold if rng.random() < 0.3 else sentence(rng, 2, 30)
        return [gold, sentence(rng, 2, 6)], answer, sentence(rng, 2, 20)
    reference = text(rng, rng.randint(120, 260))
    return [reference], "Here is a summary:\n\n" + text(rng, rng.randint(120, 260)), None


BENCH_TASKS = tuple(
    load_suite("100-longbench").tasks
)  # the paper's eight tasks (answers this bench can make up)
SUMMARY_TASKS = ("single_doc_sum", "multi_doc_sum")


def generate(
    root: Path, n: int, seed: int, tasks: tuple[str, ...] = BENCH_TASKS
) -> tuple[Path, Path]:
    """Write ``n`` data records of ``tasks`` and their predictions; return the data and predictions folders."""
    rng = random.Random(seed)
    cells = len(tasks) * len(LABELS)
    data, predictions = root / "data", root / "predictions"
    for cell, (task, label) in enumerate((task, label) for task in tasks for label in LABELS):
        records, answers = [], []
        for row in range(n // cells + (cell < n % cells)):
            gold, answer, closed = gold_and_answer(task, rng)
            record_id = f"{task}-{label}-{row:04d}"
            qa = TASKS[task].closed_book
            records.append(
                {
                    "id": record_id,
                    "task": task,
                    "length": parse_length(label),
                    "label": label,
                    "row": row,
                    "prompt": "(prompt)",
                    "prompt_tokens": 2,
                    "answers": gold,
                    "closed_book_prompt": "(closed-book prompt)" if qa else None,
                    "metric": TASKS[task].metric,
                    "question": "(question)",
                    "gold": {},
                    "distractors": [],
                    "seed": seed,
                }
            )
            prediction = {"id": record_id, "prediction": answer}
            if qa:
                prediction["closed_book_prediction"] = closed
            answers.append(prediction)
        for folder, rows in ((data, records), (predictions, answers)):
            (folder / task).mkdir(parents=True, exist_ok=True)
            (folder / task / f"{label}.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in rows)
            )
    (data / "manifest.json").write_text(json.dumps({"seed": seed}))
    return data, predictions


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished worker processes."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def timed(label: str, timings: dict, action):
    """Run ``action()``, store its wall and CPU time under ``label``, return its result."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = action()
    timings[label] = (time.perf_counter() - start, cpu_seconds() - cpu)
    return result


def results_hash(path: Path) -> str:
    """sha256 of a results.json's samples and aggregates (what scoring computed; no dates or paths)."""
    results = json.loads(path.read_text())
    return hashlib.sha256(
        json.dumps([results["samples"], results["aggregates"]], sort_keys=True).encode()
    ).hexdigest()


def score_command(data: Path, predictions: Path, out: Path, variant: str) -> float:
    """Wall seconds of one in-process ``longbench100 score --metric classic`` run."""
    start = time.perf_counter()
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--metric",
            "classic",
            "--rouge-variant",
            variant,
        ],
    )
    assert result.exit_code == 0, result.output
    return time.perf_counter() - start


def summaries_bench(n: int, seed: int, variant: str) -> None:
    """Score summaries alone; compare score's time less its start-up with the ``rouge`` package's time."""
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        data, predictions = generate(root / "all", n, seed, SUMMARY_TASKS)
        tiny_data, tiny_predictions = generate(root / "one", 1, seed, SUMMARY_TASKS[:1])
        startup = min(
            score_command(tiny_data, tiny_predictions, root / "one.json", variant) for _ in range(3)
        )
        total = score_command(data, predictions, root / "results.json", variant)
        records = load_data(data)
        by_id = {p.id: p for p in load_predictions(predictions)}
        pairs = [(by_id[r.id].prediction, answer) for r in records for answer in r.answers]
        start = time.perf_counter()
        for prediction, reference in pairs:
            _longbench_library_guarded(prediction, reference)
        library = time.perf_counter() - start
        print(
            f"{len(records)} summaries, variant {variant}: score {total:.2f} s wall, start-up {startup:.2f} s, "
            f"rouge package alone {library:.2f} s -> (score - start-up) / rouge package = {(total - startup) / library:.2f}"
        )
        print(f"results hash {results_hash(root / 'results.json')}")


def main_bench() -> None:
    """Generate, score in stages, score end to end; print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n", type=int, default=10_000, help="predictions to score (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rouge-variant", default="longbench", help="ROUGE-L variant of the end-to-end run"
    )
    parser.add_argument(
        "--summaries-only", action="store_true", help="summaries alone, against the rouge package"
    )
    args = parser.parse_args()
    if args.summaries_only:
        summaries_bench(args.n, args.seed, args.rouge_variant)
        return
    with tempfile.TemporaryDirectory() as temporary:
        data, predictions = generate(Path(temporary), args.n, args.seed)
        timings: dict[str, float] = {}
        records = timed("read data", timings, lambda: load_data(data))
        loaded = timed("read predictions", timings, lambda: load_predictions(predictions))
        by_id, _ = match_predictions(
            loaded,
            [r.id for r in records],
            {r.id for r in records},
            allow_missing=False,
            source=predictions,
        )
        metrics = choose_metrics(list(BENCH_TASKS), "classic", False)
        outcome = timed(
            "grade (answers + closed-book)",
            timings,
            lambda: score_predictions(records, by_id, metrics, 0.5, None, progress=False),
        )
        timed(
            "aggregate (1000 bootstrap)",
            timings,
            lambda: aggregate(outcome.samples, ["2k", "4k", "6k"]),
        )
        out = Path(temporary) / "results.json"
        timed(
            "end to end: longbench100 score",
            timings,
            lambda: score_command(data, predictions, out, args.rouge_variant),
        )
        digest = results_hash(out)
        per_answer = {}
        for metric in ("accuracy", "qa_f1"):
            subset = [r for r in records if metrics[r.task] == metric]
            start = time.process_time()
            score_predictions(subset, by_id, metrics, None, None, progress=False)
            per_answer[metric] = (time.process_time() - start) / len(subset)
        summaries = [
            (by_id[r.id].prediction, list(r.answers))
            for r in records
            if metrics[r.task] == "rouge_l"
        ]
        start = time.process_time()
        rouge_l_many(summaries[:200], args.rouge_variant, workers=1)
        per_answer["rouge_l"] = (time.process_time() - start) / 200
    print(
        f"{len(records)} predictions ({len(BENCH_TASKS)} tasks x {len(LABELS)} lengths), classic metrics, "
        f"QA filter 0.5, {available_cpus()} CPUs"
    )
    print(f"  {'stage':<34} {'wall s':>8} {'CPU s':>8}")
    for label, (wall, cpu) in timings.items():
        print(f"  {label:<34} {wall:8.2f} {cpu:8.2f}")
    for metric, seconds in per_answer.items():
        print(f"  {metric:<34} {1000 * seconds:8.2f} ms CPU per answer")
    print(f"results hash {digest} (ROUGE-L variant {args.rouge_variant})")


if __name__ == "__main__":
    main_bench()
