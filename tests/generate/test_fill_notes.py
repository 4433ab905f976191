"""generate's one line on a cell whose prompts fill much less than their budget: the fitter's own
note where padding ran out, the written file's median fill only for tasks without padding."""

import json
from pathlib import Path

from longbench100.generate.fill_notes import low_fill_note
from longbench100.generate.options import RanOutRow


def _data_file(path: Path, counts: list[int]) -> Path:
    """A data file whose records hold these prompt token counts."""
    path.write_text(
        "".join(
            json.dumps({"id": f"t-{row}", "row": row, "prompt_tokens": count}) + "\n"
            for row, count in enumerate(counts)
        )
    )
    return path


def test_a_file_without_padding_that_fills_little_is_warned_about_from_its_median(tmp_path):
    path = _data_file(tmp_path / "1k.jsonl", [100, 250, 900])
    note = low_fill_note(path, "long_doc_qa", "1k", 1000, [], [])
    assert note is not None and note.startswith(
        "warning: long_doc_qa 1k: the prompts fill 25.00% of the budget (median)"
    )


def test_rows_that_ran_out_of_padding_get_the_fitters_note_alone(tmp_path):
    path = _data_file(tmp_path / "1k.jsonl", [100, 250, 900])
    ran_out = [RanOutRow(0.1, {"a": 40, "b": 50}), RanOutRow(0.25, {"a": 40, "b": 60})]
    note = low_fill_note(path, "single_doc_qa", "1k", 1000, ran_out, ["c", "d"])
    assert note == (
        "underfilled: single_doc_qa 1k: 2 rows fill only 10.0%-25.0% of the length (every "
        "document its padding draws from is already in the prompt: the sources hold too little "
        "distinct text for this length, 100 tokens against 1,000 (b 60, a 40); not available to "
        "this run: c, d)"
    )


def test_an_underfill_note_names_no_unavailable_source_where_none_is_missing(tmp_path):
    path = _data_file(tmp_path / "1k.jsonl", [100])
    note = low_fill_note(path, "t", "1k", 1000, [RanOutRow(0.1, {"a": 600})], [])
    assert note is not None and note.endswith("600 tokens against 1,000 (a 600))")


def test_a_file_filled_to_its_budget_gets_no_note(tmp_path):
    path = _data_file(tmp_path / "1k.jsonl", [990, 1000, 700])
    assert low_fill_note(path, "single_doc_qa", "1k", 1000, [], []) is None
    empty = _data_file(tmp_path / "empty.jsonl", [])
    assert low_fill_note(empty, "t", "1k", 1000, [], []) is None


def test_the_counts_of_every_line_when_given_are_used_without_reading_the_file(tmp_path):
    absent = tmp_path / "never-written.jsonl"
    note = low_fill_note(absent, "long_doc_qa", "1k", 1000, [], [], [100, 250, 900])
    assert note is not None and "the prompts fill 25.00% of the budget (median)" in note
    assert low_fill_note(absent, "long_doc_qa", "1k", 1000, [], [], [990, 1000, 700]) is None
    assert low_fill_note(absent, "long_doc_qa", "1k", 1000, [], [], []) is None
