"""The dataset card (``SNAPSHOT/README.md``): a YAML header declaring configs and splits, and a body from a template.

The header is written with PyYAML (``datasets`` and the hub read it); the body is ``card.md.jinja2``.
Nothing time- or machine-dependent goes in, so the same data always gives the same card.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from longbench100.core.version import __version__
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length
from longbench100.catalog.task_info import TASKS
from .parquet import ROW_GROUP_ROWS

TEMPLATE = "card.md.jinja2"
TASK_CATEGORIES = ["question-answering", "summarization", "text-generation"]


@dataclass(frozen=True)
class SplitFile:
    """One split of one config: a length label and its Parquet file in the snapshot."""

    task: str
    label: str
    path: str  # relative to the snapshot root, posix
    rows: int


def render_card(name: str, repo_id: str | None, splits: list[SplitFile], empty: list[tuple[str, str]], generation: dict) -> str:
    """The whole card: YAML header, then the body rendered from the template."""
    return f"---\n{card_header(name, splits, generation)}---\n\n{card_body(name, repo_id, splits, empty, generation)}"


def card_header(name: str, splits: list[SplitFile], generation: dict) -> str:
    """The YAML metadata: one config per task, one split per length label, plus hub metadata."""
    import yaml

    configs: dict[str, list[dict]] = {}
    for split in splits:
        configs.setdefault(split.task, []).append({"split": split.label, "path": split.path})
    repos = sorted({source["repo_id"] for source in generation["sources"].values() if source.get("repo_id")})
    header = {
        "pretty_name": name,
        "language": ["en"],
        "license": "other",
        "license_name": "per-source-licenses",
        "tags": ["long-context", "benchmark", "longbench100"],
        "task_categories": TASK_CATEGORIES,
        "size_categories": [_size_category(sum(split.rows for split in splits))],
        "source_datasets": repos,
        "configs": [{"config_name": task, "data_files": files} for task, files in configs.items()],
    }
    return yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)


def card_body(name: str, repo_id: str | None, splits: list[SplitFile], empty: list[tuple[str, str]], generation: dict) -> str:
    """The Markdown body: loading, configs and splits, record schema, provenance, licenses, scoring."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).resolve().parent), undefined=jinja2.StrictUndefined,
        autoescape=False, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
    )
    by_task: dict[str, list[SplitFile]] = {}
    for split in splits:
        by_task.setdefault(split.task, []).append(split)
    try:
        return environment.get_template(TEMPLATE).render(
            name=name,
            repo_id=repo_id,
            load_from=repo_id or "path/to/snapshot",
            example=splits[0],
            tasks=[{"name": task, "info": TASKS[task], "splits": items} for task, items in by_task.items()],
            labels=sorted({split.label for split in splits}, key=parse_length),
            empty=empty,
            total_rows=sum(split.rows for split in splits),
            publisher_version=__version__,
            generation=generation,
            options=generation["options"],
            tokenizer=generation["tokenizer"],
            lengths=generation.get("lengths", {}),
            sources=generation["sources"],
            missing_sources=generation.get("missing_sources", []),
            shortfalls=generation.get("shortfalls", []),
            qa_filter=generation.get("qa_filter"),
            generate_command=generate_command(generation["options"]),
            row_group_rows=ROW_GROUP_ROWS,
        )
    except jinja2.UndefinedError as error:
        raise UserError(f"the generation manifest lacks a field the card needs ({error.message})") from None


def generate_command(options: dict) -> str:
    """The ``longbench100 generate`` command line that reproduces the data from the same sources."""
    words = ["longbench100", "generate", "--sources", "SOURCES", "--out", "OUT",
             "--tasks", ",".join(options.get("tasks", [])), "--lengths", ",".join(options.get("lengths", [])),
             "--rows", str(options.get("rows")), "--seed", str(options.get("seed")), "--tokenizer", str(options.get("tokenizer"))]
    if options.get("whole_documents"):
        words.append("--whole-documents")
    if options.get("chat_template"):
        words.append("--chat-template")
    if options.get("reserve_output"):
        words += ["--reserve-output", str(options["reserve_output"])]
    if options.get("paired") is False:
        words.append("--unpaired")
    if options.get("templates") == "user folder":
        words += ["--templates", "TEMPLATES"]
    return " ".join(shlex.quote(word) for word in words)


def _size_category(rows: int) -> str:
    """The hub's size category for a number of rows."""
    for limit, category in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if rows < limit:
            return category
    return "1M<n<10M"
