"""``publish`` and ``verify-snapshot`` on demo data: datasets round trip, reproducible bytes, card, tampering, unpack."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from longbench100.catalog.suites import DEFAULT_SUITE, load_suite
from longbench100.cli import main
from longbench100.core.lengths import parse_length_list
from longbench100.core.version import __version__
from longbench100.folders.layout import sealed_manifest
from longbench100.generate.options import GenerateOptions
from longbench100.generate.run import run_generate

PAPER_TASKS = load_suite(DEFAULT_SUITE).tasks  # the eight tasks of the paper

LABELS = ("2k", "4k")


def cli(*args: str) -> tuple[int, str, str]:
    """Run the command line in-process; return exit code, stdout and stderr."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def jsonl(path: Path) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real data folder: every task at 2k and 4k, 3 rows each, from the packaged demo sources."""
    base = tmp_path_factory.mktemp("publish")
    options = GenerateOptions(
        tasks=PAPER_TASKS,
        lengths=tuple(parse_length_list(",".join(LABELS))),
        rows=3,
        seed=7,
        tokenizer="cl100k_base",
        out=base / "out",
        sources="demo",
        workers=1,
        controls=False,
    )  # a snapshot holds the data files only
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LONGBENCH100_CACHE", str(base / "cache"))
        run_generate(options, echo=lambda _: None, progress=False)
    return base / "out"


@pytest.fixture(scope="module")
def snapshot(generated: Path) -> Path:
    target = generated.parent / "snapshot"
    code, out, err = cli("publish", "--data", str(generated), "--out", str(target), "--quiet")
    assert code == 0, out + err
    assert f"snapshot {target}: 48 rows in 16 Parquet files (8 configs)" in out
    return target


def test_datasets_loads_every_config_and_split_with_the_source_rows(
    generated: Path, snapshot: Path, offline_datasets: Path
):
    import datasets

    assert datasets.get_dataset_config_names(str(snapshot)) == list(PAPER_TASKS)
    for task in PAPER_TASKS:
        loaded = datasets.load_dataset(str(snapshot), task, cache_dir=str(offline_datasets))
        assert list(loaded) == list(LABELS)
        for label in LABELS:
            split = datasets.load_dataset(
                str(snapshot), task, split=label, cache_dir=str(offline_datasets)
            )
            assert split.features["answers"] == datasets.List(datasets.Value("string"))
            assert isinstance(split.features["gold"], dict)  # typed, not JSON text
            assert split.features["distractors"] == datasets.List(
                {
                    "source": datasets.Value("string"),
                    "id": datasets.Value("string"),
                    "truncated": datasets.Value("bool"),
                }
            )
            assert list(split) == jsonl(generated / task / f"{label}.jsonl")


def test_datasets_loads_the_default_config_without_a_name(
    generated: Path, snapshot: Path, offline_datasets: Path
):
    import datasets

    loaded = datasets.load_dataset(str(snapshot), cache_dir=str(offline_datasets))
    assert list(loaded) == list(LABELS)
    assert list(loaded["2k"]) == jsonl(generated / PAPER_TASKS[0] / "2k.jsonl")


def test_card_metadata_reads_back_with_huggingface_hub(generated: Path, snapshot: Path):
    import datasets
    from huggingface_hub import DatasetCard

    data = DatasetCard.load(snapshot / "README.md", ignore_metadata_errors=False).data
    assert data.license == "other" and data.license_link == "README.md#source-datasets-and-licenses"
    assert data.source_datasets is None  # the demo sources are packaged, not hub repositories
    assert [config.get("default", False) for config in data.configs] == [True] + [False] * (
        len(PAPER_TASKS) - 1
    )
    infos = {info["config_name"]: info for info in data.dataset_info}
    assert sorted(infos) == sorted(PAPER_TASKS)
    kv = infos["kv_retrieval"]
    assert [(split["name"], split["num_examples"]) for split in kv["splits"]] == [
        (label, 3) for label in LABELS
    ]
    features = datasets.Features._from_yaml_list(kv["features"])
    assert features["gold"]["chain"] == datasets.List(datasets.Value("string"))
    assert kv["download_size"] == sum(
        (snapshot / "data" / "kv_retrieval" / f"{label}.parquet").stat().st_size for label in LABELS
    )


def test_publishing_twice_gives_identical_files(generated: Path, snapshot: Path, tmp_path: Path):
    again = tmp_path / "elsewhere" / "snapshot-2"
    code, _, err = cli("publish", "--data", str(generated), "--out", str(again), "--quiet")
    assert code == 0, err
    first, second = tree(snapshot), tree(again)
    assert sorted(first) == sorted(
        ["README.md", "generation-manifest.json", "manifest.json"]
        + [f"data/{task}/{label}.parquet" for task in PAPER_TASKS for label in LABELS]
    )
    assert first == second
    for name in ("README.md", "manifest.json"):
        text = first[name].decode()
        assert not re.search(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", text), f"{name} holds a timestamp"
        assert str(snapshot) not in text and str(generated) not in text
    assert not [path for path in again.parent.iterdir() if path.name.startswith(".")], (
        "staging folder left behind"
    )


def test_card_declares_configs_and_describes_provenance(generated: Path, snapshot: Path):
    card = (snapshot / "README.md").read_text(encoding="utf-8")
    _, header_text, body = card.split("---\n", 2)
    header = yaml.safe_load(header_text)
    assert [config["config_name"] for config in header["configs"]] == list(PAPER_TASKS)
    for config in header["configs"]:
        assert config["data_files"] == [
            {"split": label, "path": f"data/{config['config_name']}/{label}.parquet"}
            for label in LABELS
        ]
    assert header["license"] == "other" and header["size_categories"] == ["n<1K"]
    generation = json.loads((generated / "manifest.json").read_text())
    assert f"written by longbench100 {generation['version']}" in body
    assert "Seed 7, 3 rows requested" in body and f"`{generation['tokenizer']['spec']}`" in body
    assert generation["tokenizer"]["identity"] in body
    for name, source in generation["sources"].items():
        assert (
            f"| {name} | `{source['repo_id']}` | `{source['revision']}` | {source['license']} |"
            in body
        )
        for digest in source["files"].values():
            assert digest in body
    assert "--lengths 2k,4k --rows 3 --seed 7 --tokenizer cl100k_base" in body
    assert "longbench100 predict --data data" in body and "longbench100 score --data data" in body
    assert "| `gold` | struct |" in body and "`json.loads`" not in body  # all demo columns typed
    assert 'load_dataset("path/to/snapshot", "kv_retrieval", split="2k")' in body


def test_manifest_holds_generation_manifest_and_checksums(generated: Path, snapshot: Path):
    manifest = json.loads((snapshot / "manifest.json").read_text())
    assert (snapshot / "generation-manifest.json").read_bytes() == (
        generated / "manifest.json"
    ).read_bytes()
    assert manifest["generation"] == json.loads((generated / "manifest.json").read_text())
    assert manifest["published_with"]["version"] == __version__ and manifest["empty_splits"] == []
    for relative, entry in manifest["files"].items():
        assert entry["sha256"] == hashlib.sha256((snapshot / relative).read_bytes()).hexdigest()
    entry = manifest["files"]["data/single_doc_qa/4k.parquet"]
    assert entry["rows"] == 3 and entry["source"] == "single_doc_qa/4k.jsonl"
    assert (
        entry["source_sha256"]
        == manifest["generation"]["files"]["single_doc_qa/4k.jsonl"]["sha256"]
    )


def test_verify_snapshot_names_the_first_changed_or_missing_file(snapshot: Path, tmp_path: Path):
    copy = tmp_path / "copy"
    shutil.copytree(snapshot, copy)
    code, out, _ = cli("verify-snapshot", str(copy))
    assert code == 0 and "all 18 files match" in out
    later = copy / "data" / "multi_doc_sum" / "4k.parquet"
    data = bytearray(later.read_bytes())
    data[len(data) // 2] ^= 0xFF
    later.write_bytes(bytes(data))
    (copy / "data" / "kv_retrieval" / "4k.parquet").unlink()
    code, _, err = cli("verify-snapshot", str(copy))
    assert code == 1 and err == f"error: data/kv_retrieval/4k.parquet: missing from {copy}\n"
    shutil.copy(
        snapshot / "data" / "kv_retrieval" / "4k.parquet",
        copy / "data" / "kv_retrieval" / "4k.parquet",
    )
    code, _, err = cli("verify-snapshot", str(copy))
    assert (
        code == 1
        and err
        == "error: data/multi_doc_sum/4k.parquet: changed (sha256 differs from manifest.json)\n"
    )
    (copy / "README.md").write_text("edited\n")
    code, _, err = cli("verify-snapshot", str(copy))
    assert code == 1 and err.startswith("error: README.md: changed")


def test_unpack_rebuilds_the_data_folder_byte_for_byte(
    generated: Path, snapshot: Path, tmp_path: Path
):
    rebuilt = tmp_path / "data"
    code, out, err = cli("verify-snapshot", str(snapshot), "--unpack-to", str(rebuilt))
    assert code == 0, err
    assert f"rebuilt {rebuilt}: 48 records" in out
    original = {name: data for name, data in tree(generated).items() if not name.startswith(".")}
    assert tree(rebuilt) == original


def test_empty_data_file_gets_no_split(generated: Path, tmp_path: Path, offline_datasets: Path):
    import datasets

    data = tmp_path / "out"
    shutil.copytree(generated, data)
    (data / "passage_count" / "4k.jsonl").write_bytes(b"")
    manifest = json.loads((data / "manifest.json").read_text())
    manifest["files"]["passage_count/4k.jsonl"] = {
        "sha256": hashlib.sha256(b"").hexdigest(),
        "rows": 0,
    }
    (data / "manifest.json").write_text(json.dumps(sealed_manifest(manifest), indent=2))
    snapshot = tmp_path / "snapshot"
    code, out, err = cli(
        "publish", "--data", str(data), "--out", str(snapshot), "--name", "Tiny demo"
    )
    assert code == 0, err
    assert "skipped passage_count/4k.jsonl: no rows" in out
    assert not (snapshot / "data" / "passage_count" / "4k.parquet").exists()
    card = (snapshot / "README.md").read_text()
    assert card.startswith("---\npretty_name: Tiny demo\n") and "`passage_count` 4k." in card
    loaded = datasets.load_dataset(str(snapshot), "passage_count", cache_dir=str(offline_datasets))
    assert list(loaded) == ["2k"]
    rebuilt = tmp_path / "rebuilt"
    code, _, err = cli("verify-snapshot", str(snapshot), "--unpack-to", str(rebuilt))
    assert code == 0, err
    assert (rebuilt / "passage_count" / "4k.jsonl").read_bytes() == b""


def test_row_groups_are_bounded_by_bytes_so_long_splits_stay_viewable(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import pyarrow.parquet as pq

    from longbench100.publish import parquet

    # The hub viewer reads a row group only under 286 MiB uncompressed; a 1M-token prompt is about
    # 4 MiB of text (under 8 MiB even at 8 bytes a token): the byte bound leaves room for one more.
    assert parquet.ROW_GROUP_BYTES + 8 * 2**20 < 286 * 2**20
    monkeypatch.setattr(
        parquet, "ROW_GROUP_BYTES", 2**20
    )  # the same mechanism at 1/64 of the scale
    record = jsonl(generated / "single_doc_qa" / "2k.jsonl")[0]
    lines = []
    for row in range(20):  # 20 records of ~300 KiB: a 64-row group would hold ~6 MiB
        long_record = {
            **record,
            "row": row,
            "prompt": f"{row} " + "A long passage of text. " * 12_800,
        }
        lines.append(json.dumps(long_record, ensure_ascii=False) + "\n")
    source = tmp_path / "2k.jsonl"
    source.write_text("".join(lines), encoding="utf-8")
    schema = parquet.arrow_schema(parquet.structured_types([source]))
    assert (
        parquet.write_parquet(source, tmp_path / "2k.parquet", "single_doc_qa", "2k", schema) == 20
    )
    metadata = pq.read_metadata(tmp_path / "2k.parquet")
    sizes = [metadata.row_group(index).total_byte_size for index in range(metadata.num_row_groups)]
    assert len(sizes) >= 6 and max(sizes) <= 2**20
    assert [dict(back) for back in parquet.read_records(tmp_path / "2k.parquet")] == [
        json.loads(line) for line in lines
    ]


def test_a_column_that_would_not_come_back_unchanged_stays_json_text(tmp_path: Path):
    import pyarrow as pa

    from longbench100.publish.parquet import structured_types

    def write(name: str, golds: list[dict]) -> Path:
        path = tmp_path / name
        path.write_text(
            "".join(json.dumps({"gold": gold, "distractors": []}) + "\n" for gold in golds)
        )
        return path

    typed = structured_types(
        [write("a.jsonl", [{"depth": 0.5, "passages": [1]}, {"depth": 0.25, "passages": []}])]
    )
    assert typed["gold"] == pa.struct([("depth", pa.float64()), ("passages", pa.list_(pa.int64()))])
    assert typed["distractors"] == pa.list_(
        pa.null()
    )  # only empty lists: datasets reads List(Value("null"))
    for golds in (
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
        [{"a": 1}, {"b": 2}],
        [{"x": 1}, {"x": 1.5}],
        [{"spans": {}}, {"spans": {}}],
    ):  # Parquet has no struct without fields
        assert structured_types([write("b.jsonl", golds)])["gold"] == pa.string(), golds
