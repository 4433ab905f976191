"""Per-source cleaning steps, item row filters and identical items, on small hand-made texts and files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longbench100.core.errors import UserError
from longbench100.sources.cleaning import (
    clean_text,
    drop_transcript_markers,
    fix_mojibake,
    html_to_text,
)
from longbench100.sources.loader import load_source
from longbench100.sources.locations import SourceLocation, resolve_location
from longbench100.sources.registry import parse_entry

DOCS_AND_ITEMS = """
[[files]]
path = "docs.jsonl"
format = "jsonl"
[files.document]
text = "text"
id = "id"

[[files]]
path = "items.jsonl"
format = "jsonl"
[files.item]
kind = "summary"
question = "q"
summary = "s"
doc_ids = "refs"
"""


def _entry(tmp_path: Path, header: str, body: str) -> SourceLocation:
    """A registry with one entry ``mine`` (``header`` holds top-level keys such as ``clean``) over ``tmp_path/mirror``."""
    registry = tmp_path / "registry"
    registry.mkdir(exist_ok=True)
    (registry / "mine.toml").write_text(
        f'name = "mine"\n{header}\nroles = ["multi_doc_sum:real"]\n[hub]\nrepo_id = "me/data"\n{body}'
    )
    return SourceLocation("mirror", tmp_path / "mirror", registry)


def _write(tmp_path: Path, name: str, rows: list[dict]) -> None:
    folder = tmp_path / "mirror" / "me" / "data"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_mojibake_is_repaired_and_correct_text_left_alone() -> None:
    assert (
        fix_mojibake("The bakerâ€™s bread was â€œwarmâ€\x9d and crÃ¨me-filled.")
        == "The baker’s bread was “warm” and crème-filled."
    )
    assert fix_mojibake("A café in Zürich – “fine”.") == "A café in Zürich – “fine”."
    assert (
        fix_mojibake("Et voilÃ\xa0 the market.") == "Et voilà the market."
    )  # a no-break space inside the garbled word


def test_html_table_keeps_cell_text_row_by_row() -> None:
    page = (
        '<H1>Harbor survey</H1> <Table> <Tr> <Th_colspan="2"> Harbor survey </Th> </Tr> '
        "<Tr> <Td> Depth </Td> <Td> 12 meters </Td> </Tr> <Tr> <Td> Keeper </Td> <Td> <Ul> <Li> Ana </Li> <Li> Ben </Li> </Ul> </Td> </Tr> </Table> "
        "<P> Boats need p<0.5 of the channel &amp; a pilot. </P>"
    )
    text = html_to_text(page)
    lines = text.splitlines()
    assert "Depth | 12 meters" in lines
    assert any(line.startswith("Keeper |") for line in lines) and "Ana" in text and "Ben" in text
    assert "Boats need p<0.5 of the channel & a pilot." in lines
    assert "<" not in text.replace("p<0.5", "") and "colspan" not in text


def test_text_without_tags_is_not_touched_by_html() -> None:
    plain = "Line one  has two spaces.\n\n\n\nAnd a x < y comparison."
    assert html_to_text(plain) == plain


def test_html_keeps_line_breaks_of_mixed_text() -> None:
    assert html_to_text("First <b>bold</b> line.\nSecond line.") == "First bold line.\nSecond line."


def test_transcript_markers_are_dropped_and_spacing_tidied() -> None:
    transcript = "Clerk A: we {disfmarker} we opened the canal {vocalsound} .\nClerk B: {pause} Yes , {gap} fine ."
    assert (
        drop_transcript_markers(transcript)
        == "Clerk A: we we opened the canal .\nClerk B: Yes , fine ."
    )
    assert (
        drop_transcript_markers("Braces {Like This} and {x_1} stay.")
        == "Braces {Like This} and {x_1} stay."
    )


def test_steps_apply_in_declared_order() -> None:
    assert (
        clean_text("<P>itâ€™s {vocalsound} done</P>", ["mojibake", "html", "transcript_markers"])
        == "it’s done"
    )
    assert clean_text("untouched  text", []) == "untouched  text"


@pytest.mark.parametrize(
    "header,body,message",
    [
        (
            'clean = ["html", "spellcheck"]',
            DOCS_AND_ITEMS,
            r"mine\.toml: unknown cleaning step 'spellcheck' in 'clean': use mojibake, html, transcript_markers",
        ),
        ('clean = "html"', DOCS_AND_ITEMS, r"mine\.toml: field 'clean' must be a list"),
        (
            "",
            DOCS_AND_ITEMS + "min_documents = 0\n",
            r"mine\.toml files\[1\]\.item: min_documents must be a whole number of at least 1",
        ),
        (
            "",
            DOCS_AND_ITEMS + "[files.item.where]\nkind = {a = 1}\n",
            r"mine\.toml files\[1\]\.item\.where: 'kind' must be a string",
        ),
        (
            "",
            DOCS_AND_ITEMS + "[files.item.where]\nkind = []\n",
            r"item\.where: 'kind' must be .* non-empty list",
        ),
    ],
)
def test_bad_cleaning_and_filter_declarations_name_the_file(
    tmp_path: Path, header: str, body: str, message: str
) -> None:
    location = _entry(tmp_path, header, body)
    with pytest.raises(UserError, match=message):
        parse_entry(location.registry_dir / "mine.toml")


def test_cleaning_applies_to_documents_and_references_and_changes_the_fingerprint(
    tmp_path: Path,
) -> None:
    _write(
        tmp_path,
        "docs.jsonl",
        [
            {"id": 1, "text": "Pilot A: the canal {disfmarker} opened ."},
            {"id": 2, "text": "Pilot B: it {vocalsound} closed ."},
        ],
    )
    _write(
        tmp_path,
        "items.jsonl",
        [
            {
                "q": "What {pause} happened?",
                "s": "The canal opened {gap} and closed .",
                "refs": [1, 2],
            }
        ],
    )
    plain = _entry(tmp_path, "", DOCS_AND_ITEMS).registry()["mine"]
    cleaned_location = _entry(tmp_path, 'clean = ["transcript_markers"]', DOCS_AND_ITEMS)
    cleaned = cleaned_location.registry()["mine"]
    assert cleaned.clean == ("transcript_markers",) and cleaned.fingerprint() != plain.fingerprint()
    data = load_source(cleaned_location, cleaned)
    assert [doc.text for doc in data.documents.values()] == [
        "Pilot A: the canal opened .",
        "Pilot B: it closed .",
    ]
    item = data.items[0]
    assert (
        item.question == "What happened?"
        and item.summary == "The canal opened and closed ."
        and item.answers == (item.summary,)
    )


def test_where_and_min_documents_keep_only_multi_passage_items_of_a_kind(tmp_path: Path) -> None:
    body = (
        DOCS_AND_ITEMS + 'min_documents = 2\n[files.item.where]\ntype = ["summary", "overview"]\n'
    )
    location = _entry(tmp_path, "", body)
    _write(
        tmp_path,
        "docs.jsonl",
        [{"id": n, "text": f"Passage text number {n}."} for n in range(1, 4)],
    )
    _write(
        tmp_path,
        "items.jsonl",
        [
            {
                "type": "summary",
                "q": "How do passages one and two relate?",
                "s": "They count upwards.",
                "refs": [1, 2],
            },
            {"type": "summary", "q": "What is passage three?", "s": "The third one.", "refs": [3]},
            {"type": "factoid", "q": "Which number comes first?", "s": "One.", "refs": [1, 2]},
            {
                "type": "summary",
                "q": "What of passage nine?",
                "s": "It is not in the corpus.",
                "refs": [3, 9],
            },
            {
                "type": "overview",
                "q": "Give an overview of all three.",
                "s": "Three counted passages.",
                "refs": [1, 2, 3],
            },
        ],
    )
    data = load_source(location, location.registry()["mine"])
    assert [item.question for item in data.items] == [
        "How do passages one and two relate?",
        "Give an overview of all three.",
    ]
    assert [len(item.doc_ids) for item in data.items] == [2, 3]
    assert data.filtered_items == 3 and data.skipped_empty == 0


def test_a_missing_where_field_is_a_one_line_error(tmp_path: Path) -> None:
    location = _entry(tmp_path, "", DOCS_AND_ITEMS + '[files.item.where]\ntype = "summary"\n')
    _write(tmp_path, "docs.jsonl", [{"id": 1, "text": "Some text."}])
    _write(tmp_path, "items.jsonl", [{"q": "Q?", "s": "S.", "refs": [1]}])
    with pytest.raises(UserError, match=r"items\.jsonl line 1: missing field 'type'"):
        load_source(location, location.registry()["mine"])


def test_identical_items_count_once(tmp_path: Path) -> None:
    body = '[[files]]\npath = "qa.jsonl"\nformat = "jsonl"\n[files.document]\ntext = "text"\n[files.item]\nkind = "qa"\nquestion = "q"\nanswers = "a"\n'
    location = _entry(tmp_path, "", body)
    story = "The mayor counted the lanterns by the harbor."
    _write(
        tmp_path,
        "qa.jsonl",
        [
            {"text": story, "q": "Who counted?", "a": "the mayor"},
            {"text": story, "q": "Who counted?", "a": "the mayor"},  # the same item again
            {
                "text": story,
                "q": "What was counted?",
                "a": "the mayor",
            },  # same text and answer, another question
            {
                "text": "The clerk counted the boats.",
                "q": "Who counted?",
                "a": "the mayor",
            },  # another text
        ],
    )
    data = load_source(location, location.registry()["mine"])
    assert len(data.documents) == 2 and data.duplicate_items == 1
    assert [item.question for item in data.items] == [
        "Who counted?",
        "What was counted?",
        "Who counted?",
    ]
    assert len({item.id for item in data.items}) == 3


def test_identical_texts_under_different_ids_are_one_item(tmp_path: Path) -> None:
    location = _entry(tmp_path, "", DOCS_AND_ITEMS)
    _write(
        tmp_path,
        "docs.jsonl",
        [
            {"id": 1, "text": "A weaver mapped the river."},
            {"id": 2, "text": "A weaver mapped the river."},
        ],
    )
    _write(
        tmp_path,
        "items.jsonl",
        [
            {"q": "Sum up.", "s": "A map.", "refs": [1]},
            {"q": "Sum up.", "s": "A map.", "refs": [2]},
        ],
    )
    data = load_source(location, location.registry()["mine"])
    assert len(data.items) == 1 and data.duplicate_items == 1


def test_mirror_bioasq_summary_items_are_multi_passage_and_carry_their_question(
    mirror: Path,
) -> None:
    location = resolve_location(str(mirror))
    entry = location.registry()["rag_mini_bioasq_summary"]
    assert not entry.roles  # no task takes it
    assert entry.stand_in_for == "multi_news_e" and entry.files[1].item.min_documents == 2
    data = load_source(location, entry)
    assert (
        len(data.items) == 9 and data.filtered_items == 3
    )  # every fourth synthetic row is not a summary question
    assert all(
        item.kind == "summary" and item.question and len(item.doc_ids) >= 2 for item in data.items
    )


def test_each_artifact_class_of_the_text_audit_has_a_step_that_removes_it() -> None:
    """LaTeX, wiki links and a page's menus, a contract's page footers and BioASQ snippets that are prefixes of each other."""
    from longbench100.sources.cleaning import (
        drop_page_furniture,
        drop_wiki_markup,
        drop_wiki_page_chrome,
        repair_paper_markup,
        trim_snippet_fragments,
    )

    assert repair_paper_markup(
        "as in (DISPLAY_FORM4). Here, $ w_{t}$ denotes it; \\(\\epsilon\\) too; $ 5 and $ 10 stay."
    ) == ("as in ([formula]). Here, w_t denotes it; ϵ too; $ 5 and $ 10 stay.")
    assert drop_wiki_markup(
        'with [[Melissa Joan Hart]], [[Gossip Girl|GG]] in [["When Kiran met Karen" caused'
    ) == ('with Melissa Joan Hart, GG in "When Kiran met Karen" caused')
    page = 'X - wikipedia\n\nX\n\nJump to: navigation, search This article.\n*\n* a list item\n\nRetrieved from "https://en.wikipedia.org/w/index.php?title=X" Categories:\n* c\n* About Wikipedia'
    assert drop_wiki_page_chrome(page) == "X\n\nThis article.\n* a list item"
    contract = "Bioeq shall\n\nSource: COHERUS BIOSCIENCES, INC., 10-K, 2/27/2020\n\n\n\n7\n\n- 8 -\nPage 3 of 12\npay all fees.\n\n10 days."
    assert drop_page_furniture(contract) == "Bioeq shall\n\npay all fees.\n\n10 days."
    snippets = "Evidence of a late risk of meningioma in adults.\nEvidence of a late risk of meningioma\nA second snippet here is kept."
    assert (
        trim_snippet_fragments(snippets)
        == "Evidence of a late risk of meningioma in adults.\nA second snippet here is kept."
    )
    cut_out = "r disease. A phase 2 study showed that it was well\nease. A phase 2 study showed that it was well tolerated\ner30). It had no effect."
    assert (
        trim_snippet_fragments(cut_out)
        == "A phase 2 study showed that it was well tolerated\ner30). It had no effect."
    )


def test_load_counts_the_texts_each_step_changed(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "docs.jsonl",
        [
            {"id": 1, "text": "Pilot A: the canal {disfmarker} opened ."},
            {"id": 2, "text": "Pilot B: it closed."},
        ],
    )
    _write(
        tmp_path,
        "items.jsonl",
        [{"q": "What {pause} happened?", "s": "The canal opened and closed.", "refs": [1, 2]}],
    )
    location = _entry(tmp_path, 'clean = ["transcript_markers", "detokenize"]', DOCS_AND_ITEMS)
    data = load_source(location, location.registry()["mine"])
    assert data.cleaned == {
        "transcript_markers": 2,
        "detokenize": 1,
    }  # the marked document and question; one spaced stop


def _random_texts(alphabet: list[str], count: int, seed: int) -> list[str]:
    """``count`` short texts drawn from ``alphabet``'s pieces."""
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(count)]


def test_tidy_gives_what_tidying_line_by_line_gives() -> None:
    import re

    from longbench100.sources.cleaning import _tidy

    def line_by_line(text: str) -> str:  # every run of blanks squeezed and stripped per line
        lines = (re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n"))
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()

    pieces = ["a", "b c", " ", "  ", "\t", " \t ", "\n", "\n\n\n", "\xa0", "\r", "\u2003", "\x0b"]
    for text in _random_texts(pieces, 20_000, seed=5):
        assert _tidy(text) == line_by_line(text), repr(text)


def test_wiki_edit_links_and_permanent_link_go_with_the_blanks_before_them() -> None:
    import re

    from longbench100.sources.cleaning import drop_wiki_markup, drop_wiki_page_chrome

    edit = re.compile(r"[ \t]*[(\[] ?edit ?[)\]]", re.IGNORECASE)  # the rules as one pattern each
    permanent = re.compile(r"[ \t\n]*Retrieved from\s*(?:\"|``)\s*https?://\S*wikipedia.*\Z", re.S)
    pieces = ["History", " ", "\t", "\n", "(", "[", " edit", "EDIT", "edit", ")", "]", "( edit )"]
    for text in _random_texts(pieces, 20_000, seed=7):
        if "[[" in text:
            continue  # a link, which the step turns into its text first
        assert drop_wiki_markup(text) == (edit.sub("", text) if "edit" in text else text)
    pieces = ["Text", " ", "\t", "\n", "Retrieved from ", '"', "``", "https://", "en.wikipedia"]
    for text in _random_texts(pieces, 20_000, seed=11):
        assert drop_wiki_page_chrome("*" + text) == drop_wiki_page_chrome(
            "*" + permanent.sub("", text)
        )


def test_contractions_look_for_the_words_only_after_a_letter_one_of_them_starts_with() -> None:
    import re

    from longbench100.sources.cleaning import (
        _CONTRACTED_PRONOUNS,
        _NEGATED_VERBS,
        restore_contractions,
    )

    every_word = re.compile(  # the rule without the check of the letter after the word boundary
        rf"\b(?:({_NEGATED_VERBS})n t|({_CONTRACTED_PRONOUNS})\s(ll|re|ve|d|m|s))"
        r"\b(?=[\s.,;:!?)]|$)",
        re.IGNORECASE,
    )

    def reference(text: str) -> str:
        def apostrophe(match: re.Match) -> str:
            if match.group(1):
                return match.group(0)[:-2] + "'t"
            return f"{match.group(2)}'{match.group(3)}"

        return re.sub(r"\b([A-Z]{2,}) s\b(?=\s)", r"\1's", every_word.sub(apostrophe, text))

    openers = ["Are", "ca", "did", "has", "is", "let", "must", "need", "she", "they", "wo", "you"]
    pieces = [*openers, "DON", "t", "n t", "İt", "ıt", "ſhe", " ", " ", "\n", "ll", "s", "."]
    for text in _random_texts(pieces, 20_000, seed=13):
        assert restore_contractions(text) == reference(text), repr(text)


def test_page_furniture_found_after_line_ends_as_on_lines_of_its_own() -> None:
    import re

    from longbench100.sources.cleaning import drop_page_furniture

    on_own_line = re.compile(  # the rule as written with "^" and "$" for any line
        r"^[ \t]*(?:Source: [^\n]{1,120}, \d{1,2}/\d{1,2}/\d{4}|Page \d{1,3}(?: of \d{1,3})?"
        r"|-?[ \t]*\d{1,3}[ \t]*-?|\[\*+\] Certain information on this page has been omitted[^\n]*)"
        r"[ \t]*$",
        re.MULTILINE,
    )

    def reference(text: str) -> str:
        if not on_own_line.search(text):
            return text
        return re.sub(r"\n{3,}", "\n\n", on_own_line.sub("", text)).strip()

    pieces = ["7", "- 12 -", "Page 3", " of 9", "Source: ACME, 10-K, 1/2/2020", "[*] Certain "]
    pieces += ["information on this page has been omitted", "Text.", " ", "\t", "\n", "\n\n", "-"]
    for text in _random_texts(pieces, 20_000, seed=17):
        assert drop_page_furniture(text) == reference(text), repr(text)


def test_snippet_lines_compared_without_the_marks_and_blanks_they_end_with() -> None:
    import re

    from longbench100.sources.cleaning import _without_end_marks

    for text in _random_texts(
        ["word", " ", "\n", "\xa0", ".", "!", "?", ";", ":", ",", "-"], 20_000, 23
    ):
        assert _without_end_marks(text) == re.sub(r"[\s.!?;:,]+$", "", text), repr(text)


def test_mojibake_fixes_each_word_holding_a_non_ascii_character_whole() -> None:
    import re

    import ftfy

    word = re.compile(r"[^ \t\n\r]*[^\x00-\x7f][^ \t\n\r]*")  # such a word, as one pattern
    pieces = ["It", "â€™", "s", "Ã©", "é", "’", "Ã\xa0", "Ñ‚", "Ñ¢", " ", "\t", "\n", "\r", "x"]
    for text in _random_texts(pieces, 20_000, seed=29):
        expected = word.sub(lambda match: ftfy.fix_encoding(match.group(0)), text)
        assert fix_mojibake(text) == expected, repr(text)


def test_gutenberg_frame_found_and_lines_unwrapped_as_the_line_patterns_do() -> None:
    import re

    from longbench100.sources.cleaning import strip_gutenberg_frame

    start = re.compile(
        r"^\*{3} ?START OF (?:THIS|THE) PROJECT GUTENBERG EBOOK[^\n]*$", re.MULTILINE | re.I
    )
    end = re.compile(  # the END line as one pattern with "^" for any line
        r"^(?:\*{3} ?END OF (?:THIS|THE) PROJECT GUTENBERG EBOOK"
        r"|End of (?:the )?Project Gutenberg)",
        re.MULTILINE | re.IGNORECASE,
    )
    credits = re.compile(
        r"^(?:Produced by|This (?:e|E)book was produced by)[^\n]*(?:\n[^\n]+)*\n*", re.I
    )
    wrapped = re.compile(r"(?<=\S)[ \t]*\n(?=[ \t]*\S)")  # a line end inside a paragraph

    def reference(text: str) -> str:
        found = start.search(text)
        body = text[found.end() :] if found else text
        last = end.search(body)
        body = credits.sub("", (body[: last.start()] if last else body).strip(), count=1)
        paragraphs = re.split(r"\n[ \t]*\n", body)
        return "\n\n".join(wrapped.sub(" ", p.strip()) for p in paragraphs if p.strip())

    pieces = ["Call me", "Ishmael.", " ", "\t", "\n", "\n\n", "\xa0", "*** START OF THE PROJECT "]
    pieces += ["GUTENBERG EBOOK X", "*** END OF THIS PROJECT GUTENBERG EBOOK", "End of the "]
    pieces += ["Project Gutenberg", "end of project gutenberg", "Produced by Jo"]
    for text in _random_texts(pieces, 20_000, seed=31):
        assert strip_gutenberg_frame(text) == reference(text), repr(text)
