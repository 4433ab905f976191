"""variable_tracking, common_words and frequent_words: budgets, independently checked gold, pairing, metric."""

import json
import math
import re
import statistics
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.catalog.task_info import TASKS
from longbench100.cli import main
from longbench100.core.lengths import parse_length
from longbench100.fitting.fit import BuildContext
from longbench100.scoring.grading import choose_metrics
from longbench100.scoring.metrics.parsers import string_match_all
from longbench100.tasks.synthetic import fill_units
from longbench100.text.tokenization import load_tokenizer

SYNTHETIC = ("variable_tracking", "common_words", "frequent_words")
LENGTHS = {"2k": 2048, "4k": 4096, "8k": 8192}
ROWS = 6


def generate(out: Path, *extra: str) -> None:
    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--sources",
            "demo",
            "--tasks",
            ",".join(SYNTHETIC),
            "--lengths",
            ",".join(LENGTHS),
            "--rows",
            str(ROWS),
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(out),
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synthetic") / "data"
    generate(out)
    return out


def records(data: Path, task: str, label: str) -> list[dict]:
    return [
        json.loads(line)
        for line in (data / task / f"{label}.jsonl").read_text(encoding="utf-8").splitlines()
    ]


@pytest.mark.parametrize("task", SYNTHETIC)
def test_every_prompt_recounts_within_its_budget_less_the_answer_space_and_fills_it(data, task):
    tokenizer = load_tokenizer()
    reserve = TASKS[task].max_new_tokens
    for label, budget in LENGTHS.items():
        rows = records(data, task, label)
        assert len(rows) == ROWS
        fills = []
        for record in rows:
            tokens = tokenizer.count(record["prompt"])
            assert tokens == record["prompt_tokens"] <= budget - reserve
            fills.append(tokens / (budget - reserve))
        if budget >= 4096:
            assert statistics.median(fills) >= 0.99, (label, fills)


def holders(prompt: str) -> tuple[set[str], str, int]:
    """Resolve every ``VAR X = ...`` statement of the task part of the prompt (after the worked example):
    the names holding the asked value, the value, the number of statements."""
    prompt = prompt.split("Now the text to work on.", 1)[1]
    value = re.search(r"assigned the value (\d+)", prompt).group(1)
    statements = re.findall(r"VAR ([A-Z]+) = (\d+|VAR [A-Z]+)\.", prompt)
    assigned = dict(statements)

    def resolve(name: str) -> str:
        target = assigned[name]
        return resolve(target[4:]) if target.startswith("VAR ") else target

    return {name for name in assigned if resolve(name) == value}, value, len(statements)


def test_variable_chains_resolve_to_exactly_the_gold_names(data):
    for label in LENGTHS:
        for record in records(data, "variable_tracking", label):
            names, value, count = holders(record["prompt"])
            assert count == 5 and names == set(record["answers"]) and len(names) == 5
            assert record["gold"]["value"] == value
            first = record["prompt"].index(f"VAR {record['answers'][0]} = {value}.")
            assert all(
                record["prompt"].index(f"VAR {name} = ") > first for name in record["answers"][1:]
            )


def test_variable_tracking_follows_ruler_random_sorted_places_and_a_worked_example_paired_across_lengths(
    data,
):
    by_row = {}
    for label in LENGTHS:
        for record in records(data, "variable_tracking", label):
            prompt = record["prompt"]
            example, task = prompt.split("Now the text to work on.", 1)
            shown = (
                re.search(r"are: ([A-Z, ]+)\n", example).group(1).split(", ")
            )  # the worked example answers itself
            example_value = re.search(r"assigned the value (\d+)", example).group(1)
            assert shown == record["gold"]["example_chain"] and all(
                len(name) == 3 for name in shown
            )
            assert f"VAR {shown[0]} = {example_value}." in example
            context = task.split("\n\n")[1]
            depths = [context.index(line) / len(context) for line in record["gold"]["chain"]]
            assert (
                depths == sorted(depths) and depths[-1] - depths[0] > 0.05
            )  # spread, not packed behind the first
            assert [round(depth, 4) for depth in depths] == record["gold"]["depths"] and record[
                "gold"
            ]["depth"] == record["gold"]["depths"][0]
            by_row.setdefault(record["row"], []).append(
                (tuple(record["answers"]), record["gold"]["value"], depths)
            )
    for variants in by_row.values():
        assert len({(answers, value) for answers, value, _ in variants}) == 1
        assert all(
            abs(a - b) < 0.02 for _, _, depths in variants for a, b in zip(depths, variants[0][2])
        )  # same places at every length
    lasts = [variants[0][2][-1] for variants in by_row.values()]
    assert (
        min(lasts) < 0.8 or len(lasts) < 4
    )  # the last hop is not always near the end, as it was with grid-then-even spacing


def numbered_words(prompt: str) -> list[str]:
    """The words of the task's numbered list (after the worked example), checking that the numbers run 1, 2, 3, ..."""
    entries = re.findall(
        r"^(\d+)\. ([a-z]+)$", prompt.split("Now the list to work on.", 1)[1], flags=re.MULTILINE
    )
    assert [int(number) for number, _ in entries] == list(range(1, len(entries) + 1))
    return [word for _, word in entries]


def test_common_words_counts_follow_rulers_settings_after_a_worked_example(data):
    for label in LENGTHS:
        long = (
            parse_length(label) >= 4096
        )  # RULER: 30 / 3 from 4k up (example 40 words, 10 / 3), else 6 / 1 (20 words, 3 / 1)
        times, other_times, example_size, example_times, example_other = (
            (30, 3, 40, 10, 3) if long else (6, 1, 20, 3, 1)
        )
        for record in records(data, "common_words", label):
            counts = Counter(numbered_words(record["prompt"]))
            common = {word for word, count in counts.items() if count == times}
            assert common == set(record["answers"]) and len(common) == 10
            assert {count for word, count in counts.items() if word not in common} == {other_times}
            assert record["gold"]["times"] == {"common": times, "other": other_times}
            assert not [
                (gold, word) for gold in common for word in counts if gold != word and gold in word
            ]  # substring scoring is unambiguous
            example = record["prompt"].split("Now the list to work on.", 1)[
                0
            ]  # RULER's worked example, with its answer
            shown = Counter(re.findall(r"^\d+\. ([a-z]+)$", example, flags=re.MULTILINE))
            assert sorted(word for word, n in shown.items() if n == example_times) == sorted(
                record["gold"]["example_words"]
            )
            assert len(shown) == example_size
            assert {
                n for word, n in shown.items() if word not in record["gold"]["example_words"]
            } == {example_other}
            assert ", ".join(record["gold"]["example_words"]) in example and not set(shown) & set(
                counts
            )


def test_frequent_words_follows_ruler_noise_on_top_exact_zipf_counts_answers_ranks_two_to_four(
    data,
):
    for label in LENGTHS:
        for record in records(data, "frequent_words", label):
            text = record["prompt"].split("\n\n")[1]
            ranked = Counter(text.split()).most_common()
            assert (
                ranked[0][0] == "...." and "'....'" in record["prompt"]
            )  # the top "word" is the noise token
            assert [word for word, _ in ranked[1:4]] == record["answers"]
            assert ranked[1][1] > ranked[2][1] > ranked[3][1] > ranked[4][1]
            assert all(
                len(word) == 6 and word.isalpha() and word.islower() for word, _ in ranked[1:]
            )
            zeta2 = (
                math.pi**2 / 6
            )  # every count is int(N / (k**2 * zeta(2))) for one N: exact Zipf, not samples
            counts = [count for _, count in ranked]
            sizes = [
                n
                for n in range(int(counts[0] * zeta2), int((counts[0] + 1) * zeta2) + 1)
                if [int(n / (k * k * zeta2)) for k in range(1, len(counts) + 1)] == counts
            ]
            assert sizes, counts[:6]
            assert (
                len(ranked) <= record["length"] // 50
            )  # RULER's vocabulary: one code per 50 tokens


@pytest.mark.parametrize("task", SYNTHETIC)
def test_rows_ask_the_same_question_at_every_length(data, task):
    answers = [[record["answers"] for record in records(data, task, label)] for label in LENGTHS]
    assert answers[0] == answers[1] == answers[2]
    assert len({tuple(row) for row in answers[0]}) == ROWS


def test_generation_is_deterministic_and_the_seed_matters(data, tmp_path):
    generate(tmp_path / "again")
    generate(tmp_path / "other", "--seed", "7", "--lengths", "2k")  # every task differs at 2k
    for task in SYNTHETIC:
        for label in LENGTHS:
            name = f"{task}/{label}.jsonl"
            assert (tmp_path / "again" / name).read_bytes() == (data / name).read_bytes()
        other = (tmp_path / "other" / task / "2k.jsonl").read_bytes()
        assert other != (data / task / "2k.jsonl").read_bytes()


def test_fill_units_finds_the_largest_count_that_fits_and_refuses_an_oversized_frame():
    ctx = BuildContext(load_tokenizer(), "common_words", "1k", 1000, 1)
    render = lambda n: "frame " * 10 + "word " * n  # noqa: E731 - a tiny stand-in renderer
    fitted, count = fill_units(ctx, 500, render, 10_000)
    assert (
        fitted.tokens
        == ctx.count_prompt(render(count))
        <= 500
        < ctx.count_prompt(render(count + 1))
    )
    fitted, count = fill_units(ctx, 500, render, 20)
    assert count == 20
    assert fill_units(ctx, 5, render, 100) is None


REPLIES = [
    # (reply as a model writes it, golds, score)
    (" QWERT, ASDFG, ZXCVB, POIUY, LKJHG", ["QWERT", "ASDFG", "ZXCVB", "POIUY", "LKJHG"], 1.0),
    (
        "The variables are qwert, asdfg and zxcvb.",
        ["QWERT", "ASDFG", "ZXCVB", "POIUY", "LKJHG"],
        0.6,
    ),
    ("1. apple\n2. river\n3. stone", ["apple", "river", "stone", "cloud"], 0.75),
    ("I cannot determine which words are most frequent.", ["ziqqm", "fpsodn", "kfewv"], 0.0),
    ("", ["ziqqm"], 0.0),
]


@pytest.mark.parametrize("reply,golds,expected", REPLIES)
def test_string_match_all_is_the_fraction_of_gold_strings_present(reply, golds, expected):
    assert string_match_all(reply, golds) == pytest.approx(expected)


def test_the_new_tasks_are_graded_with_string_match_all_in_every_metric_mode():
    for mode in ("auto", "classic"):
        assert set(choose_metrics(list(SYNTHETIC), mode, False).values()) == {"string_match_all"}


def test_scoring_grades_partial_replies_and_keeps_variable_tracking_depths(data, tmp_path):
    from tests.scoring.test_predictions import write_predictions

    def reply(
        record: dict,
    ) -> str:  # full answers on even rows, only the first two gold strings on odd rows
        golds = record["answers"] if record["row"] % 2 == 0 else record["answers"][:2]
        return "Answer: " + ", ".join(golds).upper() + "."

    predictions = write_predictions(tmp_path / "pred", data, answer=reply)
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        main,
        [
            "score",
            "--n-boot",
            "10",
            "--data",
            str(data),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--base-lengths",
            "2k,4k",
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads(out.read_text(encoding="utf-8"))
    assert len(results["samples"]) == len(SYNTHETIC) * len(LENGTHS) * ROWS
    for sample in results["samples"]:
        golds = len(
            next(
                r
                for r in records(data, sample["task"], sample["label"])
                if r["row"] == sample["row"]
            )["answers"]
        )
        assert sample["score"] == pytest.approx(1.0 if sample["row"] % 2 == 0 else 2 / golds)
    assert results["settings"]["metrics"] == {task: "string_match_all" for task in SYNTHETIC}
    assert set(results["aggregates"]["depth"]) == {"variable_tracking"}
    assert set(results["aggregates"]["depth"]["variable_tracking"]) == set(LENGTHS)
    report = CliRunner().invoke(
        main, ["report", str(out), "--out", str(tmp_path / "report"), "--n-boot", "10"]
    )
    assert report.exit_code == 0, report.output
    assert (tmp_path / "report" / "depth_heatmap.png").stat().st_size > 0


def test_a_different_word_list_is_refused_in_one_line(monkeypatch):
    import english_words

    from longbench100.core.errors import UserError
    from longbench100.tasks import synthetic

    synthetic.english_words.cache_clear()
    monkeypatch.setattr(
        english_words, "get_english_words_set", lambda *args, **kwargs: {"apple", "river", "stone"}
    )
    with pytest.raises(UserError, match="english-words==2.0.2"):
        synthetic.english_words()
    synthetic.english_words.cache_clear()
