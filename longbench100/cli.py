"""The ``longbench100`` command: a click group whose subcommands live in ``longbench100.commands``.

Subcommands are imported only when they run or show their own help (the group's help lists them
from :data:`COMMANDS`), so ``longbench100 generate`` never pays for importing plotting or HTTP
libraries. Every error prints as one ``error: ...`` line
(click's usage errors too, after the usage line); Ctrl-C and SIGTERM print one line and exit 130/143.
"""

import importlib
import sys

import click

from longbench100.core.errors import UserError, out_of_room
from longbench100.core.interrupts import (
    interrupt_exit_code,
    interrupt_message,
    sigterm_as_interrupt,
)
from longbench100.core.process_exit import run_and_leave
from longbench100.core.version import __version__

from .core.console import add_verbosity_options

# name -> ("module:attribute" under longbench100.commands, the command's summary), in the order help
# lists them. The summary is the first sentence of the command's docstring, kept here so that
# `longbench100 --help` lists the commands without importing any of them (a test checks they agree).
COMMANDS = {
    "sources": (
        "sources:sources",
        "Inspect the registry of upstream datasets (list, verify) and download them ahead of time (fetch).",
    ),
    "suites": (
        "suites:suites",
        "List the suites: named sets of tasks with default lengths, base lengths and metrics "
        "(docs/suites.md).",
    ),
    "generate": (
        "generate:generate",
        "Generate benchmark samples whose whole prompt fits an exact token budget.",
    ),
    "inspect": (
        "inspect:inspect",
        "Rows, prompt tokens (min/median/max), budget fill, gold depth and passages, pairing,"
        " sources and shortfalls of OUT.",
    ),
    "baselines": (
        "baselines:baselines",
        "Attack every task in DATA with strategies that never understand the context, and "
        "score them.",
    ),
    "predict": (
        "predict:predict",
        "Send every sample's prompt to an OpenAI-compatible server and write "
        "PRED/<task>/<label>.jsonl.",
    ),
    "score": (
        "score:score",
        "Score one model's predictions: metrics, QA filter, Base Ability and LongScore into "
        "results.json.",
    ),
    "filter": (
        "filter:filter_command",
        "Write a copy of a data folder without the QA items that any filter model answers "
        "closed-book.",
    ),
    "report": (
        "report:report",
        "Tabulate and plot Base Ability, scores and LongScore of the models in RESULTS "
        "(results.json files).",
    ),
    "show": (
        "show:show",
        "Print samples of RESULTS (a results.json from `longbench100 score`) for reading.",
    ),
    "coverage": (
        "coverage:coverage",
        "Measure information coverage: the share of each context that its query needs.",
    ),
    "dolce": (
        "dolce:dolce",
        "Which problems need retrieval and which need the whole context (the Dolce method).",
    ),
    "export": (
        "export:export",
        "Write a data folder as tasks another evaluation tool runs (lm-evaluation-harness).",
    ),
    "publish": (
        "publish:publish",
        "Write a dataset snapshot that `datasets.load_dataset` and the Hugging Face hub can use.",
    ),
    "verify-snapshot": (
        "publish:verify_snapshot",
        "Recompute the sha256 of every file listed in SNAPSHOT/manifest.json, and rebuild the data files.",
    ),
}


class _LazyGroup(click.Group):
    """A click group that imports subcommands on demand and reports errors in one style.

    :class:`UserError` and click's own errors print ``error: ...`` (exit 2, or click's code); an
    interrupt prints its hint (exit 130 for Ctrl-C, 143 for SIGTERM).
    """

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # noqa: D102 - click API
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            _show_click_error(error)
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: D102 - click API
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:  # noqa: D102 - click API
        if name not in COMMANDS:
            return None
        module_name, attribute = COMMANDS[name][0].split(":")
        module = importlib.import_module(f"longbench100.commands.{module_name}")
        command = getattr(module, attribute)
        return add_verbosity_options(command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their summaries from :data:`COMMANDS`, importing none of them."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [
            (name, click.Command(name, help=summary).get_short_help_str(limit))
            for name, (_, summary) in COMMANDS.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):  # noqa: D102 - click API
        try:
            with sigterm_as_interrupt():
                return super().invoke(ctx)
        except UserError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(2)
        except OSError as error:
            room = out_of_room(error)
            if room is None:
                raise
            happened, remedy = room
            where = f" while writing {error.filename}" if error.filename else ""
            click.echo(
                f"error: {happened}{where}: {remedy}, then run the same command again "
                "(generate continues with --resume, predict where it stopped)",
                err=True,
            )
            sys.exit(2)
        except KeyboardInterrupt as stop:
            click.echo(interrupt_message(stop), err=True)
            sys.exit(interrupt_exit_code(stop))


def _show_click_error(error: click.ClickException) -> None:
    """Print a click error in our style: the usage and help hint for a usage error, then ``error: ...``."""
    context = getattr(error, "ctx", None)
    if isinstance(error, click.UsageError) and context is not None:
        click.echo(context.get_usage(), err=True)
        if context.help_option_names:
            click.echo(
                f"Try '{context.command_path} {context.help_option_names[0]}' for help.", err=True
            )
    click.echo(f"error: {error.format_message()}", err=True)


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="longbench100")
def main() -> None:
    """Generate length-controlled long-context benchmarks and score models with LongScore.

    \b
    Typical flow:
      longbench100 sources verify --sources DIR      check the upstream datasets
      longbench100 generate --sources DIR --out OUT  build prompts at exact token lengths
      longbench100 predict --data OUT ...            query an OpenAI-compatible server
      longbench100 score --data OUT --predictions P  metrics, Base Ability and LongScore
      longbench100 report results/*.json             tables and plots
    """


def entry() -> None:
    """The console command: :func:`main`, then an exit that skips freeing what the command loaded
    (:mod:`longbench100.core.process_exit`)."""
    run_and_leave(main)


if __name__ == "__main__":
    entry()
