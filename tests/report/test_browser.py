"""``report --html`` in a real headless chromium, at a desktop (1400x900) and a phone (390x844).

Needs Debian's ``chromium`` package (``apt-get install chromium``); skipped without it. Set
``LONGBENCH100_SCREENSHOTS=DIR`` to keep a screenshot of each view at both sizes (docs/ holds two).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from tests.support.generate_helpers import generate_from_demo
from tests.support.headless_browser import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)"
)

WINDOWS = {"desktop": (1400, 900, False), "phone": (390, 844, True)}
MODELS = ("model-a", "model-b")
WRONG = {
    "model-a": "a wrong guess",
    "model-b": "it's <b>wrong</b>' onmouseover='window.hacked=1",
}  # text, not markup


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of two models on three tasks at 2k, 4k and 8k (6k, a base length, left out)."""
    root = tmp_path_factory.mktemp("browser")
    data = root / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LONGBENCH100_CACHE", str(root / "cache"))
        generate_from_demo(
            data,
            ("kv_retrieval", "single_doc_qa", "passage_count"),
            (("2k", 2048), ("4k", 4096), ("8k", 8192)),
            rows=3,
        )
    records = [
        json.loads(line)
        for path in sorted(data.glob("*/*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    runner = CliRunner()
    results = []
    for index, model in enumerate(MODELS):
        predictions = root / f"{model}.jsonl"
        right = (lambda row: row != 1) if index == 0 else (lambda row: row == 2)
        predictions.write_text(
            "".join(
                json.dumps(
                    {
                        "id": r["id"],
                        "prediction": r["answers"][0] if right(r["row"]) else WRONG[model],
                    }
                )
                + "\n"
                for r in records
            )
        )
        results.append(root / f"{model}.json")
        result = runner.invoke(
            main,
            [
                "score",
                "-q",
                "--data",
                str(data),
                "--predictions",
                str(predictions),
                "--model-name",
                model,
                "--out",
                str(results[-1]),
                "--n-boot",
                "20",
            ],
        )
        assert result.exit_code == 0, result.output
    out = root / "report"
    result = runner.invoke(
        main,
        [
            "report",
            "-q",
            *map(str, results),
            "--out",
            str(out),
            "--html",
            "--data",
            str(data),
            "--n-boot",
            "10",
        ],
    )
    assert result.exit_code == 0, result.output
    return out / "report.html"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    with Browser(tmp_path_factory.mktemp("profile")) as running:
        yield running


def visit(browser: Browser, page: Path, window: str, hash_: str = "") -> None:
    width, height, mobile = WINDOWS[window]
    browser.size(width, height, mobile)
    browser.open(page.as_uri() + hash_)


def go(browser: Browser, hash_: str) -> None:
    browser.js(f"location.hash = {json.dumps(hash_)}")
    browser.settle()


def set_by_script(browser: Browser, element_id: str, value: str, event: str) -> None:
    """Set a filter's value from a script and dispatch ``event``, as a harness would."""
    browser.js(
        f"{{ const element = document.getElementById({json.dumps(element_id)}); "
        f"element.value = {json.dumps(value)}; "
        f"element.dispatchEvent(new Event({json.dumps(event)})); }}"
    )


def count(browser: Browser) -> str:
    return browser.js("document.getElementById('count').textContent")


@pytest.mark.parametrize("window", WINDOWS)
def test_no_view_scrolls_sideways(browser: Browser, page: Path, window: str):
    visit(browser, page, window)
    width = WINDOWS[window][0]
    shots = os.environ.get("LONGBENCH100_SCREENSHOTS")
    for view in (
        "report",
        "compare",
        "curves",
        "samples?task=single_doc_qa&length=8k&open=single_doc_qa-8k-0001",
    ):
        go(browser, f"#{view}")
        assert browser.js("document.documentElement.scrollWidth") <= width, view
        assert (
            browser.js("window.innerWidth") == width
        )  # the viewport meta: a phone lays out at its own width
        if shots:
            browser.screenshot(Path(shots) / f"report-{view.split('?')[0]}-{width}.png")


@pytest.mark.parametrize("window", WINDOWS)
def test_a_filter_set_by_a_script_changes_the_list(browser: Browser, page: Path, window: str):
    visit(browser, page, window, "#samples")
    assert count(browser) == "27 of 27 samples"
    set_by_script(browser, "f-task", "kv_retrieval", "change")
    assert count(browser) == "9 of 27 samples"
    set_by_script(browser, "f-smin", "0.5", "change")
    assert count(browser) == "6 of 27 samples"  # model-a answers rows 0 and 2 right
    set_by_script(browser, "f-smax", "", "input")
    assert count(browser) == "6 of 27 samples"  # an empty "to" is no bound, not 0
    set_by_script(browser, "f-model", "1", "change")
    assert (
        browser.js("document.getElementById('f-task').value") == "kv_retrieval"
    )  # switching model keeps the task
    assert count(browser) == "3 of 27 samples"  # model-b answers row 2 only


@pytest.mark.parametrize("window", WINDOWS)
def test_a_report_table_cell_links_to_its_samples(browser: Browser, page: Path, window: str):
    visit(browser, page, window)
    href = browser.js("""(() => {
        const heading = [...document.querySelectorAll('#view-report h3')]
            .find((h) => h.textContent === 'single_doc_qa');
        let table = heading.nextElementSibling;
        while (!table.querySelector('table')) table = table.nextElementSibling;
        const row = [...table.querySelectorAll('tbody tr')]
            .find((tr) => tr.cells[0].textContent.trim() === 'model-b');
        const column = [...table.querySelectorAll('thead th')]
            .findIndex((th) => th.textContent.trim() === '8k');
        const link = row.cells[column].querySelector('a');
        link.click();
        return link.getAttribute('href');
    })()""")
    browser.settle()
    assert href == "#samples?model=1&task=single_doc_qa&length=8k"
    assert (
        browser.js("document.getElementById('view-samples').classList.contains('hidden')") is False
    )
    assert count(browser) == "3 of 27 samples"
    assert browser.js("document.getElementById('f-model').value") == "1"


@pytest.mark.parametrize("window", WINDOWS)
def test_filter_state_and_sorting_survive_a_reload(browser: Browser, page: Path, window: str):
    visit(browser, page, window, "#samples")
    browser.js("""(() => {
        const wanted = [['f-task', 'passage_count'], ['f-length', '4k'], ['f-dmax', '0.9']];
        for (const [id, value] of wanted) {
            const element = document.getElementById(id);
            element.value = value;
            element.dispatchEvent(new Event('change'));
        }
        document.querySelector('#list th[data-key=score]').click();
        document.querySelector('#list th[data-key=score]').click();
    })()""")
    before = browser.js(
        "[...document.querySelectorAll('#list tbody tr')].map((tr) => tr.dataset.id)"
    )
    scores = browser.js(
        "[...document.querySelectorAll('#list tbody tr')].map((tr) => tr.cells[3].textContent)"
    )
    assert scores == sorted(scores, key=float, reverse=True) and len(before) >= 1
    browser.reload()
    browser.settle()
    assert "task=passage_count" in browser.js(
        "location.hash"
    ) and "sort=score&dir=desc" in browser.js("location.hash")
    assert browser.js(
        "['f-task', 'f-length', 'f-dmax'].map((id) => document.getElementById(id).value)"
    ) == ["passage_count", "4k", "0.9"]
    assert (
        browser.js("[...document.querySelectorAll('#list tbody tr')].map((tr) => tr.dataset.id)")
        == before
    )


@pytest.mark.parametrize("window", WINDOWS)
def test_two_models_side_by_side(browser: Browser, page: Path, window: str):
    visit(browser, page, window, "#compare")
    header = browser.js(
        "[...document.querySelectorAll('#compare thead th')].map((th) => th.textContent)"
    )
    assert header == ["task", "length", *MODELS]
    links = browser.js(
        "[...document.querySelectorAll('#compare a')].map((a) => a.getAttribute('href'))"
    )
    assert "#samples?model=1&task=kv_retrieval&length=8k" in links
    notes = browser.js("document.getElementById('compare-notes').textContent")
    assert "model-a, overall S_6k: kv_retrieval" in notes and "no graded samples at 6k" in notes
    go(browser, "#samples?model=1&task=single_doc_qa&length=8k&open=single_doc_qa-8k-0001")
    side = browser.js(
        "[...document.querySelectorAll('#side-by-side > div')].map((d) => d.textContent)"
    )
    assert side == [f"{model} · 0.0{WRONG[model]}" for model in MODELS]
    assert browser.js("document.querySelectorAll('[onmouseover], #detail b').length") == 0
    assert browser.js("document.getElementById('detail-prediction').className") == "box wrong"
    go(browser, "#curves")
    assert (
        browser.js("document.querySelectorAll('#charts .chart').length") == 4
    )  # overall and three tasks
    assert (
        browser.js("document.querySelectorAll('#charts svg path[stroke]').length") == 8
    )  # a line per model each
