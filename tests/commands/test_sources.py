"""``longbench100 sources list`` and ``sources verify`` as a user runs them."""

from pathlib import Path

from click.testing import CliRunner

from longbench100.cli import main
from longbench100.core.paths import packaged_dir
from longbench100.sources.registry import load_registry
from tests.support.fixture_mirror import write_mirror

REGISTRY = load_registry(packaged_dir("sources"))
PRIMARY = sum(
    1 for entry in REGISTRY.values() if not entry.stand_in_for
)  # stand-ins stay unused when all sources are there


def test_list_shows_every_entry_with_roles_and_availability(tmp_path: Path) -> None:
    mirror = write_mirror(tmp_path / "m", only={"cnn_dailymail", "qmsum"})
    result = CliRunner().invoke(main, ["sources", "list", "--sources", str(mirror), "--counts"])
    assert result.exit_code == 0, result.output
    lines = {line.split()[1]: line for line in result.output.splitlines()[1:]}
    assert len(lines) == len(REGISTRY)
    assert (
        "available" in lines["cnn_dailymail"]
        and "passage_retrieval(real,noisy)" in lines["cnn_dailymail"]
    )
    assert "[12 docs, 12 items]" in lines["cnn_dailymail"]
    assert "missing" in lines["hotpotqa"]
    for (
        name,
        entry,
    ) in REGISTRY.items():  # each entry's pinned commit, or a warning where it has none
        pinned = len(entry.revision) == 40
        assert (
            f"{entry.repo_id}@{entry.revision[:12]}" if pinned else "@main (NOT PINNED)"
        ) in lines[name]
    assert (
        "zai-org/LongBench@5e628be450b7" in lines["hotpotqa"]
        and "NOT PINNED" in lines["financial_qa"]
    )


def test_verify_prints_counts_and_token_lengths_and_uses_the_cache(mirror: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(main, ["sources", "verify", "--sources", str(mirror)])
    assert first.exit_code == 0, first.output
    row = next(line for line in first.output.splitlines() if " hotpotqa " in line).split()
    assert row[2:6] == ["48", "12", "0", "0"]  # docs, items, empty, duplicates
    assert int(row[6]) <= int(row[7]) <= int(row[8])
    assert f"{PRIMARY} sources loaded, 0 missing, 0 malformed" in first.output
    assert any(
        line.startswith("cleaned ") and "texts changed" in line
        for line in first.output.splitlines()
    )
    second = runner.invoke(main, ["sources", "verify", "--sources", str(mirror)])
    assert all(
        line.endswith("hit")
        for line in second.output.splitlines()
        if line.split()[1:2] and line.split()[1] == "hotpotqa"
    )
    assert "loaded from" not in second.output  # all counts cached: the tokenizer was never needed


def test_verify_fails_on_a_malformed_source_and_on_missing_with_strict(tmp_path: Path) -> None:
    mirror = write_mirror(tmp_path / "m", only={"financial_qa", "cnn_dailymail"})
    path = mirror / "L4NLP" / "LEval" / "LEval" / "Generation" / "financial_qa.jsonl"
    path.write_text(path.read_text() + "{broken\n")
    result = CliRunner().invoke(main, ["sources", "verify", "--sources", str(mirror)])
    assert result.exit_code == 1
    assert (
        "MALFORMED" in result.output
        and "financial_qa.jsonl line 13: malformed JSON" in result.output
    )
    healthy = write_mirror(tmp_path / "h", only={"cnn_dailymail"})
    assert CliRunner().invoke(main, ["sources", "verify", "--sources", str(healthy)]).exit_code == 0
    strict = CliRunner().invoke(main, ["sources", "verify", "--sources", str(healthy), "--strict"])
    assert strict.exit_code == 1 and "missing" in strict.output


def test_bad_sources_folder_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["sources", "verify", "--sources", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "no such folder" in result.output
