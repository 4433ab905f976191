"""What the generator tests share: run ``generate`` through the CLI, read records back, snapshot a folder."""

from __future__ import annotations

import json
import signal
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.layout import sealed_manifest
from longbench100.generate.manifest import FINISHED_LOG
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate
from longbench100.text.tokenization import load_tokenizer


def generate(out: Path, *args: str) -> Path:
    """Run ``longbench100 generate --out OUT`` on one worker, quietly (a later ``--workers`` in ``args`` wins); assert it succeeded."""
    result = CliRunner().invoke(
        main, ["generate", "--out", str(out), "--workers", "1", "--quiet", *args]
    )
    assert result.exit_code == 0, result.output
    return out


def generate_annotated(
    tmp_path_factory, name: str, cache: str, annotator_url: str, *args: str
) -> Path:
    """Run ``generate --suite ethic`` with a stub annotator at ``annotator_url`` into a fresh folder ``name``, with the
    session's cache folder ``cache`` (a module fixture runs outside the per-test cache); assert it succeeded."""
    out = tmp_path_factory.mktemp(name) / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LONGBENCH100_CACHE", str(tmp_path_factory.getbasetemp() / cache))
        result = CliRunner().invoke(
            main,
            [
                "generate",
                "--quiet",
                "--suite",
                "ethic",
                "--out",
                str(out),
                *args,
                "--annotator-model",
                "stub-model",
                "--annotator-base-url",
                annotator_url,
            ],
        )
    assert result.exit_code == 0, result.output
    return out


def records(folder: Path, task: str, label: str) -> list[dict]:
    """The records of ``folder/<task>/<label>.jsonl``, in file order."""
    return [
        json.loads(line)
        for line in (folder / task / f"{label}.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def assert_prompts_fit(rows: list[dict], budget: int, min_median_fill: float) -> None:
    """Recount every prompt with cl100k: the count matches the record's ``prompt_tokens``, none is over
    ``budget`` and the median prompt fills at least ``min_median_fill`` of it."""
    tokenizer = load_tokenizer("cl100k_base")
    counts = [tokenizer.count(row["prompt"]) for row in rows]
    assert counts == [row["prompt_tokens"] for row in rows]
    assert max(counts) <= budget
    assert statistics.median(count / budget for count in counts) >= min_median_fill


def tree(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every file under ``root`` by relative path (files named in ``skip`` left out, and the run's
    note of the files it finished, whose lines a resumed run may hold in another order or without
    the one a crash cut off)."""
    skipped = (*skip, FINISHED_LOG)
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name not in skipped
    }


def terminal_signals() -> None:
    """``preexec_fn`` for a child that must react to Ctrl-C as under a terminal, even when the test run
    itself was started with SIGINT ignored (a background job of a non-interactive shell)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def record_template_variables(monkeypatch) -> dict[str, set[str]]:
    """Patch template rendering to record, per task, the variable names builders pass (run with one worker)."""
    from longbench100.fitting.templates import PromptTemplates

    passed: dict[str, set[str]] = {}
    render = PromptTemplates.render

    def recording(self, task: str, variables: dict) -> str:
        passed.setdefault(task, set()).update(variables)
        return render(self, task, variables)

    monkeypatch.setattr(PromptTemplates, "render", recording)
    return passed


def assert_examples_cover(passed: dict[str, set[str]]) -> None:
    """Every variable a builder passed appears in each of its task's example variables (the pre-run template check)."""
    from longbench100.fitting.templates import EXAMPLE_VARIABLES

    for task, names in passed.items():
        for example in EXAMPLE_VARIABLES[task]:
            assert names <= set(example), (task, names - set(example))


def reseal(folder: Path) -> None:
    """Record the current sha256 of every data file in ``folder``'s manifest, for a test that edits
    data on purpose (readers refuse a data file that differs from its manifest)."""
    import hashlib

    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for relative, entry in manifest["files"].items():
        entry["sha256"] = hashlib.sha256((folder / relative).read_bytes()).hexdigest()
    path.write_text(json.dumps(sealed_manifest(manifest), indent=2), encoding="utf-8")


def generate_in_process(
    out: Path,
    tasks: Sequence[str],
    lengths: tuple[tuple[str, int], ...],
    rows: int,
    *,
    sources: str,
    seed: int,
    **options: Any,
) -> Path:
    """Generate ``tasks`` at ``lengths`` from ``sources`` into ``out``, in this process, printing
    nothing (cl100k_base, one worker unless ``options`` say otherwise; ``options``: any further
    :class:`GenerateOptions` field)."""
    settings: dict[str, Any] = {"workers": 1, **options}
    run_generate(
        GenerateOptions(
            tasks=tuple(tasks),
            lengths=lengths,
            rows=rows,
            seed=seed,
            tokenizer="cl100k_base",
            out=out,
            sources=sources,
            **settings,
        ),
        echo=lambda _: None,
        progress=False,
    )
    return out


def generate_from_demo(
    out: Path, tasks: tuple[str, ...], lengths: tuple[tuple[str, int], ...], rows: int
) -> Path:
    """Generate ``tasks`` at ``lengths`` from the packaged demo sources into ``out``, in this
    process, on one worker, printing nothing (seed 1, cl100k_base)."""
    return generate_in_process(out, tasks, lengths, rows, sources="demo", seed=1)


def assert_one_line_error(code: int, output: str, *needles: str) -> None:
    """A user error: exit 2, exactly one ``error:`` line holding every needle, no traceback."""
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in output, output
    assert all(needle in errors[0] for needle in needles), errors[0]
