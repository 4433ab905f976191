"""Chance levels are worked out once per task and read back from the cache: the same figures as
worked out afresh, a second reading does not work them out again, and edited data, a changed
metric, changed code or a damaged entry are worked out afresh."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from longbench100.baselines import chance_cache, check
from longbench100.folders.layout import MANIFEST, read_folder_manifest
from tests.support.generate_helpers import generate

TASKS = "single_doc_qa,multi_doc_sum,counting_stars"


@pytest.fixture(scope="module")
def generated(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small data folder with its twins (so its manifest holds the chance levels)."""
    out = tmp_path_factory.mktemp("chances") / "out"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LONGBENCH100_CACHE", str(tmp_path_factory.mktemp("chance-cache")))
        generate(
            out, "--tasks", TASKS, "--lengths", "2k,4k", "--rows", "3", "--sources", str(mirror)
        )
    return out


@pytest.fixture
def folder(generated: Path, tmp_path: Path, monkeypatch) -> Path:
    """A copy of the folder without its manifest (as ``generate`` reads it before writing one)."""
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path / "cache"))
    copy = tmp_path / "data"
    shutil.copytree(generated, copy, ignore=shutil.ignore_patterns("controls"))
    (copy / MANIFEST).unlink()
    return copy


@pytest.fixture
def worked_out(monkeypatch) -> list[str]:
    """The tasks whose chance levels are worked out (not read back), in order."""
    calls: list[str] = []
    original = check._files_chances

    def spy(files, seen, families):
        calls.append(files[0].task)
        return original(files, seen, families)

    monkeypatch.setattr(check, "_files_chances", spy)
    return calls


def _families(generated: Path) -> dict[str, str]:
    manifest = read_folder_manifest(generated)
    assert manifest is not None
    return manifest["suite"]["metrics"]


def _recorded(generated: Path) -> dict:
    return json.loads((generated / MANIFEST).read_text(encoding="utf-8"))["controls"]["chance"]


def test_a_second_reading_reads_the_figures_back_equal_to_the_uncached_ones(
    generated: Path, folder: Path, worked_out: list[str]
) -> None:
    families = _families(generated)
    first = check.cell_chances(folder, families)
    assert sorted(worked_out) == sorted(TASKS.split(","))
    assert first == _recorded(generated)  # the figures generate wrote, worked out afresh
    assert any(chance > 0 for labels in first.values() for chance in labels.values())
    worked_out.clear()
    second = check.cell_chances(folder, families)
    assert worked_out == []
    assert json.dumps(second) == json.dumps(first)  # same figures, same order


def test_an_edited_data_file_is_worked_out_again_for_its_task_only(
    generated: Path, folder: Path, worked_out: list[str]
) -> None:
    families = _families(generated)
    check.cell_chances(folder, families)
    edited = folder / "single_doc_qa" / "4k.jsonl"
    lines = edited.read_text(encoding="utf-8").splitlines(keepends=True)
    edited.write_text("".join(lines[:-1]), encoding="utf-8")  # one row fewer
    worked_out.clear()
    cached = check.cell_chances(folder, families)
    assert worked_out == ["single_doc_qa"]
    shutil.rmtree(folder.parent / "cache")
    assert cached == check.cell_chances(folder, families)  # the figures of the edited data


def test_another_metric_or_changed_code_is_worked_out_again(
    generated: Path, folder: Path, worked_out: list[str], monkeypatch
) -> None:
    families = _families(generated)
    check.cell_chances(folder, families)
    worked_out.clear()
    check.cell_chances(folder, {**families, "single_doc_qa": "rouge_l"})
    assert worked_out == ["single_doc_qa"]
    worked_out.clear()
    monkeypatch.setattr(chance_cache, "chance_code_digest", lambda: "other code")
    check.cell_chances(folder, families)
    assert sorted(worked_out) == sorted(TASKS.split(","))


def test_the_code_digest_follows_the_chance_code_and_nothing_else(
    tmp_path: Path, monkeypatch
) -> None:
    for package in ("baselines", "tasks"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "rule.py").write_text("LIMIT = 1\n", encoding="utf-8")
    monkeypatch.setattr(chance_cache, "PACKAGE", tmp_path)

    def digest() -> str:
        chance_cache.chance_code_digest.cache_clear()
        return chance_cache.chance_code_digest()

    before = digest()
    (tmp_path / "tasks" / "rule.py").write_text("LIMIT = 2\n", encoding="utf-8")
    assert digest() == before  # not code chance depends on
    (tmp_path / "baselines" / "rule.py").write_text("LIMIT = 2\n", encoding="utf-8")
    assert digest() != before
    chance_cache.chance_code_digest.cache_clear()


def test_a_damaged_entry_is_worked_out_again(
    generated: Path, folder: Path, worked_out: list[str]
) -> None:
    families = _families(generated)
    first = check.cell_chances(folder, families)
    entries = sorted((folder.parent / "cache" / "chances").glob("*.json"))
    assert len(entries) == len(TASKS.split(","))
    entries[0].write_text("[not json", encoding="utf-8")
    entries[1].write_text(json.dumps([["4k", "high"]]), encoding="utf-8")
    worked_out.clear()
    assert check.cell_chances(folder, families) == first
    assert len(worked_out) == 2


def test_the_data_files_digests_given_key_the_cache_as_the_files_read(
    generated: Path, folder: Path, worked_out: list[str], monkeypatch
) -> None:
    families = _families(generated)
    manifest = read_folder_manifest(generated)
    assert manifest is not None
    digests = {
        tuple(path.removesuffix(".jsonl").split("/")): entry["sha256"]
        for path, entry in manifest["files"].items()
    }
    assert len(digests) == 6
    first = check.cell_chances(folder, families, digests)
    assert len(worked_out) == 3
    read: list[Path] = []
    original = chance_cache.file_sha256

    def reading(path: Path) -> str:
        read.append(path)
        return original(path)

    monkeypatch.setattr(chance_cache, "file_sha256", reading)
    assert check.cell_chances(folder, families) == first  # read back under the files' own digests
    assert len(worked_out) == 3 and len(read) == 6
    assert check.cell_chances(folder, families, digests) == first and len(read) == 6
    wrong = {cell: "0" * 64 for cell in digests}
    check.cell_chances(folder, families, wrong)
    assert len(worked_out) == 6  # other digests, another entry
