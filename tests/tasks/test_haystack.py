"""The haystack fit counts candidate prompts from spans and running totals; these tests hold it to the
slow way: the obvious join, a whole count of every rendered prompt, and templates that break the frame."""

from __future__ import annotations

import itertools
import random

from longbench100.core.marshal_cache import read_marshal
from longbench100.fitting.fit import BuildContext
from longbench100.sources.near_duplicates import find_near_duplicates
from longbench100.sources.records import CountedWhenRead, Document
from longbench100.tasks import essay_units
from longbench100.tasks.essay_units import (
    _cache_path,
    document_columns,
    keep_drawn,
    placed_document,
    prepare_drawn,
    prepare_pool,
)
from longbench100.tasks.haystack import (
    Haystack,
    essay,
    fit_haystack,
    nearest_boundary,
    prompt_frame,
    repeated,
    row_depth,
)
from longbench100.text.segment_count import cut_places
from longbench100.text.tokenization import Tokenizer, load_tokenizer
from tests.text.test_segment_count import real_sentences


def joined_the_obvious_way(
    haystack: Haystack, count: int, needles: list[tuple[float, str]], separator: str
) -> tuple[str, list[int]]:
    """The reference join: units in order, each needle before the unit boundary nearest its depth, the
    needle's separator around needles and a unit's own separator elsewhere."""
    units, separators = haystack.unit_texts()
    ends = list(
        itertools.accumulate(len(separators[i]) * bool(i) + len(units[i]) for i in range(count))
    )
    positions = [nearest_boundary(ends, depth * (ends[-1] if ends else 0)) for depth, _ in needles]
    text = ""
    offsets = [0] * len(needles)

    def add(before: str, item: str) -> int:
        nonlocal text
        text += before if text else ""
        text += item
        return len(text) - len(item)

    for position in range(count + 1):
        for index in [i for i, at in enumerate(positions) if at == position]:
            offsets[index] = add(separator, needles[index][1])
        if position < count:
            add(
                separators[position] if position and position not in positions else separator,
                units[position],
            )
    return text, offsets


def random_haystack(rng: random.Random) -> Haystack:
    sentences = real_sentences()
    units = [rng.choice(sentences) for _ in range(rng.randint(0, 60))]
    return Haystack(units, [rng.choice([" ", "\n", "\n\n"]) for _ in units])


def test_joined_equals_the_obvious_join():
    rng = random.Random(3)
    for _ in range(400):
        haystack = random_haystack(rng)
        needles = [
            (rng.choice([0.0, 0.5, 1.0, rng.random()]), f"Needle {i} says {rng.randint(0, 99)}.")
            for i in range(rng.randint(0, 4))
        ]
        separator = rng.choice([" ", ", ", "\n\n"])
        count = rng.randint(0, len(haystack.units))
        assert haystack.joined(count, needles, separator) == joined_the_obvious_way(
            haystack, count, needles, separator
        )


def ctx_for(budget: int, tokenizer=None) -> BuildContext:
    return BuildContext(
        tokenizer or load_tokenizer("cl100k_base"), "niah_single_2", "test", budget, 1
    )


def test_fit_matches_whole_counts_of_the_rendered_prompt():
    rng = random.Random(5)
    tokenizer = load_tokenizer("cl100k_base")
    for budget in (60, 300, 1200):
        haystack = Haystack(
            [rng.choice(real_sentences()) for _ in range(400)],
            [rng.choice([" ", "\n"]) for _ in range(400)],
        )
        needles = [
            (0.3, "The special magic number for calm-river is: 4821937."),
            (0.9, "Another one is: 12."),
        ]
        render = lambda context: f"Read this.\n{context}\nWhat is the number?"  # noqa: E731
        fit = fit_haystack(ctx_for(budget, tokenizer), haystack, needles, render)
        assert fit is not None
        assert fit.fitted.tokens == tokenizer.count_whole(fit.fitted.prompt) <= budget
        assert fit.fitted.prompt == render(fit.context)
        one_more = render(haystack.joined(fit.count + 1, needles)[0])
        assert (
            fit.count == len(haystack.units) or tokenizer.count_whole(one_more) > budget
        )  # the most units that fit
        total = tokenizer.count_whole(fit.context)
        assert fit.depths == [
            round(tokenizer.count_whole(fit.context[:offset]) / total, 4) for offset in fit.offsets
        ]
        assert [
            fit.context[offset : offset + len(text)]
            for offset, (_, text) in zip(fit.offsets, needles)
        ] == [text for _, text in needles]


def test_templates_that_do_not_place_the_context_verbatim_are_counted_whole():
    assert prompt_frame(lambda context: f"<{context}>") == ("<", ">")
    assert prompt_frame(lambda context: f"{context} and again {context}") is None
    assert prompt_frame(lambda context: context.upper()) is None
    assert (
        prompt_frame(lambda context: f"{len(context)}:{context}") is None
    )  # the frame depends on the context
    tokenizer = load_tokenizer("cl100k_base")
    haystack = repeated(itertools.cycle(["The river runs slowly.", "A light wind moves."]), 500)
    sneaky = lambda context: "Text: " + context[:300] + " End."  # noqa: E731 - the marks fit in 300 characters, real contexts do not
    fit = fit_haystack(ctx_for(200, tokenizer), haystack, [], sneaky)
    assert fit.fitted.tokens == tokenizer.count_whole(fit.fitted.prompt) <= 200
    assert fit.fitted.prompt == sneaky(fit.context)


def test_essay_pool_units_and_piece_counts_are_cached(monkeypatch, tmp_path):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))
    sentences = real_sentences()
    pool = [
        Document(
            f"d/{i}",
            "d",
            "\n".join(". ".join(sentences[i * 7 : i * 7 + 7]) + "." for _ in range(2)),
            tokens=50,
        )
        for i in range(20)
    ]
    assert prepare_pool(pool, load_tokenizer("cl100k_base"), lazy=False) is False
    cached = read_marshal(_cache_path(pool, load_tokenizer("cl100k_base")))
    assert isinstance(cached, dict)
    assert (
        len(cached["columns"])
        == len(cached["placed"])
        == len(cached["cuts"])
        == len(cached["tails"])
        == len(pool)
    )
    placed = [placed_document(document.text) for document in pool]
    for document, text in zip(
        pool, placed
    ):  # a placed document is its units joined by their separators
        sentences, separators = document_columns(document.text)
        assert text == "".join(
            ("" if index == 0 else separator) + sentence
            for index, (sentence, separator) in enumerate(zip(sentences, separators))
        )
        assert " ".join(text.split()) == " ".join(document.text.split())
    assert cached["cuts"] == [cut_places(text) for text in placed]
    fresh = load_tokenizer("cl100k_base")
    assert (
        prepare_pool(pool, fresh, lazy=True) is True
    )  # a cached pool is read back, however little is drawn
    for text in placed:
        assert fresh.count(text) == fresh.count_whole(text)
    # from the cache, a haystack's index of the pool's documents in any order sends nothing to the tokenizer
    sent = []
    monkeypatch.setattr(
        fresh._segments, "_count_whole", lambda text: sent.append(text) or fresh.count_whole(text)
    )
    joined = fresh.joined_index(random.Random(2).sample(placed, len(placed)), "\n\n")
    assert sent == []
    whole = fresh.count_whole(joined.text)
    first, last, tokens = joined.inner(0, len(joined.text))
    assert tokens == whole - fresh.count_whole(joined.text[:first]) - fresh.count_whole(
        joined.text[last:]
    )
    haystack = essay(pool, random.Random(1), 10_000)
    assert haystack.base == "\n\n".join(
        placed_document(document.text) for document in haystack_documents(haystack)
    )
    # an essay's base is joined from its placed documents: the same text as its units joined by their separators
    units, separators = haystack.unit_texts()
    assert haystack.base == "".join(
        itertools.chain.from_iterable(zip(["", *separators[1:]], units))
    )


def counted_when_read(document: Document, tokenizer: Tokenizer) -> CountedWhenRead:
    """``document`` counted when its count is first read, teaching ``tokenizer`` its text's piece
    counts, as a source counted when read does (``sources/token_cache.py``)."""

    def count(text: str) -> int:
        counts = [tokenizer.count_whole(piece) for piece in tokenizer.pieces(text) or []]
        tokenizer.learn_texts([text], [counts])
        return sum(counts)

    return CountedWhenRead(document, count)


def test_a_run_drawing_little_of_its_pool_prepares_nothing_and_fits_the_same(monkeypatch, tmp_path):
    monkeypatch.setenv("LONGBENCH100_CACHE", str(tmp_path))
    sentences = real_sentences()
    counter = load_tokenizer("cl100k_base")
    texts = [" ".join(sentences[i * 5 : i * 5 + 5]) + "\nAnd a line." for i in range(30)]
    pool = [Document(f"e/{i}", "e", text) for i, text in enumerate(texts)]
    when_drawn, ahead = load_tokenizer("cl100k_base"), load_tokenizer("cl100k_base")
    drawn_pool = [counted_when_read(document, when_drawn) for document in pool]
    ahead_pool = [counted_when_read(document, ahead) for document in pool]
    assert prepare_pool(drawn_pool, when_drawn, lazy=True) is False
    assert not (tmp_path / "essay_units").exists()  # nothing split, counted or cached ahead
    assert all("tokens" not in vars(document) for document in drawn_pool)
    assert when_drawn.learned_piece_counts(placed_document(pool[0].text)) is None
    for document in ahead_pool:  # a source counted ahead
        assert document.tokens == counter.count_whole(document.text)
    assert prepare_pool(ahead_pool, ahead, lazy=False) is False  # prepared ahead, cached
    assert len(list((tmp_path / "essay_units").iterdir())) == 1
    assert ahead.learned_piece_counts(placed_document(pool[0].text)) is not None
    render = lambda context: f"Read this.\nContext: {context}\nWhat is the number?"  # noqa: E731
    sent: list[str] = []
    drawn: set[str] = set()
    count_whole = when_drawn.encode
    monkeypatch.setattr(when_drawn, "encode", lambda text: sent.append(text) or count_whole(text))
    for seed in range(3):
        haystacks = [essay(drawn_pool, random.Random(seed), 330)]
        haystacks.append(essay(ahead_pool, random.Random(seed), 330))
        sent.clear()
        prepare_drawn(haystacks[0].placed, when_drawn)  # as a row does, its documents' counts read
        drawn |= {document.text for document in haystacks[0].placed}
        own_pieces = {
            piece
            for document in haystacks[0].placed
            for piece in when_drawn.pieces(document.text) or []
        }
        assert not own_pieces & set(sent)  # the pieces a placed text shares with its text: read off
        for document in haystacks[0].placed:
            placed = placed_document(document.text)
            assert when_drawn.learned_piece_counts(placed) == [
                counter.count_whole(piece) for piece in counter.pieces(placed) or []
            ]
        fits = [
            fit_haystack(ctx_for(300, tokenizer), haystack, [(0.5, "The number is 7.")], render)
            for tokenizer, haystack in zip((when_drawn, ahead), haystacks)
        ]
        assert fits[0] is not None and fits[1] is not None
        assert fits[0].fitted.prompt == fits[1].fitted.prompt
        assert fits[0].fitted.tokens == fits[1].fitted.tokens
        assert fits[0].fitted.tokens == counter.count_whole(fits[0].fitted.prompt) <= 300
    # what the rows split and counted is kept (the texts' counts too), and a later run reads it back
    keep_drawn(drawn_pool, when_drawn)
    assert not list((tmp_path / "essay_units").glob("*-drawn*"))  # the whole pool is cached
    _cache_path(pool, when_drawn).unlink()
    keep_drawn(drawn_pool, when_drawn)
    assert len(list((tmp_path / "essay_units").glob("*-drawn*"))) == 1
    split = [document.text for document in pool if document.text in essay_units._COLUMNS]
    counted = [document.text for document in drawn_pool if "tokens" in vars(document)]
    assert drawn and drawn <= set(counted) and drawn <= set(split)
    monkeypatch.setattr(essay_units, "_COLUMNS", {})
    monkeypatch.setattr(essay_units, "_PLACED", {})
    later = load_tokenizer("cl100k_base")
    assert prepare_pool(pool, later, lazy=True) is False
    assert set(essay_units._COLUMNS) == set(split)  # read back, not split
    for text in split:
        assert later.learned_piece_counts(placed_document(text)) is not None
    for text in counted:  # a document's count is read back, not counted
        assert later.learned_piece_counts(text) == when_drawn.learned_piece_counts(text)


def haystack_documents(haystack: Haystack) -> list[Document]:
    """The documents of a haystack in placement order."""
    return haystack.placed


def test_an_essay_lays_out_as_the_same_units_held_one_by_one():
    tokenizer = load_tokenizer("cl100k_base")
    sentences = real_sentences()
    rng = random.Random(8)
    pool = [
        Document(
            f"e/{i}",
            "e",
            "\n".join(
                " ".join(rng.sample(sentences, rng.randint(1, 6))) for _ in range(rng.randint(1, 3))
            ),
            tokens=rng.randint(20, 200),
        )
        for i in range(40)
    ]
    for _ in range(60):
        haystack = essay(pool, rng, rng.randint(100, 6000))
        plain = Haystack(*haystack.unit_texts())
        assert haystack.count == plain.count and haystack.base == plain.base
        starts, ends = haystack._bounds
        assert list(starts) == plain._bounds[0] and list(ends) == plain._bounds[1]
        for _ in range(5):
            needles = [
                (rng.choice([0.0, 0.5, 1.0, rng.random()]), f"Needle {i}.")
                for i in range(rng.randint(0, 3))
            ]
            count = rng.randint(0, haystack.count)
            assert haystack.joined(count, needles) == plain.joined(count, needles)
            index = tokenizer.joined_index(haystack.blocks, "\n\n")
            assert (
                haystack.layout(index, count, needles)[1] == plain.layout(index, count, needles)[1]
            )


def test_row_depths_are_drawn_within_the_rows_stratum_and_cover_it():
    """Row r's depth lies in slice r mod 11 of [0, 1], is the same on every call (the same at every
    length), and the draws spread over the whole slice instead of sitting on fixed points."""
    depths = [row_depth(42, "niah_single_1", row) for row in range(1100)]
    assert depths == [row_depth(42, "niah_single_1", row) for row in range(1100)]
    assert depths != [row_depth(43, "niah_single_1", row) for row in range(1100)]
    for stratum in range(11):
        own = depths[stratum::11]
        assert all(stratum / 11 <= depth <= (stratum + 1) / 11 for depth in own)
        assert max(own) - min(own) > 0.9 / 11 and len(set(own)) >= 85
    sixths = [row_depth(42, "json_kv", row, 6) for row in range(600)]
    assert all(row % 6 / 6 <= depth <= (row % 6 + 1) / 6 for row, depth in enumerate(sixths))


def pool_with_near_copies() -> list[Document]:
    """Documents of made-up prose, with deliberate near-copies (one sentence changed, or a longer
    version holding the text) and an identical copy under another id."""
    rng = random.Random(11)
    words = (
        "river mill stone bridge market harbor lantern orchard meadow quarry canal signal".split()
    )

    def prose(sentences: int) -> str:
        return " ".join(
            " ".join(rng.choice(words) for _ in range(12)).capitalize() + "."
            for _ in range(sentences)
        )

    originals = [prose(12) for _ in range(10)]
    texts = [
        *originals,
        originals[0].replace(".", "!", 1),  # one sentence changed
        originals[1] + " " + prose(4),  # a longer version
        originals[2],  # identical, another id
    ]
    return [Document(f"d/{i}", "d", text, tokens=150) for i, text in enumerate(texts)]


def test_no_pass_of_an_essay_holds_a_near_copy():
    pool = pool_with_near_copies()
    groups = find_near_duplicates(pool, cache=False)
    assert len({groups.key(document) for document in pool}) == 10  # the copies are caught
    for seed in range(30):
        haystack = essay(pool, random.Random(seed), 10 * 150)  # one pass at most
        assert haystack.passes == 1
        keys = [groups.key(document) for document in haystack.placed]
        assert len(keys) == len(set(keys)) == 10  # every text once, no copy
    second = essay(pool, random.Random(1), 14 * 150)  # a second pass may repeat texts
    assert second.passes == 2 and len(second.placed) == 14
