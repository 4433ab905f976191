"""``longbench100 sources``: list and verify the registered upstream datasets.

The loaders are imported when a subcommand runs, so ``sources --help`` starts at once.
"""

from __future__ import annotations

import sys
import time

import click

from longbench100.catalog.suites import Suite, load_all_suites, suites_of_task
from longbench100.core.errors import HubUnreachable, SourceAbsent, UserError
from longbench100.core.hub_access import hub_offline, is_commit
from longbench100.core.paths import CACHE_HINT, cache_dir
from longbench100.folders.writable import ensure_writable_dir
from longbench100.sources.fetch import fetch_planned, plan_fetch
from longbench100.sources.loader import load_source
from longbench100.sources.locations import (
    MIRROR_HINT,
    SOURCES_ENV,
    SourceLocation,
    active_entries,
    resolve_location,
)
from longbench100.sources.registry import SourceEntry
from longbench100.sources.source_shingles import keep_source_shingles
from longbench100.sources.token_cache import attach_token_counts
from longbench100.text.tokenization import DEFAULT_TOKENIZER, load_tokenizer

SOURCES_HELP = f"Where to read sources: 'hub' (default), 'demo' (built-in demo pack), or a local mirror folder DIR/<repo id>/<path>. Default: ${SOURCES_ENV}, else hub."


@click.group()
def sources() -> None:
    """Inspect the registry of upstream datasets (list, verify) and download them ahead of time
    (fetch)."""


@sources.command("list")
@click.option("--sources", "sources_option", metavar="DIR|demo|hub", help=SOURCES_HELP)
@click.option(
    "--counts",
    is_flag=True,
    help="Also load each available source and show its document and item counts.",
)
def list_sources(sources_option: str | None, counts: bool) -> None:
    """One line per registered source: name, availability, task roles, the suites those tasks belong to
    (and record counts with --counts)."""
    from longbench100.sources.locations import resolve_location

    location = resolve_location(sources_option)
    known_suites = load_all_suites()
    registry = location.registry()
    active = active_entries(location, registry, ask_hub=False)
    offline = ", offline: HF_HUB_OFFLINE is set" if location.kind == "hub" and hub_offline() else ""
    click.echo(
        f"registry: {location.registry_dir}  ({len(registry)} entries; "
        f"reading from {location.describe()}{offline})"
    )
    for name, entry in registry.items():
        status = _availability(location, entry, registry, active)
        line = (
            f"{_label(entry):<28} {status:<34} {_pinned(entry):<44} {_roles(entry)}  "
            f"[suites: {_suites(entry, known_suites)}]"
        )
        if counts and name in active:
            data = load_source(location, entry)
            line += f"  [{len(data.documents)} docs, {len(data.items)} items]"
        click.echo(line)


@sources.command("verify")
@click.option("--sources", "sources_option", metavar="DIR|demo|hub", help=SOURCES_HELP)
@click.option(
    "--tokenizer",
    "tokenizer_spec",
    default=DEFAULT_TOKENIZER,
    show_default=True,
    help="Tokenizer for the length statistics (tiktoken name or hf:<id|path>).",
)
@click.option("--strict", is_flag=True, help="Also fail when any registered source is absent.")
def verify_sources(sources_option: str | None, tokenizer_spec: str, strict: bool) -> None:
    """Load every available source and print record counts and token lengths (min/median/max).

    Columns: documents, items, empty records skipped, duplicate items dropped (identical document
    texts, question and reference), items dropped by the source's answerability rules (one line per
    rule below the table), then document token lengths; below the table, per source, how many texts each
    of its cleaning steps changed.

    Exits with status 1 when a present source is malformed, or (with --strict) when a registered
    source is absent. Token counts and the documents' shingles (what near-duplicate groups
    compare) are cached, so a second run, and a later `generate`, is fast.
    """
    import statistics

    from longbench100.sources.answerability import rule_counts_line
    from longbench100.sources.locations import resolve_location

    location = resolve_location(sources_option)
    # token counts and source digests are kept in the cache folder
    ensure_writable_dir(cache_dir(), f"the cache folder ({CACHE_HINT})")
    tokenizer = load_tokenizer(tokenizer_spec)
    registry = location.registry()
    active = active_entries(location, registry)
    click.echo(f"sources: {location.describe()}   tokenizer: {tokenizer.spec}")
    click.echo(
        f"{'source':<28} {'docs':>7} {'items':>6} {'empty':>5} {'dups':>5} {'unans':>5} {'tok min':>8} {'median':>8} {'max':>8}  cache"
    )
    failures, absent, loaded, unanswerable, cleaned = [], [], 0, {}, {}
    started = time.perf_counter()
    for name, entry in registry.items():
        if name not in active:
            if entry.stand_in_for and entry.stand_in_for in active:
                click.echo(
                    f"{_label(entry):<28} stand-in, unused ({entry.stand_in_for} is available)"
                )
            else:
                absent.append(name)
                click.echo(f"{_label(entry):<28} missing: source {name}: {location.absence(entry)}")
            continue
        if not sys.stderr.isatty():  # a log is told each load as it starts (a cold one is slow)
            click.echo(f"{name}: loading and counting tokens ...", err=True)
        try:
            data = load_source(location, entry)
            hit = attach_token_counts(tokenizer, entry, data)
            keep_source_shingles(entry, data)  # what a later run's near-duplicate groups read
        except HubUnreachable:
            raise
        except SourceAbsent as error:
            absent.append(name)
            click.echo(f"{_label(entry):<28} missing: {error}")
            continue
        except UserError as error:
            failures.append(name)
            click.echo(f"{_label(entry):<28} MALFORMED: {error}")
            continue
        loaded += 1
        if data.unanswerable:
            unanswerable[name] = data.unanswerable
        if data.cleaned:
            cleaned[name] = data.cleaned
        lengths = sorted(document.tokens for document in data.documents.values()) or [0]
        click.echo(
            f"{_label(entry):<28} {len(data.documents):>7} {len(data.items):>6} {data.skipped_empty:>5} {data.duplicate_items:>5} {sum(data.unanswerable.values()):>5} "
            f"{lengths[0]:>8} {int(statistics.median(lengths)):>8} {lengths[-1]:>8}  {'hit' if hit else 'counted'}"
        )
    for name, counts in unanswerable.items():
        click.echo(f"unanswerable {name}: {rule_counts_line(counts)}")
    for name, counts in cleaned.items():
        click.echo(
            f"cleaned {name}: "
            + ", ".join(f"{step} {count}" for step, count in counts.items())
            + " texts changed"
        )
    if tokenizer.loaded:
        click.echo(f"tokenizer {tokenizer.spec} loaded from {tokenizer.origin}")
    click.echo(
        f"{loaded} sources loaded, {len(absent)} missing, {len(failures)} malformed in {time.perf_counter() - started:.1f}s"
    )
    if failures or (strict and absent):
        sys.exit(1)
    if loaded == 0:
        raise UserError(f"no registered source is in {location.describe()}: {MIRROR_HINT}")


@sources.command("fetch")
@click.option(
    "--suite",
    "suite_name",
    metavar="SUITE",
    help="Download what this suite's tasks read (see `suites list`).",
)
@click.option(
    "--sources-list",
    "names",
    metavar="NAME,...",
    help="Download these registered sources (comma-separated).",
)
def fetch_sources(suite_name: str | None, names: str | None) -> None:
    """Download from the hub, ahead of time, every file a suite (or the named sources) reads: the
    total size is said first, then each file with progress. The hub cache it leaves lets `generate`
    run offline (HF_HUB_OFFLINE=1). Stand-ins are fetched only where their primary is not on the
    hub."""
    if (suite_name is None) == (names is None):
        raise UserError("sources fetch: name either --suite SUITE or --sources-list NAME,...")
    location = resolve_location("hub")
    wanted = None if names is None else [name.strip() for name in names.split(",") if name.strip()]
    plan = plan_fetch(location, suite_name=suite_name, names=wanted)
    for line in plan.notes:
        click.echo(line)
    click.echo(plan.summary())
    fetch_planned(plan.files, click.echo)
    if plan.unmet:
        offline = " (HF_HUB_OFFLINE is set: unset it to download)" if hub_offline() else ""
        unmet = len(plan.unmet)
        raise UserError(
            f"sources fetch: {unmet} needed source{'s' * (unmet != 1)} could not be "
            f"fetched{offline}: {', '.join(plan.unmet)} (the 'left out' lines say "
            f"why); {plan.counted()} are in the hub cache"
        )
    click.echo(f"done: {plan.counted()} in the hub cache (HF_HUB_OFFLINE=1 runs read them there)")


def _pinned(entry: SourceEntry) -> str:
    """``repo@commit`` (the commit shortened), or the branch with a warning when the entry is not
    pinned."""
    if is_commit(entry.revision):
        return f"{entry.repo_id}@{entry.revision[:12]}"
    return f"{entry.repo_id}@{entry.revision} (NOT PINNED)"


def _label(entry: SourceEntry) -> str:
    """``9 cnn_dailymail`` style label (stand-ins have no number)."""
    return f"{entry.number if entry.number is not None else '-':>2} {entry.name}"


def _roles(entry: SourceEntry) -> str:
    """Compact roles: ``single_doc_qa(real,noisy) kv_retrieval(noisy)``."""
    by_task: dict[str, list[str]] = {}
    for role in entry.roles:
        task, _, kind = role.partition(":")
        by_task.setdefault(task, []).append(kind)
    return " ".join(f"{task}({','.join(kinds)})" for task, kinds in by_task.items())


def _suites(entry: SourceEntry, known_suites: list[Suite]) -> str:
    """The suites whose tasks this source serves, or ``none``."""

    tasks = dict.fromkeys(role.partition(":")[0] for role in entry.roles)
    names = dict.fromkeys(name for task in tasks for name in suites_of_task(task, known_suites))
    return ", ".join(names) or "none"


def _availability(
    location: SourceLocation, entry: SourceEntry, registry: dict, active: dict
) -> str:
    """Where the entry's files are, or why it is not used."""
    if location.kind == "hub" and entry.not_on_hub:
        state = "not read from the hub"
    elif location.kind == "hub":
        state = (
            "cached"
            if location.is_available(entry)
            else "not cached (offline)"
            if hub_offline()
            else "hub (download on use)"
        )
    else:
        state = "available" if location.is_available(entry) else "missing"
    if entry.stand_in_for:
        used = "used" if entry.name in active else "unused"
        state = f"{state}, stand-in for {entry.stand_in_for} ({used})"
    return state
