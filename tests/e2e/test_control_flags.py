"""A model's own shortcut score, end to end (issue 45): stub models served over HTTP answer the
real prompts and both control twins (``predict --controls``), ``score --controls`` grades them, and
``report`` (markdown and HTML) flags each task and length whose twin score is above chance + 5
points beyond sampling error. Chance and the twin scores are worked out here again from the data,
without the package's code, and the report must agree with them.

What the twins can show: a model answering from a part of the prompt that survives in them (the
memoriser, which knows each question's answer) scores on them, and is flagged. A model reading the
gold (the options' numbers in the star sentences, the passage the summary matches) scores near
chance on them, and is not. The same numbers rule on a generator made leaky on purpose (every row
shows the same stars, so another row's context holds this row's answer) is flagged again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from statistics import fmean, stdev

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.tasks import counting_stars
from longbench100.text.tokenization import load_tokenizer
from tests.support.generate_helpers import generate_in_process
from tests.support.openai_stub import OpenAIStub, prompt_text

TASKS = ("counting_stars", "passage_retrieval")
LENGTHS = (("2k", 2048), ("3000", 3000))
ROWS = 8
MARGIN = 5.0  # points: the margin a twin score may reach above chance (docs/baselines.md)
Z_ONE_SIDED = 1.645
LEAKY_STARS = [17, 63, 8, 91]
Responder = Callable[[str], str]


def _generate(mirror: Path, out: Path) -> Path:
    generate_in_process(out, TASKS, LENGTHS, ROWS, sources=str(mirror), seed=23)
    return out


def _leaky_counts(seed: int, row: int) -> tuple[list[int], list[str], int]:
    """Every row's stars are the same four counts; the wrong options are other numbers, so the
    option whose numbers are all in the text is right, in this row's context and in any other's."""
    family = [LEAKY_STARS] + [[count + 100 + shift for count in LEAKY_STARS] for shift in (1, 2, 3)]
    order = [family[(row + place) % len(family)] for place in range(len(family))]
    options = [counting_stars.counts_text(member) for member in order]
    return LEAKY_STARS, options + [counting_stars.UNANSWERABLE], order.index(LEAKY_STARS) + 1


@pytest.fixture(scope="module")
def honest(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generate(mirror, tmp_path_factory.mktemp("honest") / "data")


@pytest.fixture(scope="module")
def leaky(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(counting_stars, "counts_for_row", _leaky_counts)
        return _generate(mirror, tmp_path_factory.mktemp("leaky") / "data")


def _records(folder: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("*/*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def _tail(prompt: str) -> str:
    """What a prompt asks after its context: the summary, or the closing question and options."""
    start = prompt.rfind("\nSummary:\n")
    return prompt[start if start >= 0 else prompt.rfind("Question:") :]


def _numbers_rule(prompt: str) -> str:
    """The option with the most of its numbers occurring in the context (first on a tie)."""
    cut = prompt.rfind("Question:")
    present = set(re.findall(r"\d+", prompt[:cut]))
    options = re.findall(r"^Option (\d+): \[([^\]]*)\]$", prompt[cut:], re.MULTILINE)
    return max(
        options,
        key=lambda option: sum(value in present for value in re.findall(r"\d+", option[1])),
    )[0]


def _best_matching_passage(prompt: str) -> str:
    """The passage sharing the most words with the summary."""
    cut = prompt.rfind("\nSummary:\n")
    summary = set(re.findall(r"[a-z]{4,}", prompt[cut:].lower()))
    passages = re.split(r"^Passage (\d+):$", prompt[:cut], flags=re.MULTILINE)[1:]
    numbered = zip(passages[::2], passages[1::2])
    return max(
        numbered, key=lambda entry: len(summary & set(re.findall(r"[a-z]{4,}", entry[1].lower())))
    )[0]


def _reader(prompt: str) -> str:
    """Reads the gold: the numbers rule on the options, else the passage the summary matches."""
    return _numbers_rule(prompt) if "\nOption 1: [" in prompt else _best_matching_passage(prompt)


def _memoriser(data: Path) -> Responder:
    """Knows every question's answer at each length (as a model trained on the test set would),
    whatever the context holds: it reads only the part after the context, which both twins keep,
    and the prompt's length in tokens (a twin has its sample's budget)."""
    count = load_tokenizer("cl100k_base").count
    budgets = sorted(budget for _, budget in LENGTHS)

    def budget(prompt: str) -> int:
        return next(limit for limit in budgets if count(prompt) <= limit)

    answers = {
        (_tail(record["prompt"]), record["length"]): record["answers"][0]
        for record in _records(data)
    }
    return lambda prompt: answers[(_tail(prompt), budget(prompt))]


def _chance(record: dict) -> float:
    """A uniformly random possible answer's expected score: one of the options that hold counts,
    or one of the passages that are not the cut-off filler."""
    prompt = record["prompt"]
    if record["task"] == "counting_stars":
        return 1 / len(re.findall(r"^Option \d+: \[", prompt, re.MULTILINE))
    cut = sum(bool(entry.get("truncated")) for entry in record["distractors"])
    return 1 / (len(re.findall(r"^Passage \d+:$", prompt, re.MULTILINE)) - cut)


def _expected_cells(data: Path, answer: Responder) -> dict[tuple[str, str], dict]:
    """Per task and length: chance (points) and each twin kind's score and standard error, worked
    out from the records and the stub's own answers, and whether they pass chance + the margin."""
    chance: dict[tuple[str, str], list[float]] = {}
    for record in _records(data):
        if record["task"] in TASKS:
            chance.setdefault((record["task"], record["label"]), []).append(_chance(record))
    hits: dict[tuple[str, str, str], list[float]] = {}
    for twin in _records(data / "controls"):
        right = answer(twin["prompt"]) == twin["answers"][0]
        hits.setdefault((twin["task"], twin["label"], twin["control"]), []).append(100.0 * right)
    cells = {}
    for (task, label), chances in chance.items():
        level = 100 * fmean(chances)
        kinds = {
            kind: (fmean(values), stdev(values) / math.sqrt(len(values)))
            for (t, l, kind), values in hits.items()
            if (t, l) == (task, label)
        }
        assert set(kinds) == {"gold_removed", "context_swapped"}
        over = any(score > level + MARGIN + Z_ONE_SIDED * error for score, error in kinds.values())
        cells[(task, label)] = {"chance": level, "kinds": kinds, "flagged": over}
    return cells


def _run(data: Path, out: Path, name: str, answer: Responder) -> tuple[dict, str, str]:
    """predict, score and report with --controls; the results' control block and both reports."""
    runner = CliRunner()
    with OpenAIStub(lambda body: answer(prompt_text(body))) as server:
        predicted = runner.invoke(
            main,
            [
                "predict", "--data", str(data), "--model", "stub-model",
                "--base-url", server.base_url, "--out", str(out / "preds"),
                "--controls", "--no-progress",
            ],
        )  # fmt: skip
    assert predicted.exit_code == 0, predicted.output
    results = out / "results.json"
    scored = runner.invoke(
        main,
        [
            "score", "--data", str(data), "--predictions", str(out / "preds"),
            "--out", str(results), "--controls", "--model-name", name, "--base-lengths", "2k",
        ],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    plain = out / "plain.json"
    scored = runner.invoke(
        main,
        ["score", "--data", str(data), "--predictions", str(out / "preds"), "--out", str(plain)],
    )
    assert scored.exit_code == 0, scored.output
    assert "controls" not in json.loads(plain.read_text())["aggregates"]  # only when asked
    reported = runner.invoke(main, ["report", str(results), "--out", str(out / "report"), "--html"])
    assert reported.exit_code == 0, reported.output
    return (
        json.loads(results.read_text())["aggregates"]["controls"],
        (out / "report" / "report.md").read_text(encoding="utf-8"),
        (out / "report" / "report.html").read_text(encoding="utf-8"),
    )


def _check_report(
    name: str, data: Path, answer: Responder, block: dict, markdown: str, html: str
) -> dict[tuple[str, str], bool]:
    """The report states the twin scores and chance worked out here, and flags exactly the cells
    above chance + the margin; returns each cell's flag."""
    expected = _expected_cells(data, answer)
    assert {(task, label) for task in block for label in block[task]} == set(expected)
    flags = {}
    for (task, label), cell in expected.items():
        stated = block[task][label]
        assert stated["chance"] == pytest.approx(cell["chance"], abs=0.01)
        for kind, (score, _) in cell["kinds"].items():
            assert stated[kind]["score"] == pytest.approx(score, abs=0.01)
            assert stated[kind]["n"] == ROWS
        assert stated["flagged"] == cell["flagged"], (task, label, stated, cell)
        row = re.search(rf"^\| {name} \| {task} \| {label} \|.*$", markdown, re.MULTILINE)
        assert row is not None and ("⚠ above chance" in row.group(0)) == cell["flagged"]
        bullet = f"**{name}** ({task} {label}): scores above chance on its control twins"
        assert (bullet in markdown) == cell["flagged"]
        html_row = re.search(
            rf"<tr>\s*<td>{name}</td>\s*<td>{task}</td>\s*<td>{label}</td>.*?</tr>", html, re.DOTALL
        )
        assert html_row is not None and ("⚠ above chance" in html_row.group(0)) == cell["flagged"]
        flags[(task, label)] = cell["flagged"]
    return flags


def test_a_model_that_knows_the_answers_without_the_gold_is_flagged(
    honest: Path, tmp_path: Path
) -> None:
    answer = _memoriser(honest)
    flags = _check_report("memoriser", honest, answer, *_run(honest, tmp_path, "memoriser", answer))
    assert all(flags.values()), flags


def test_a_model_that_reads_the_gold_is_not_flagged(honest: Path, tmp_path: Path) -> None:
    """The numbers rule finds no shortcut in the star options (every option holds the same
    numbers), and the summary's passage is gone from both twins: nothing to flag."""
    flags = _check_report("reader", honest, _reader, *_run(honest, tmp_path, "reader", _reader))
    assert not any(flags.values()), flags


def test_the_numbers_rule_is_flagged_where_the_generator_leaks_the_answer(
    leaky: Path, tmp_path: Path
) -> None:
    """Every row shows the same stars: on its context-swapped twin the numbers rule still finds
    this row's right option, so the model answers without this row's gold and is flagged."""
    stars = [record for record in _records(leaky) if record["task"] == "counting_stars"]
    assert all(record["gold"]["counts"] == LEAKY_STARS for record in stars)
    assert len({record["answers"][0] for record in stars}) > 1  # the right slot still varies
    block, markdown, html = _run(leaky, tmp_path, "numbers", _reader)
    flags = _check_report("numbers", leaky, _reader, block, markdown, html)
    assert flags[("counting_stars", "2k")] and flags[("counting_stars", "3000")], flags
    for cell in block["counting_stars"].values():
        # another row's context holds the same stars; the gold-removed twin holds none
        assert cell["context_swapped"]["score"] == 100.0
        removed = cell["gold_removed"]
        assert removed["score"] <= cell["chance"] + MARGIN + Z_ONE_SIDED * removed["stderr"]
    assert not flags[("passage_retrieval", "2k")] and not flags[("passage_retrieval", "3000")]
