"""The source registry, the readers and the field mappings, on the synthetic mirror and small hand-made files."""

import json
import zipfile
from pathlib import Path

import pytest

from longbench100.core.errors import UserError
from longbench100.core.paths import packaged_dir
from longbench100.sources.corpus import load_corpus
from longbench100.sources.loader import load_source
from longbench100.sources.locations import SourceLocation, active_entries, resolve_location
from longbench100.sources.registry import load_registry, parse_entry
from longbench100.sources.token_cache import attach_token_counts
from longbench100.text.tokenization import load_tokenizer
from tests.support.fixture_mirror import write_mirror


def test_packaged_registry_has_the_twenty_sources_of_the_spec() -> None:
    registry = load_registry(packaged_dir("sources"))
    numbers = sorted(entry.number for entry in registry.values() if entry.number is not None)
    assert numbers == list(range(1, 21))
    assert registry["hotpotqa"].has_role("multi_doc_qa", "real")
    assert registry["cnn_dailymail"].has_role("passage_retrieval", "noisy")
    assert registry["leval_news_summ"].stand_in_for == "multi_news_e"


@pytest.mark.parametrize("task", ["single_doc_qa", "multi_doc_qa"])
def test_question_answering_is_padded_by_the_eight_qa_sources_of_the_spec_alone(task: str) -> None:
    """The spec's noisy sources 1-8, as the paper's generate_dataset_single_doc_qa and
    generate_dataset_multi_doc_qa draw them: no news (CNN/DailyMail, 9) and no stand-in, so a
    short mirror says so (``underfilled``) rather than padding with text of another kind."""
    registry = load_registry(packaged_dir("sources"))
    padding = {
        entry.name: entry.number for entry in registry.values() if entry.has_role(task, "noisy")
    }
    assert padding == {
        "qasper": 1,
        "multifieldqa_en": 2,
        "narrativeqa": 3,
        "multidoc_qa": 4,
        "legal_contract_qa": 5,
        "financial_qa": 6,
        "natural_question": 7,
        "scientific_qa": 8,
    }


def test_mapping_reads_every_layout(mirror: Path) -> None:
    location = resolve_location(str(mirror))
    registry = location.registry()
    hotpot = load_source(location, registry["hotpotqa"])
    assert len(hotpot.documents) == 48 and len(hotpot.items) == 12
    assert all(len(item.doc_ids) == 4 for item in hotpot.items)
    first = hotpot.documents[hotpot.items[0].doc_ids[0]]
    assert (
        not first.text.startswith("Passage") and first.title and first.text.startswith(first.title)
    )
    leval = load_source(location, registry["financial_qa"])
    assert (
        len(leval.items) == 24
        and leval.items[0].id.endswith("#0")
        and leval.items[1].id.endswith("#1")
    )
    assert leval.items[0].doc_ids == leval.items[1].doc_ids
    bioasq = load_source(location, registry["rag_mini_bioasq"])
    assert len(bioasq.documents) == 30
    assert all(
        len(item.doc_ids) == 2 and all(doc_id in bioasq.documents for doc_id in item.doc_ids)
        for item in bioasq.items
    )
    cnn = load_source(location, registry["cnn_dailymail"])
    assert all(item.kind == "summary" and item.summary for item in cnn.items)


def _single_entry(tmp_path: Path, body: str) -> SourceLocation:
    registry_dir = tmp_path / "registry"
    registry_dir.mkdir()
    (registry_dir / "mine.toml").write_text(
        'name = "mine"\nroles = ["single_doc_qa:real"]\n[hub]\nrepo_id = "me/data"\n' + body
    )
    return SourceLocation("mirror", tmp_path / "mirror", registry_dir)


QA_FILE = '[[files]]\npath = "qa.jsonl"\nformat = "jsonl"\n[files.document]\ntext = "text"\n[files.item]\nkind = "qa"\nquestion = "q"\nanswers = "a"\n'


def _write(tmp_path: Path, lines: list[str]) -> None:
    folder = tmp_path / "mirror" / "me" / "data"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qa.jsonl").write_text("".join(line + "\n" for line in lines))


def test_malformed_jsonl_names_file_and_line(tmp_path: Path) -> None:
    location = _single_entry(tmp_path, QA_FILE)
    _write(tmp_path, [json.dumps({"text": "A doc.", "q": "Q?", "a": "A"}), "{not json"])
    with pytest.raises(UserError, match=r"qa\.jsonl line 2: malformed JSON"):
        load_source(location, location.registry()["mine"])


def test_missing_field_names_field_and_entry(tmp_path: Path) -> None:
    location = _single_entry(tmp_path, QA_FILE)
    _write(tmp_path, [json.dumps({"text": "A doc.", "question": "Q?", "a": "A"})])
    with pytest.raises(
        UserError, match=r"source mine \(.*mine\.toml\): .*line 1: missing field 'q'"
    ):
        load_source(location, location.registry()["mine"])


def test_empty_documents_are_skipped_and_counted(tmp_path: Path) -> None:
    location = _single_entry(tmp_path, QA_FILE)
    _write(
        tmp_path,
        [
            json.dumps({"text": "  ", "q": "Q?", "a": "A"}),
            json.dumps({"text": "Real text.", "q": "Q?", "a": ["A", ""]}),
        ],
    )
    data = load_source(location, location.registry()["mine"])
    assert len(data.documents) == 1 and len(data.items) == 1
    assert data.items[0].answers == ("A",)
    assert data.skipped_empty == 2  # the empty document and the item that lost its document


@pytest.mark.parametrize(
    "body,message",
    [
        ('[[files]]\npath = "x"\nformat = "csv"\n[files.document]\ntext = "t"\n', "format 'csv'"),
        ('[[files]]\nformat = "jsonl"\n[files.document]\ntext = "t"\n', "missing field 'path'"),
        (
            '[[files]]\npath = "x"\nformat = "jsonl"\n[files.item]\nkind = "qa"\nquestion = "q"\nanswers = "a"\n',
            "needs a \\[document\\]",
        ),
    ],
)
def test_bad_registry_entries_name_the_problem(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\n[hub]\nrepo_id = "a/b"\n' + body)
    with pytest.raises(UserError, match=message):
        parse_entry(path)


def test_bad_role_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad"\nroles = ["single_doc_qa:gold"]\n[hub]\nrepo_id = "a/b"\n' + QA_FILE
    )
    with pytest.raises(UserError, match="bad role"):
        parse_entry(path)


def test_token_counts_are_cached_and_invalidated_by_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = _single_entry(tmp_path, QA_FILE)
    _write(tmp_path, [json.dumps({"text": "One two three.", "q": "Q?", "a": "A"})])
    entry = location.registry()["mine"]
    tokenizer = load_tokenizer()
    calls = []
    original = (
        tokenizer.count_groups
    )  # cl100k_base counts by segments: each document's pieces, one group each
    monkeypatch.setattr(
        tokenizer, "count_groups", lambda groups: calls.append(len(groups)) or original(groups)
    )
    assert attach_token_counts(tokenizer, entry, load_source(location, entry)) is False
    data = load_source(location, entry)
    assert attach_token_counts(tokenizer, entry, data) is True
    assert calls == [1] and next(iter(data.documents.values())).tokens == 4
    _write(tmp_path, [json.dumps({"text": "One two three four five.", "q": "Q?", "a": "A"})])
    data = load_source(location, entry)
    assert attach_token_counts(tokenizer, entry, data) is False
    assert next(iter(data.documents.values())).tokens == 6


def test_zip_member_and_stand_ins(tmp_path: Path) -> None:
    mirror = write_mirror(tmp_path / "m", only={"leval_news_summ", "multi_news_e", "cnn_dailymail"})
    location = resolve_location(str(mirror))
    registry = location.registry()
    assert "multi_news_e" in active_entries(location, registry)
    assert "leval_news_summ" not in active_entries(location, registry)
    with zipfile.ZipFile(mirror / "zai-org" / "LongBench" / "data.zip", "w") as archive:
        archive.writestr("data/other.jsonl", "")
    active = active_entries(location, registry)
    assert "multi_news_e" not in active and "leval_news_summ" in active
    corpus = load_corpus(location, load_tokenizer(), progress=False)
    assert corpus.sources_with_role("multi_doc_sum", "real") == ["leval_news_summ"]
    assert "multi_news_e" in corpus.missing


def test_missing_mirror_folder_and_offline_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UserError, match="no such folder"):
        resolve_location(str(tmp_path / "absent"))
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(
        constants, "ENDPOINT", "http://127.0.0.1:9"
    )  # nothing listens there: refused at once
    monkeypatch.setattr(
        constants,
        "HUGGINGFACE_CO_URL_TEMPLATE",
        "http://127.0.0.1:9/{repo_id}/resolve/{revision}/{filename}",
    )
    monkeypatch.setattr(
        constants, "HF_HUB_OFFLINE", False
    )  # another test's environment may have set it at import
    location = resolve_location("hub")
    with pytest.raises(
        UserError,
        match=r"cannot reach the Hugging Face hub at http://127\.0\.0\.1:9 .*local mirror",
    ):
        load_source(location, location.registry()["qasper"])
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(UserError, match="not in the local hub cache and HF_HUB_OFFLINE is set"):
        load_source(location, location.registry()["qasper"])


def test_invalid_text_is_a_one_line_error(tmp_path: Path) -> None:
    location = _single_entry(tmp_path, QA_FILE)
    _write(
        tmp_path,
        [
            json.dumps({"text": "fine", "q": "Q?", "a": "A"}),
            '{"text": "bad \\ud800 text", "q": "Q?", "a": "A"}',
        ],
    )
    with pytest.raises(UserError, match=r"qa\.jsonl line 2: text holds an invalid unicode escape"):
        load_source(location, location.registry()["mine"])
    folder = tmp_path / "mirror" / "me" / "data"
    (folder / "qa.jsonl").write_bytes(b'{"text": "caf\xe9", "q": "Q?", "a": "A"}\n')
    with pytest.raises(UserError, match=r"qa\.jsonl line 1: not valid UTF-8 \(byte 13\)"):
        load_source(location, location.registry()["mine"])


def test_parquet_positions_are_rows_and_repeated_ids_must_agree(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    body = '[[files]]\npath = "docs.parquet"\nformat = "parquet"\n[files.document]\ntext = "text"\nid = "id"\n'
    location = _single_entry(tmp_path, body)
    folder = tmp_path / "mirror" / "me" / "data"
    folder.mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(
            [{"id": 1, "text": "one"}, {"id": 2, "text": "two"}, {"id": 1, "text": "other"}]
        ),
        folder / "docs.parquet",
    )
    with pytest.raises(
        UserError, match=r"docs\.parquet row 3: document id 'mine/1' repeats with a different text"
    ):
        load_source(location, location.registry()["mine"])


def test_texts_counted_for_one_source_are_not_counted_again_for_another(
    mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "LONGBENCH100_CACHE", str(tmp_path / "cache")
    )  # nothing counted by earlier tests
    location = resolve_location(str(mirror))
    registry = location.registry()
    passages, summaries = (
        registry["rag_mini_bioasq"],
        registry["rag_mini_bioasq_summary"],
    )  # one text corpus, two mappings
    expected = load_source(location, summaries)
    attach_token_counts(load_tokenizer(), summaries, expected)  # counted alone
    [cache_file] = (tmp_path / "cache" / "token_counts").glob("rag_mini_bioasq_summary-*")
    expected_file = cache_file.read_bytes()
    cache_file.unlink()

    tokenizer = load_tokenizer()
    counted: list[int] = []
    original = tokenizer.count_groups
    monkeypatch.setattr(
        tokenizer, "count_groups", lambda groups: counted.append(len(groups)) or original(groups)
    )
    attach_token_counts(tokenizer, passages, load_source(location, passages))
    data = load_source(location, summaries)
    attach_token_counts(tokenizer, summaries, data)
    assert counted[0] > 0 and counted[1:] == [
        0
    ]  # the second source's documents were all learned from the first
    assert [document.tokens for document in data.documents.values()] == [
        document.tokens for document in expected.documents.values()
    ]
    assert cache_file.read_bytes() == expected_file


def test_a_document_with_its_tokens_keeps_every_other_field() -> None:
    from dataclasses import fields, replace

    from longbench100.sources.records import Document

    values = {field.name: f"{field.name} value" for field in fields(Document)}
    document = Document(**values)
    assert document.with_tokens(7) == replace(document, tokens=7)


@pytest.mark.parametrize("enabled", [True, False])
def test_loading_a_corpus_leaves_the_garbage_collector_as_it_found_it(
    mirror: Path, enabled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    states = []  # the collector's state while each source is read: held back

    def reading(*args):
        states.append(gc.isenabled())
        return load_source(*args)

    monkeypatch.setattr("longbench100.sources.corpus.load_source", reading)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        load_corpus(
            resolve_location(str(mirror)), load_tokenizer(), only={"narrativeqa"}, progress=False
        )
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() > 0  # what was loaded is out of the collections' reach
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()
    assert states == [False]


def test_a_registry_is_parsed_once_while_its_files_stay_as_they_were(tmp_path, monkeypatch):
    from longbench100.sources import registry as registry_module

    folder = tmp_path / "registry"
    folder.mkdir()
    for path in sorted(packaged_dir("sources").glob("*.toml"))[:3]:
        (folder / path.name).write_bytes(path.read_bytes())
    parsed: list[str] = []
    original = registry_module.parse_entry
    monkeypatch.setattr(
        registry_module, "parse_entry", lambda path: parsed.append(path.name) or original(path)
    )
    first = load_registry(folder)
    assert load_registry(folder) == first and len(parsed) == 3  # read back, not parsed again
    edited = sorted(folder.glob("*.toml"))[0]
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert load_registry(folder) == first and len(parsed) == 6  # a changed file: parsed afresh
    edited.unlink()
    assert len(load_registry(folder)) == 2
