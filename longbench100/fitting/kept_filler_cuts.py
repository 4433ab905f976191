"""Filler cuts kept from one run to the next, so a warm run looks for no sentence end in a filler.

Where a filler is cut in a pool document (:func:`~longbench100.fitting.packing.cut_prefix`: the
longest opening that ends at a sentence end within so many tokens) is a fixed fact of the
document's text, the tokens allowed and the tokenizer, and a run asks again exactly the questions
the run before it asked (the same rows draw the same documents for the same gaps). A run's
answers are kept for documents of its corpus by document id, text length and tokens allowed, in a
file keyed by what fixes every document's text (the corpus's content key), the tokenizer, the code
and the set of tasks (like :mod:`longbench100.text.kept_pieces`); the next run learns them for the
same documents before it builds anything. A corpus without a content key keeps nothing. In a
process, an answer is only given for the very text object (held, so never another text at the
same address) and tokenizer it was worked out for. A torn, foreign or unreadable file is ignored,
and a read-only cache only costs the cutting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from longbench100.core.kept_between_runs import keep_new, kept_file
from longbench100.core.marshal_cache import read_marshal
from longbench100.sources.records import Document
from longbench100.text.tokenization import Tokenizer

FORMAT = 1
"""Bump when what a kept cut means changes in a way the key does not show."""

Cut = tuple[str, int] | None
"""A filler cut: its text (an opening of the document) and tokens, or ``None`` where none fits."""
Answer = tuple[int, int] | None
"""A cut as kept: the opening's length in characters and its tokens, or ``None``."""
KeptCuts = dict[tuple[str, int, int], Answer]
"""(document id, its text's length, tokens allowed) -> the cut, as kept in a file."""


class _RunCuts:
    """The cuts known in this process for one tokenizer: by the text object's address and the
    tokens allowed, each with its text (which keeps the address from being reused)."""

    def __init__(
        self, tokenizer: Tokenizer, documents: Mapping[str, Document], path: Path | None
    ) -> None:
        self.tokenizer = tokenizer
        self.documents = documents
        self.path = path
        self.known: dict[tuple[int, int], tuple[str, Answer]] = {}
        self.recalled: KeptCuts = {}
        self.worked_out: KeptCuts = {}


_run: _RunCuts | None = None
"""The cuts of the run under way (set by :func:`recall_filler_cuts`)."""


def known_cut(
    tokenizer: Tokenizer, document: Document, max_tokens: int, work_out: Callable[[], Cut]
) -> Cut:
    """The cut of ``document`` within ``max_tokens`` by ``tokenizer``: known, else ``work_out()``'s,
    then known for the rest of the run (and kept for the next one, for a corpus document)."""
    run = _run
    if run is None or tokenizer is not run.tokenizer:
        return work_out()
    text = document.text
    found = run.known.get((id(text), max_tokens))
    if found is not None and found[0] is text:
        answer = found[1]
        return None if answer is None else (text[: answer[0]], answer[1])
    cut = work_out()
    answer = None if cut is None else (len(cut[0]), cut[1])
    run.known[(id(text), max_tokens)] = (text, answer)
    corpus_document = run.documents.get(document.id)
    if corpus_document is not None and corpus_document.text is text:
        run.worked_out[(document.id, len(text), max_tokens)] = answer
    return cut


def recall_filler_cuts(
    tokenizer: Tokenizer,
    documents: Mapping[str, Document],
    content_key: str | None,
    code: str,
    tasks: Sequence[str],
) -> None:
    """Start a run that cuts fillers with ``tokenizer`` from ``documents`` (the corpus's, by id,
    whose texts ``content_key`` fixes; ``code``: the digest of the code that cuts them): learn the
    cuts kept by earlier runs of ``tasks`` for these documents."""
    global _run
    path = (
        None
        if content_key is None
        else kept_file(
            "filler_cuts",
            [FORMAT, tokenizer.identity, tokenizer.counting, code, content_key],
            tasks,
        )
    )
    run = _RunCuts(tokenizer, documents, path)
    if path is not None:
        run.recalled = _valid(read_marshal(path))
        for (doc_id, length, max_tokens), answer in run.recalled.items():
            document = documents.get(doc_id)
            if document is not None and len(document.text) == length:
                run.known[(id(document.text), max_tokens)] = (document.text, answer)
    _run = run


def keep_filler_cuts() -> None:
    """End the run: keep, beside the cuts learned, those it worked out (nothing is written where it
    worked none out, or its corpus has no content key)."""
    global _run
    run, _run = _run, None
    if run is not None and run.path is not None:
        keep_new(run.path, run.recalled, run.worked_out)


def _valid(kept: object) -> KeptCuts:
    """The cuts ``kept`` holds when it has their form, else none."""
    if not isinstance(kept, dict) or not all(
        isinstance(key, tuple)
        and len(key) == 3
        and type(key[0]) is str
        and type(key[1]) is int
        and type(key[2]) is int
        and (
            answer is None
            or (
                isinstance(answer, tuple)
                and len(answer) == 2
                and all(type(value) is int for value in answer)
                and 0 <= answer[0] <= key[1]
            )
        )
        for key, answer in kept.items()
    ):
        return {}
    return kept
