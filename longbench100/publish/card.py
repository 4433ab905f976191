"""The dataset card (``SNAPSHOT/README.md``): a YAML header declaring configs and splits, and a body from a template.

The header is built with huggingface_hub's :class:`DatasetCardData` (``dataset_info`` from
``datasets``' own :class:`DatasetInfo`), and the whole card is read back with :class:`DatasetCard`
and checked before it is written; the body is ``card.md.jinja2``. Nothing time- or
machine-dependent goes in, so the same data always gives the same card.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from longbench100.catalog.task_info import TASKS
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length
from longbench100.core.version import __version__

from .parquet import ROW_GROUP_BYTES, ROW_GROUP_ROWS

if TYPE_CHECKING:
    import datasets
    import huggingface_hub
    import pyarrow

TEMPLATE = "card.md.jinja2"
TASK_CATEGORIES = ["question-answering", "summarization", "text-generation"]
LICENSE_LINK = "README.md#source-datasets-and-licenses"  # the card's license section
HEADER_FIRST = ["pretty_name"]  # the card's YAML opens with its name
BUNDLED_REVISION = "packaged"  # sources shipped in the package (the demo), not on the hub
TWINS_CONFIG_SUFFIX = "_controls"  # a task's control twins are the config <task>_controls


def config_name(task: str, twins: bool = False) -> str:
    """The config of a task's data (the task's name) or of its control twins
    (``<task>_controls``)."""
    return f"{task}{TWINS_CONFIG_SUFFIX}" if twins else task


@dataclass(frozen=True)
class SplitFile:
    """One split of one config: a length label and its Parquet file in the snapshot."""

    task: str
    label: str
    path: str  # relative to the snapshot root, posix
    rows: int
    num_bytes: int  # uncompressed size of its row groups
    file_bytes: int  # size of the Parquet file
    sha256: str  # of the Parquet file
    twins: bool = False  # the task's control twins, not its data

    @property
    def config(self) -> str:
        """The config this split belongs to (:func:`config_name`)."""
        return config_name(self.task, self.twins)


@dataclass(frozen=True)
class ConfigSchema:
    """One config's columns: its Arrow schema and the columns it stores as JSON text."""

    schema: pyarrow.Schema
    json_columns: tuple[str, ...]


def json_columns_by_task(schemas: dict[str, ConfigSchema]) -> dict[str, list[str]]:
    """The configs that keep a column as JSON text, with those columns."""
    return {
        config: list(schema.json_columns)
        for config, schema in schemas.items()
        if schema.json_columns
    }


def render_card(
    name: str,
    repo_id: str | None,
    splits: list[SplitFile],
    empty: list[tuple[str, str]],
    generation: dict,
    schemas: dict[str, ConfigSchema],
    controls: bool = False,
) -> str:
    """The whole card: YAML header, then the body rendered from the template; read back with
    :class:`huggingface_hub.DatasetCard` and checked to declare what was written. ``splits`` and
    ``schemas`` hold the control twins' configs too when ``controls`` (``publish --controls``)."""
    header = card_data(name, splits, generation, schemas)
    body = card_body(name, repo_id, splits, empty, generation, schemas, controls)
    text = f"---\n{header.to_yaml(original_order=HEADER_FIRST)}\n---\n\n{body}"
    check_card(text, header.to_dict())
    return text


def card_data(
    name: str, splits: list[SplitFile], generation: dict, schemas: dict[str, ConfigSchema]
) -> huggingface_hub.DatasetCardData:
    """The metadata: one config per task (the first is the default) and one per task's control
    twins after them, one split per length label, each config's features and split sizes
    (``dataset_info``), licenses and the hub repositories read."""
    from huggingface_hub import DatasetCardData

    configs: dict[str, list[dict]] = {}
    for split in sorted(splits, key=lambda split: split.twins):
        configs.setdefault(split.config, []).append({"split": split.label, "path": split.path})
    repos = sorted(
        {
            source["repo_id"]
            for source in generation["sources"].values()
            if source.get("repo_id") and source.get("revision") != BUNDLED_REVISION
        }
    )
    data = DatasetCardData(
        pretty_name=name,
        language=["en"],
        license="other",
        license_name="per-source-licenses",
        license_link=LICENSE_LINK,
        tags=["long-context", "benchmark", "longbench100"],
        task_categories=TASK_CATEGORIES,
        size_categories=[_size_category(sum(split.rows for split in splits))],
        source_datasets=repos or None,
        configs=[
            {"config_name": task, **({"default": True} if index == 0 else {}), "data_files": files}
            for index, (task, files) in enumerate(configs.items())
        ],
    )
    _dataset_infos(splits, schemas).to_dataset_card_data(data)
    return data


def _dataset_infos(
    splits: list[SplitFile], schemas: dict[str, ConfigSchema]
) -> datasets.info.DatasetInfosDict:
    """``datasets``' description of every config: its features and each split's rows and sizes."""
    from datasets import Features, SplitDict, SplitInfo
    from datasets.info import DatasetInfo, DatasetInfosDict

    infos = DatasetInfosDict()
    for config, schema in schemas.items():
        items = [split for split in splits if split.config == config]
        if not items:
            continue
        infos[config] = DatasetInfo(
            features=Features.from_arrow_schema(schema.schema),
            splits=SplitDict(
                {
                    split.label: SplitInfo(split.label, split.num_bytes, split.rows)
                    for split in items
                }
            ),
            download_size=sum(split.file_bytes for split in items),
            dataset_size=sum(split.num_bytes for split in items),
        )
    return infos


def check_card(text: str, expected: dict) -> None:
    """Read ``text`` back with :class:`huggingface_hub.DatasetCard` (metadata errors raise) and
    check that it declares ``expected``; an :class:`AssertionError` here is a bug in the card
    writer."""
    from huggingface_hub import DatasetCard

    parsed = DatasetCard(text, ignore_metadata_errors=False).data.to_dict()
    if parsed != expected:
        raise AssertionError("the dataset card's metadata does not read back as written")


def card_body(
    name: str,
    repo_id: str | None,
    splits: list[SplitFile],
    empty: list[tuple[str, str]],
    generation: dict,
    schemas: dict[str, ConfigSchema],
    controls: bool = False,
) -> str:
    """The Markdown body: loading, configs and splits, record schema, the control twins (or that
    there are none), provenance, licenses, scoring."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).resolve().parent),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    data = [split for split in splits if not split.twins]
    twins = [split for split in splits if split.twins]
    by_task: dict[str, list[SplitFile]] = {}
    for split in data:
        by_task.setdefault(split.task, []).append(split)
    by_config: dict[str, list[SplitFile]] = {}
    for split in twins:
        by_config.setdefault(split.config, []).append(split)
    try:
        return environment.get_template(TEMPLATE).render(
            name=name,
            repo_id=repo_id,
            load_from=repo_id or "path/to/snapshot",
            example=data[0],
            tasks=[
                {"name": task, "info": TASKS[task], "splits": items}
                for task, items in by_task.items()
            ],
            labels=sorted({split.label for split in data}, key=parse_length),
            empty=empty,
            total_rows=sum(split.rows for split in data),
            controls=controls,
            twins=twins,
            twin_configs=[{"name": config, "splits": items} for config, items in by_config.items()],
            twin_rows=sum(split.rows for split in twins),
            twin_sources=_twin_sources(generation),
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
            row_group_mib=ROW_GROUP_BYTES // 2**20,
            json_columns=json_columns_by_task(schemas),
        )
    except jinja2.UndefinedError as error:
        raise UserError(
            f"the generation manifest lacks a field the card needs ({error.message})"
        ) from None


def _twin_sources(generation: dict) -> dict[str, str]:
    """The sha256 of each control twin file of the data folder, by its path there."""
    listed = (generation.get("controls") or {}).get("files") or {}
    return {relative: entry.get("sha256", "?") for relative, entry in listed.items()}


def generate_command(options: dict) -> str:
    """The ``longbench100 generate`` command line that reproduces the data from the same sources."""
    words = [
        "longbench100",
        "generate",
        "--sources",
        "SOURCES",
        "--out",
        "OUT",
        "--tasks",
        ",".join(options.get("tasks", [])),
        "--lengths",
        ",".join(options.get("lengths", [])),
        "--rows",
        str(options.get("rows")),
        "--seed",
        str(options.get("seed")),
        "--tokenizer",
        str(options.get("tokenizer")),
    ]
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
    for limit, category in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < limit:
            return category
    return "1M<n<10M"
