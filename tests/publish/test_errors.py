"""``publish`` and ``verify-snapshot`` on hand-written data: one-line user errors, and push refused before any work."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from longbench100.cli import main
from longbench100.folders.layout import sealed_manifest


def cli(*args: str) -> tuple[int, str, str]:
    """Run the command line in-process; return exit code, stdout and stderr."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def record(task: str, label: str, row: int) -> dict:
    """A data record in docs/schema.md's key order."""
    return {
        "id": f"{task}-{label}-{row:04d}",
        "task": task,
        "length": 2048,
        "label": label,
        "row": row,
        "prompt": f"Passage 1:\nText {row}.\n\nQuestion?",
        "prompt_tokens": 12,
        "answers": ["yes", "ja"],
        "closed_book_prompt": "Question?" if task == "single_doc_qa" else None,
        "metric": "qa_judge" if task == "single_doc_qa" else "accuracy",
        "question": "Question?",
        "gold": {"sources": ["demo_qa"], "item_ids": [f"q{row}"], "passages": [1], "depth": 0.25},
        "distractors": [{"source": "demo_qa", "id": "demo_qa/d1", "truncated": True}],
        "seed": 1,
    }


def write_data(root: Path, records: dict[str, list[dict]] | None = None) -> Path:
    """A data folder with ``<task>/2k.jsonl`` files and a manifest in the generator's format."""
    records = records or {
        task: [record(task, "2k", row) for row in range(2)]
        for task in ("passage_count", "single_doc_qa")
    }
    files = {}
    for task, rows in records.items():
        path = root / task / "2k.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
        )
        files[f"{task}/2k.jsonl"] = {
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "rows": len(rows),
        }
    manifest = {
        "tool": "longbench100",
        "version": "0.1.0",
        "python": "3.11.0",
        "options": {
            "tasks": list(records),
            "lengths": ["2k"],
            "rows": 2,
            "seed": 1,
            "tokenizer": "cl100k_base",
            "whole_documents": False,
            "chat_template": False,
            "reserve_output": 0,
            "paired": True,
            "templates": "packaged",
        },
        "lengths": {"2k": 2048},
        "tokenizer": {
            "spec": "cl100k_base",
            "identity": "tiktoken:cl100k_base",
            "chat_template": False,
            "reserve_output": 0,
        },
        "sources": {
            "demo_qa": {
                "repo_id": "longbench100/demo",
                "revision": "packaged",
                "license": "CC0-1.0",
                "stand_in_for": None,
                "files": {"qa.jsonl": "ab" * 32},
                "documents": 3,
                "items": 3,
            }
        },
        "missing_sources": [],
        "tasks": {},
        "files": files,
        "shortfalls": [],
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return root


def reseal(root: Path, relative: str) -> None:
    """Record a data file's new sha256 in the manifest (as if the generator had written it)."""
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"][relative]["sha256"] = hashlib.sha256(
        (root / relative).read_bytes()
    ).hexdigest()
    (root / "manifest.json").write_text(json.dumps(sealed_manifest(manifest), indent=2) + "\n")


def assert_user_error(args: list[str], message: str, code: int = 2) -> None:
    """The command fails with exactly one ``error:`` line containing ``message`` and no traceback."""
    exit_code, _, err = cli(*args)
    assert exit_code == code
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err


def test_hand_written_data_publishes_and_unpacks(tmp_path: Path):
    data = write_data(tmp_path / "data")
    code, out, err = cli(
        "publish", "--data", str(data), "--out", str(tmp_path / "snap"), "--repo-id", "my-org/tiny"
    )
    assert code == 0, err
    card = (tmp_path / "snap" / "README.md").read_text()
    assert card.startswith("---\npretty_name: tiny\n")
    assert 'load_dataset("my-org/tiny", "passage_count", split="2k")' in card
    assert "hf download my-org/tiny --repo-type dataset --local-dir snapshot" in card
    code, _, err = cli(
        "verify-snapshot", str(tmp_path / "snap"), "--unpack-to", str(tmp_path / "back")
    )
    assert code == 0, err
    for name in ("manifest.json", "passage_count/2k.jsonl", "single_doc_qa/2k.jsonl"):
        assert (tmp_path / "back" / name).read_bytes() == (data / name).read_bytes()


def test_publish_user_errors_are_one_line(tmp_path: Path):
    data = write_data(tmp_path / "data")
    snap = str(tmp_path / "snap")
    assert_user_error(
        ["publish", "--data", str(tmp_path / "nope"), "--out", snap], "no such folder"
    )
    (tmp_path / "bare" / "kv_retrieval").mkdir(parents=True)
    assert_user_error(
        ["publish", "--data", str(tmp_path / "bare"), "--out", snap], "no manifest.json"
    )
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    assert_user_error(
        ["publish", "--data", str(data), "--out", str(tmp_path / "full")], "non-empty folder"
    )
    assert_user_error(
        ["publish", "--data", str(data), "--out", snap, "--push"], "--push needs --repo-id ORG/NAME"
    )
    assert_user_error(
        ["publish", "--data", str(data), "--out", snap, "--private"],
        "--private only applies with --push",
    )
    assert_user_error(
        ["publish", "--data", str(data), "--out", snap, "--repo-id", "no-slash"],
        "expected ORG/NAME",
    )
    with open(data / "single_doc_qa" / "2k.jsonl", "a") as handle:
        handle.write("\n")
    assert_user_error(
        ["publish", "--data", str(data), "--out", snap],
        "single_doc_qa/2k.jsonl differs from manifest.json",
    )
    (data / "single_doc_qa" / "2k.jsonl").unlink()
    assert_user_error(
        ["publish", "--data", str(data), "--out", snap],
        "single_doc_qa/2k.jsonl is listed in manifest.json but missing",
    )
    assert not (tmp_path / "snap").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda row: row.update(extra=1),
            "2k.jsonl:2: record keys differ from docs/schema.md (unknown extra)",
        ),
        (lambda row: row.pop("gold"), "2k.jsonl:2: gold is missing"),
        (
            lambda row: row.update(answers=["a", 3]),
            "2k.jsonl:2: answers[1] must be a string, not an integer",
        ),
        (
            lambda row: row.update(prompt_tokens="12"),
            "2k.jsonl:2: prompt_tokens must be an integer, not a string",
        ),
        (
            lambda row: row.update(label="4k"),
            "2k.jsonl:2: record of single_doc_qa/4k in the file for single_doc_qa/2k",
        ),
        (
            lambda row: row.update(id=row.pop("id")),
            "2k.jsonl:2: not written the way the generator writes records",
        ),
    ],
)
def test_bad_record_names_file_and_line_and_leaves_nothing(tmp_path: Path, change, message: str):
    rows = [record("single_doc_qa", "2k", 0), record("single_doc_qa", "2k", 1)]
    change(rows[1])
    data = write_data(tmp_path / "data", {"single_doc_qa": rows})
    assert_user_error(["publish", "--data", str(data), "--out", str(tmp_path / "snap")], message)
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "data"
    ]  # no snapshot, no staging folder


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json}\n", "2k.jsonl:1: not valid JSON"),
        ("\n", "2k.jsonl:1: not valid JSON"),
        ("[1, 2]\n", "2k.jsonl:1: the content must be an object, not a list"),
    ],
)
def test_malformed_lines_are_user_errors(tmp_path: Path, text: str, message: str):
    data = write_data(tmp_path / "data")
    (data / "passage_count" / "2k.jsonl").write_text(text)
    reseal(data, "passage_count/2k.jsonl")
    assert_user_error(["publish", "--data", str(data), "--out", str(tmp_path / "snap")], message)


def test_verify_snapshot_errors(tmp_path: Path):
    data = write_data(tmp_path / "data")
    snap = tmp_path / "snap"
    assert cli("publish", "--data", str(data), "--out", str(snap))[0] == 0
    assert_user_error(["verify-snapshot", str(tmp_path / "nope")], "no such folder")
    assert_user_error(["verify-snapshot", str(data)], "not a longbench100-snapshot/1 manifest")
    assert_user_error(
        ["verify-snapshot", str(snap), "--unpack-to", str(data)], "--unpack-to", code=2
    )
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["generation"]["files"]["single_doc_qa/2k.jsonl"]["sha256"] = "0" * 64
    (snap / "manifest.json").write_text(json.dumps(manifest))
    assert_user_error(
        ["verify-snapshot", str(snap), "--unpack-to", str(tmp_path / "back")],
        "generation-manifest.json: differs from the generation manifest inside manifest.json",
        code=1,
    )
    (snap / "generation-manifest.json").write_text(json.dumps(manifest["generation"]))
    manifest["files"]["generation-manifest.json"]["sha256"] = hashlib.sha256(
        (snap / "generation-manifest.json").read_bytes()
    ).hexdigest()
    (snap / "manifest.json").write_text(json.dumps(manifest))
    assert_user_error(
        ["verify-snapshot", str(snap), "--unpack-to", str(tmp_path / "back")],
        "single_doc_qa/2k.jsonl: the records rebuilt from",
        code=1,
    )
    assert not (tmp_path / "back").exists()
    (snap / "manifest.json").unlink()
    assert_user_error(["verify-snapshot", str(snap)], "manifest.json: missing", code=1)


def test_verify_snapshot_catches_a_forged_parquet_file_whose_checksum_was_updated(tmp_path: Path):
    """Issue 47: a Parquet file rewritten with other answers, its sha256 updated in the snapshot's
    own list."""
    import pyarrow.parquet as pq

    snap = tmp_path / "snap"
    assert cli("publish", "--data", str(write_data(tmp_path / "data")), "--out", str(snap))[0] == 0
    manifest = json.loads((snap / "manifest.json").read_text())
    relative = next(
        name
        for name, entry in manifest["files"].items()
        if entry.get("source") == "single_doc_qa/2k.jsonl"
    )
    table = pq.read_table(snap / relative)
    forged = table.set_column(
        table.schema.get_field_index("answers"), "answers", pa_answers(table.num_rows)
    )
    pq.write_table(forged, snap / relative)
    forged_sha256 = hashlib.sha256((snap / relative).read_bytes()).hexdigest()
    manifest["files"][relative]["sha256"] = forged_sha256
    (snap / "manifest.json").write_text(json.dumps(manifest))
    before = {path: path.read_bytes() for path in snap.rglob("*") if path.is_file()}
    rebuilt = "single_doc_qa/2k.jsonl: the records rebuilt from"
    assert_user_error(["verify-snapshot", str(snap)], rebuilt, code=1)
    assert {path: path.read_bytes() for path in snap.rglob("*") if path.is_file()} == before


def pa_answers(rows: int):
    """An ``answers`` column of ``rows`` rows that all say "42"."""
    import pyarrow as pa

    return pa.array([["42"]] * rows, type=pa.list_(pa.string()))


def _hub_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment without any hub token or offline switch, with an empty HF home, plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HF_", "HUGGING_FACE"))
    }
    return {
        **env,
        "HF_HOME": str(tmp_path / "hf-home"),
        "LONGBENCH100_CACHE": str(tmp_path / "cache"),
        **extra,
    }


def test_push_refused_when_the_hub_is_unreachable_before_writing(tmp_path: Path):
    data = write_data(tmp_path / "data")
    snap = tmp_path / "snap"
    env = _hub_env(tmp_path, HF_TOKEN="hf_not_a_real_token", HF_ENDPOINT="http://127.0.0.1:9")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from longbench100.cli import main; main()",
            "publish",
            "--data",
            str(data),
            "--out",
            str(snap),
            "--repo-id",
            "my-org/tiny",
            "--push",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith(
        "error: cannot push: the hub at http://127.0.0.1:9 is unreachable ("
    )
    assert result.stderr.count("\n") == 1 and not snap.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({}, "cannot push: no Hugging Face token (set HF_TOKEN or run `hf auth login`)"),
        (
            {
                "HF_TOKEN": "hf_not_a_real_token",
                "HF_HUB_OFFLINE": "1",
                "HF_ENDPOINT": "http://127.0.0.1:9",
            },
            "cannot push: offline mode is on (HF_HUB_OFFLINE is set)",
        ),
    ],
)
def test_push_access_check_without_token_or_offline(
    tmp_path: Path, extra: dict[str, str], message: str
):
    script = (
        "from longbench100.core.errors import UserError\nfrom longbench100.publish.hub import check_push_access\n"
        "try:\n    check_push_access()\nexcept UserError as error:\n    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env=_hub_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == message + "\n"


def test_card_reports_filter_shortfalls_and_unusual_options(tmp_path: Path):
    data = write_data(tmp_path / "data")
    manifest = json.loads((data / "manifest.json").read_text())
    manifest["options"].update(whole_documents=True, paired=False, reserve_output=64)
    manifest["sources"]["demo_qa"]["stand_in_for"] = "gov_report"
    manifest["missing_sources"] = ["qasper"]
    manifest["shortfalls"] = [
        {
            "task": "single_doc_qa",
            "label": "2k",
            "rows": 2,
            "requested": 3,
            "reason": "rows did not fit the budget",
        }
    ]
    manifest["qa_filter"] = {"threshold": 0.5, "models": [{"name": "model-a"}, {"name": "model-b"}]}
    (data / "manifest.json").write_text(json.dumps(manifest, indent=1))
    assert cli("publish", "--data", str(data), "--out", str(tmp_path / "snap"))[0] == 0
    card = (tmp_path / "snap" / "README.md").read_text()
    assert "--reserve-output 64 --unpaired" in card and "--whole-documents" in card
    assert (
        "| demo_qa (stand-in for gov_report) |" in card
        and "not available during generation: qasper." in card
    )
    assert "single_doc_qa 2k 2/3 (rows did not fit the budget)" in card
    assert "(threshold 0.5): QA samples that model-a, model-b answered" in card
    code, _, err = cli(
        "verify-snapshot", str(tmp_path / "snap"), "--unpack-to", str(tmp_path / "back")
    )
    assert code == 0, err
    assert (tmp_path / "back" / "manifest.json").read_bytes() == (
        data / "manifest.json"
    ).read_bytes()


def test_manifest_without_card_fields_is_a_user_error(tmp_path: Path):
    data = write_data(tmp_path / "data")
    manifest = json.loads((data / "manifest.json").read_text())
    del manifest["tokenizer"]["identity"]
    (data / "manifest.json").write_text(json.dumps(manifest))
    assert_user_error(
        ["publish", "--data", str(data), "--out", str(tmp_path / "snap")],
        "lacks a field the card needs",
    )
    del manifest["sources"]
    (data / "manifest.json").write_text(json.dumps(manifest))
    assert_user_error(
        ["publish", "--data", str(data), "--out", str(tmp_path / "snap")],
        "not a longbench100 generation manifest (missing sources)",
    )


class FakeHfApi:
    """Stands in for ``huggingface_hub.HfApi``: records calls, optionally fails the upload."""

    calls: list[tuple] = []
    fail = False

    def __init__(self, token: str | None = None) -> None:
        self.calls.append(("init", token))

    def create_repo(self, repo_id: str, **kwargs) -> None:
        self.calls.append(("create_repo", repo_id, kwargs))

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs))
        if self.fail:
            raise RuntimeError("503 Service Unavailable\nretry later")
        return type(
            "Commit", (), {"commit_url": f"https://hub.example/{kwargs['repo_id']}/commit/1"}
        )()


def test_push_uploads_the_finished_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import huggingface_hub

    import longbench100.publish.hub as hub

    monkeypatch.setattr(hub, "check_push_access", lambda: "hf_token")
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHfApi)
    monkeypatch.setattr(FakeHfApi, "calls", [])
    data = write_data(tmp_path / "data")
    snap = tmp_path / "snap"
    code, out, err = cli(
        "publish",
        "--data",
        str(data),
        "--out",
        str(snap),
        "--repo-id",
        "my-org/tiny",
        "--push",
        "--private",
        "--quiet",
    )
    assert code == 0, err
    assert "pushed to my-org/tiny: https://hub.example/my-org/tiny/commit/1" in out
    (_, token), (_, repo_id, create), (_, upload) = FakeHfApi.calls
    assert (
        token == "hf_token"
        and repo_id == "my-org/tiny"
        and create == {"repo_type": "dataset", "private": True, "exist_ok": True}
    )
    assert (
        upload["folder_path"] == snap
        and upload["repo_type"] == "dataset"
        and upload["delete_patterns"] == ["data/**"]
    )
    assert upload["commit_message"].startswith("Publish tiny (longbench100 ")

    monkeypatch.setattr(FakeHfApi, "fail", True)
    again = tmp_path / "again"
    assert_user_error(
        [
            "publish",
            "--data",
            str(data),
            "--out",
            str(again),
            "--repo-id",
            "my-org/tiny",
            "--push",
            "--quiet",
        ],
        f"push to my-org/tiny failed (RuntimeError: 503 Service Unavailable); the snapshot is complete in {again}",
    )
    assert (again / "manifest.json").is_file()


def test_two_unpacks_into_one_folder_at_once_end_in_one_line_each(tmp_path: Path):
    """Issue 47: two `verify-snapshot --unpack-to X` at once crashed with "Directory not empty"."""
    snap = tmp_path / "snap"
    assert cli("publish", "--data", str(write_data(tmp_path / "data")), "--out", str(snap))[0] == 0
    command = [
        sys.executable,
        "-c",
        "from longbench100.cli import main; main()",
        "verify-snapshot",
        str(snap),
        "--unpack-to",
        str(tmp_path / "back"),
    ]
    for _ in range(3):
        runs = [
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        results = [(run.wait(timeout=120), run.stderr.read()) for run in runs]
        assert all("Traceback" not in stderr for _, stderr in results), results
        assert sorted(code for code, _ in results)[0] == 0, results  # one of them wrote the folder
        for code, stderr in results:
            one_line = stderr.count("\n") == 1 and stderr.startswith("error: --unpack-to")
            assert code == 0 or (code == 2 and one_line), results
        # no staging folder left behind
        assert sorted(path.name for path in tmp_path.iterdir()) == ["back", "data", "snap"]
        shutil.rmtree(tmp_path / "back")
