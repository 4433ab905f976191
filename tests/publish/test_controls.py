"""``publish --controls``: the control twins as configs of their own, read back exactly, checked by
the snapshot's checksums, and left out without the flag."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from longbench100.folders.layout import sealed_manifest
from longbench100.publish.parquet import TWIN_COLUMNS
from tests.publish.test_snapshot import cli, jsonl
from tests.support.generate_helpers import assert_one_line_error, generate_from_demo, tree

TASKS = ("kv_retrieval", "counting_stars", "single_doc_qa", "json_kv", "common_words")
LABELS = (("2k", 2048), ("3000", 3000))
KINDS = {"gold_removed", "context_swapped"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small data folder with its control twins, from the packaged demo sources: three paper
    tasks and two synthetic ones (whose twins fill the gold's room from their own text)."""
    out = generate_from_demo(tmp_path_factory.mktemp("publish-controls") / "out", TASKS, LABELS, 3)
    assert (out / "controls").is_dir()
    return out


def _publish(data: Path, target: Path, *flags: str) -> Path:
    code, out, err = cli("publish", "--data", str(data), "--out", str(target), *flags)
    assert code == 0, out + err
    return target


@pytest.fixture(scope="module")
def plain(generated: Path) -> Path:
    return _publish(generated, generated.parent / "plain", "--quiet")


@pytest.fixture(scope="module")
def with_twins(generated: Path) -> Path:
    return _publish(generated, generated.parent / "with-twins", "--quiet", "--controls")


def _twin_files(folder: Path) -> dict[str, list[dict]]:
    """The folder's twin records by ``<task>/<label>``."""
    return {
        f"{task}/{label}": jsonl(folder / "controls" / task / f"{label}.jsonl")
        for task in TASKS
        for label, _ in LABELS
    }


def _card_header(snapshot: Path) -> dict:
    return yaml.safe_load((snapshot / "README.md").read_text(encoding="utf-8").split("---\n")[1])


def test_without_the_flag_nothing_of_the_twins_is_written_and_the_card_says_so(
    generated: Path, plain: Path
):
    files = tree(plain)
    assert not [name for name in files if name.startswith("controls/")]
    assert [config["config_name"] for config in _card_header(plain)["configs"]] == list(TASKS)
    card = files["README.md"].decode()
    assert "This snapshot holds no control twins" in card and "publish --controls" in card
    manifest = json.loads(files["manifest.json"])
    assert manifest["control_twins"] is False
    assert not [
        entry for entry in manifest["files"].values() if "controls/" in entry.get("source", "")
    ]


def test_with_the_flag_the_data_files_are_the_same_bytes(plain: Path, with_twins: Path):
    first, second = tree(plain), tree(with_twins)
    data = sorted(name for name in first if name.startswith("data/"))
    assert data and all(first[name] == second[name] for name in data)
    twins = sorted(name for name in second if name.startswith("controls/"))
    assert twins == sorted(
        f"controls/{task}/{label}.parquet" for task in TASKS for label, _ in LABELS
    )


def test_every_config_loads_back_with_datasets_as_the_folder_holds_it(
    generated: Path, with_twins: Path, offline_datasets: Path
):
    import datasets

    names = datasets.get_dataset_config_names(str(with_twins))
    assert names == list(TASKS) + [f"{task}_controls" for task in TASKS]
    twins = _twin_files(generated)
    absent = dict.fromkeys(
        TWIN_COLUMNS.optional
    )  # a kind's own key is null in the other kind's rows
    for task in TASKS:
        for label, _ in LABELS:
            data = datasets.load_dataset(
                str(with_twins), task, split=label, cache_dir=str(offline_datasets)
            )
            assert list(data) == jsonl(generated / task / f"{label}.jsonl")
            loaded = datasets.load_dataset(
                str(with_twins), f"{task}_controls", split=label, cache_dir=str(offline_datasets)
            )
            assert loaded.features["control"] == datasets.Value("string")
            assert loaded.features["twin_of"] == datasets.Value("string")
            assert isinstance(loaded.features["gold"], dict)  # typed like the data rows
            expected = twins[f"{task}/{label}"]
            assert list(loaded) == [{**absent, **twin} for twin in expected]
            assert [(row["id"], row["control"], row["twin_of"]) for row in loaded] == [
                (twin["id"], twin["control"], twin["twin_of"]) for twin in expected
            ]
            assert {row["control"] for row in loaded} == KINDS
            assert {row["twin_of"] for row in loaded} == {row["id"] for row in data}


def test_the_card_declares_the_twin_configs_with_their_checksums(generated: Path, with_twins: Path):
    import datasets

    header = _card_header(with_twins)
    configs = {config["config_name"]: config for config in header["configs"]}
    assert configs[TASKS[0]].get("default") is True
    for task in TASKS:
        assert configs[f"{task}_controls"]["data_files"] == [
            {"split": label, "path": f"controls/{task}/{label}.parquet"} for label, _ in LABELS
        ]
    infos = {info["config_name"]: info for info in header["dataset_info"]}
    features = datasets.Features._from_yaml_list(infos["json_kv_controls"]["features"])
    assert list(features)[:3] == ["id", "control", "twin_of"]
    assert [split["num_examples"] for split in infos["json_kv_controls"]["splits"]] == [
        len(jsonl(generated / "controls" / "json_kv" / f"{label}.jsonl")) for label, _ in LABELS
    ]
    card = (with_twins / "README.md").read_text(encoding="utf-8")
    generation = json.loads((generated / "manifest.json").read_text())
    for relative, entry in generation["controls"]["files"].items():
        parquet = relative.removesuffix(".jsonl") + ".parquet"
        digest = hashlib.sha256((with_twins / parquet).read_bytes()).hexdigest()
        assert f"| `{parquet}` |" in card and f"`{digest}` | `{entry['sha256']}` |" in card
    assert 'load_dataset("path/to/snapshot", "kv_retrieval_controls", split="2k")' in card
    assert "--controls" in card.split("## Scoring a model")[1]


def test_publishing_with_twins_twice_gives_identical_files(
    generated: Path, with_twins: Path, tmp_path: Path
):
    again = _publish(generated, tmp_path / "again", "--quiet", "--controls")
    assert tree(again) == tree(with_twins)


def test_verify_and_unpack_cover_the_twins(
    generated: Path, plain: Path, with_twins: Path, tmp_path: Path
):
    manifest = json.loads((with_twins / "manifest.json").read_text())
    assert manifest["control_twins"] is True
    for task in TASKS:
        entry = manifest["files"][f"controls/{task}/2k.parquet"]
        assert entry["source"] == f"controls/{task}/2k.jsonl"
        assert (
            entry["source_sha256"]
            == manifest["generation"]["controls"]["files"][entry["source"]]["sha256"]
        )
    code, out, err = cli("verify-snapshot", str(with_twins), "--unpack-to", str(tmp_path / "full"))
    assert code == 0, err
    original = {name: data for name, data in tree(generated).items() if not name.startswith(".")}
    assert tree(tmp_path / "full") == original
    code, _, err = cli("verify-snapshot", str(plain), "--unpack-to", str(tmp_path / "data-only"))
    assert code == 0, err
    assert tree(tmp_path / "data-only") == {
        name: data for name, data in original.items() if not name.startswith("controls/")
    }


def test_a_tampered_twin_file_is_detected(with_twins: Path, tmp_path: Path):
    import pyarrow.parquet as pq

    from longbench100.publish import parquet

    copy = tmp_path / "copy"
    shutil.copytree(with_twins, copy)
    target = copy / "controls" / "kv_retrieval" / "2k.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    code, _, err = cli("verify-snapshot", str(copy))
    assert (code, err) == (
        1,
        "error: controls/kv_retrieval/2k.parquet: changed (sha256 differs from manifest.json)\n",
    )
    # A forged file: one twin's kind changed, and the snapshot's checksum list updated to match it.
    records = list(parquet.read_records(with_twins / "controls" / "kv_retrieval" / "2k.parquet"))
    records[0] = {**records[0], "control": "context_swapped"}
    forged = tmp_path / "2k.jsonl"
    forged.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
    kept = pq.read_schema(with_twins / "controls" / "kv_retrieval" / "2k.parquet")
    parquet.write_parquet(forged, target, "kv_retrieval", "2k", kept, TWIN_COLUMNS)
    manifest = json.loads((copy / "manifest.json").read_text())
    entry = manifest["files"]["controls/kv_retrieval/2k.parquet"]
    entry["sha256"] = hashlib.sha256(target.read_bytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2))
    code, _, err = cli("verify-snapshot", str(copy))
    assert code == 1 and err.startswith(
        "error: controls/kv_retrieval/2k.jsonl: the records rebuilt"
    )


def test_controls_without_twins_or_with_edited_twins_is_a_one_line_error(
    generated: Path, tmp_path: Path
):
    bare = tmp_path / "bare"  # as generate --no-controls leaves it
    shutil.copytree(generated, bare)
    shutil.rmtree(bare / "controls")
    manifest = json.loads((bare / "manifest.json").read_text())
    del manifest["controls"]
    (bare / "manifest.json").write_text(json.dumps(sealed_manifest(manifest), indent=2))
    code, out, err = cli(
        "publish", "--data", str(bare), "--out", str(tmp_path / "s1"), "--controls"
    )
    assert (code, out) == (2, "") and err == (
        f"error: --controls: {bare} holds no control twins (its manifest.json lists none); "
        "generate writes them unless --no-controls\n"
    )
    assert not (tmp_path / "s1").exists()

    edited = tmp_path / "edited"
    shutil.copytree(generated, edited)
    twin = edited / "controls" / "json_kv" / "2k.jsonl"
    twin.write_text(twin.read_text().replace("gold_removed", "context_swapped", 1))
    code, _, err = cli(
        "publish", "--data", str(edited), "--out", str(tmp_path / "s2"), "--controls"
    )
    assert_one_line_error(code, err, "controls/json_kv/2k.jsonl differs from manifest.json")
    twin.unlink()
    code, _, err = cli(
        "publish", "--data", str(edited), "--out", str(tmp_path / "s2"), "--controls"
    )
    assert_one_line_error(
        code, err, "controls/json_kv/2k.jsonl is listed in manifest.json but missing"
    )
    code, _, err = cli("publish", "--data", str(edited), "--out", str(tmp_path / "s2"), "--quiet")
    assert code == 0, err  # without --controls the twins are not read


def test_the_inspect_task_reads_twins_from_a_snapshot_as_from_its_folder(
    generated: Path, plain: Path, with_twins: Path
):
    pytest.importorskip("inspect_ai")
    from longbench100.core.errors import UserError
    from longbench100.integrations.inspect_tasks import selected_records

    def ids(data: Path, controls: bool) -> list[str]:
        return [record.id for record, _ in selected_records(data, controls=controls)[0]]

    assert ids(with_twins, False) == ids(plain, False) == ids(generated, False)
    assert ids(with_twins, True) == ids(generated, True)
    assert len(ids(generated, True)) > len(ids(generated, False))
    with pytest.raises(UserError, match="published without its control twins; publish it again"):
        selected_records(plain, controls=True)


def test_commands_that_read_data_folders_point_a_snapshot_to_its_unpacked_folder(
    generated: Path, with_twins: Path, tmp_path: Path
):
    for args in (
        [
            "predict",
            *("--data", str(with_twins), "--model", "m", "--out", str(tmp_path / "p")),
            *("--base-url", "http://127.0.0.1:9/v1", "--controls"),
        ],
        [
            "score",
            "--data",
            str(with_twins),
            "--predictions",
            str(tmp_path / "predictions"),
            "--controls",
            "--out",
            str(tmp_path / "r.json"),
        ],
        ["export", "lm-eval", str(with_twins), str(tmp_path / "lm"), "--controls"],
    ):
        code, out, err = cli(*args)
        assert_one_line_error(
            code, out + err, "a published snapshot, not a data folder", "--unpack-to DATA"
        )
    unpacked = tmp_path / "data"
    code, _, err = cli("verify-snapshot", str(with_twins), "--unpack-to", str(unpacked))
    assert code == 0, err
    exports = {}
    for name, folder in (("folder", generated), ("snapshot", unpacked)):
        code, _, err = cli("export", "lm-eval", str(folder), str(tmp_path / name), "--controls")
        assert code == 0, err
        exports[name] = tree(tmp_path / name)
    assert [name for name in exports["folder"] if name.endswith("_controls.yaml")]
    assert exports["folder"] == exports["snapshot"]
