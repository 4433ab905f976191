"""The options of a ``generate`` run and what it reports for one task and length."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from longbench100.catalog.suites import DEFAULT_SUITE, Suite, load_suite
from longbench100.judge.annotation_rubric import PROMPT_VERSIONS
from longbench100.llm.options import JudgeOptions
from longbench100.tasks import BUILDERS
from longbench100.tasks.one_document import OneDocumentTask


@dataclass(frozen=True)
class GenerateOptions:
    """Every option of a generation run; the ones that shape the output are recorded in the manifest."""

    tasks: tuple[str, ...]
    lengths: tuple[tuple[str, int], ...]
    rows: int
    seed: int
    tokenizer: str
    out: Path
    sources: str | None = None
    templates: Path | None = None
    workers: int = 1
    resume: bool = False
    whole_documents: bool = False
    chat_template: bool = False
    reserve_output: int = 0
    unpaired: bool = False
    negatives: str = "bm25"  # rag_hard / rerank: BM25 hard negatives or random ones
    verify_counts: bool = (
        False  # recount every prompt whole after writing it (does not change the output)
    )
    # write each sample's control twins to OUT/controls (generate/controls.py)
    controls: bool = True
    check_shortcuts: bool = (
        False  # run the no-model baselines on the output and record the verdict in the manifest
    )
    wait: bool = False  # wait for another run writing the same --out instead of refusing
    annotator: JudgeOptions = field(
        default_factory=JudgeOptions
    )  # labels the one-document tasks' chunks (model None: none)
    dry_run: bool = False  # count the annotator's calls and tokens, then stop without writing
    allow_unlabelled: bool = (
        False  # leave out the rows that need a chunk the annotator gave no usable label (else stop)
    )
    suite: Suite = field(
        default_factory=lambda: load_suite(DEFAULT_SUITE)
    )  # recorded; gives each task's metric
    suite_rules: bool = True  # apply the suite's stand_ins = false (off when tasks were named and the suite only inferred)

    def shaping(self) -> dict:
        """The options that determine the output bytes (not where it goes or how fast it is made)."""
        return {
            "tasks": list(self.tasks),
            "lengths": [label for label, _ in self.lengths],
            "rows": self.rows,
            "seed": self.seed,
            "tokenizer": self.tokenizer,
            "whole_documents": self.whole_documents,
            "chat_template": self.chat_template,
            "reserve_output": self.reserve_output,
            "paired": not self.unpaired,
            **(
                {"negatives": self.negatives}
                if any(BUILDERS[task].uses_negatives for task in self.tasks)
                else {}
            ),
            "templates": "user folder" if self.templates else "packaged",
            "suite": {"name": self.suite.name, "sha256": self.suite.sha256},
            **(
                {
                    "annotator": {
                        "model": self.annotator.model,
                        "prompt_versions": dict(PROMPT_VERSIONS),
                        **(
                            {"loop_penalty": self.annotator.loop_penalty}
                            if self.annotator.loop_penalty
                            else {}
                        ),
                        **({"allow_unlabelled": True} if self.allow_unlabelled else {}),
                    }
                }
                if self.annotated_tasks()
                else {}
            ),
        }

    def annotated_tasks(self) -> list[str]:
        """The tasks asked for whose chunks an annotator must label."""
        return [task for task in self.tasks if issubclass(BUILDERS[task], OneDocumentTask)]


@dataclass(frozen=True)
class RanOutRow:
    """A written row whose padding ran out: its fill (prompt tokens / length) and the tokens of
    distinct text each source of the pool it drew from holds (``Fitted.exhausted_pool``)."""

    fill: float
    pool_tokens: dict[str, int]


@dataclass
class LengthResult:
    """What was written for one task and length."""

    rows: int
    eligible: int | None
    paired_rows: int
    reused: int
    failed_rows: list[int]
    sources: dict[str, int] | None = (
        None  # written rows per ground-truth source (None for synthetic tasks)
    )
    unlabelled_rows: list[int] = field(
        default_factory=list
    )  # of failed_rows: those that needed a chunk left without a label
    ran_out: list[RanOutRow] = field(default_factory=list)  # rows whose padding ran out
    sha256: str | None = (
        None  # of the data file, when this run wrote it (else the manifest reads it)
    )
    fill_by_tokenizer: dict[str, dict] | None = None  # several tokenizers: each one's count_stats
    prompt_tokens: list[int] | None = (
        None  # every line's prompt_tokens, when this run wrote every line of the file
    )
