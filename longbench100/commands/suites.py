"""``longbench100 suites``: list the packaged suites, or show one (or a suite file) in full."""

from __future__ import annotations

import click

from ..suites import Suite, load_all_suites, load_suite


@click.group(invoke_without_command=True)
@click.pass_context
def suites(ctx: click.Context) -> None:
    """List the suites: named sets of tasks with default lengths, base lengths and metrics (docs/suites.md).

    \b
    Examples:
      longbench100 suites                       one line per packaged suite and its tasks (or: suites list)
      longbench100 suites show 100-longbench    lengths, base lengths, metrics and overall
      longbench100 suites show my_suite.toml    check and show a suite file of your own
    """
    if ctx.invoked_subcommand is None:
        _print_suites()


@suites.command("list")
def list_suites() -> None:
    """One line per packaged suite and its tasks (the same as plain `longbench100 suites`)."""
    _print_suites()


def _print_suites() -> None:
    """Print one line per packaged suite: its name and tasks."""
    for suite in load_all_suites():
        click.echo(f"{suite.name}: {', '.join(suite.tasks)}")


@suites.command("show")
@click.argument("suite_spec", metavar="NAME|FILE")
def show_suite(suite_spec: str) -> None:
    """Print one suite: its tasks with their metrics, lengths, base lengths and how its overall is formed."""
    for line in describe(load_suite(suite_spec)):
        click.echo(line)


def describe(suite: Suite) -> list[str]:
    """The lines ``suites show`` prints."""
    lines = [f"suite {suite.name} ({suite.path}, sha256 {suite.sha256[:12]}...)"]
    if suite.description:
        lines.append(f"  {suite.description}")
    lines += [
        f"lengths: {', '.join(label for label, _ in suite.lengths)}",
        f"base lengths: {', '.join(suite.base_lengths)}",
        f"overall: {suite.overall_method} over {', '.join(suite.overall_tasks)}" if not suite.categories else
        "overall: mean of the categories " + "; ".join(f"{name} ({', '.join(members)})" for name, members in suite.categories.items()),
        *([f"judge style: {suite.judge_style}"] if suite.judge_style else []),
        "tasks (metric):",
    ]
    lines += [f"  {task} ({suite.metrics[task]})" for task in suite.tasks]
    return lines
