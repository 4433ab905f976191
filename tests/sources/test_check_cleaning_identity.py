"""bench/check_cleaning_identity.py: how it tells two reads of a mirror apart."""

from __future__ import annotations

from tests.support.bench_scripts import load_bench_script

check = load_bench_script("check_cleaning_identity")


def report(documents: dict[str, str], rest: str = "r") -> dict:
    return {"documents": documents, "rest": rest, "seconds": 0.1}


def test_identical_reads_have_no_differences() -> None:
    reads = {"cnn": report({"cnn/1": "a", "cnn/2": "b"}), "nq": report({})}
    assert check.differences(reads, {name: dict(value) for name, value in reads.items()}) == []


def test_a_changed_missing_or_extra_document_is_named() -> None:
    reference = {"cnn": report({"cnn/1": "a", "cnn/2": "b"})}
    ours = {"cnn": report({"cnn/1": "a", "cnn/2": "B", "cnn/3": "c"})}
    (line,) = check.differences(reference, ours)
    assert line.startswith("cnn: 2 documents differ") and "cnn/2" in line and "cnn/3" in line


def test_changed_items_or_counts_and_a_source_read_by_one_side_are_named() -> None:
    reference = {"cnn": report({"cnn/1": "a"}, rest="x"), "nq": report({})}
    ours = {"cnn": report({"cnn/1": "a"}, rest="y")}
    assert check.differences(reference, ours) == [
        "cnn: items or counts differ",
        "nq: read by one side only",
    ]


def test_the_digest_tells_texts_apart_and_takes_lone_surrogates() -> None:
    assert check.digest("a") != check.digest("b")
    assert len(check.digest("\ud800")) == 20
