"""The ``longbench100`` command: a click group whose subcommands live in ``longbench100.commands``.

Subcommands are imported only when they run (or when help lists them), so ``longbench100 generate``
never pays for importing plotting or HTTP libraries.
"""

import importlib
import sys

import click

from . import __version__
from .errors import UserError

# name -> "module:attribute" under longbench100.commands, in the order help lists them.
COMMANDS = {
    "sources": "sources:sources",
    "generate": "generate:generate",
    "inspect": "inspect:inspect",
    "predict": "predict:predict",
    "score": "score:score",
    "filter": "filter:filter_command",
    "report": "report:report",
    "show": "show:show",
    "coverage": "coverage:coverage",
    "dolce": "dolce:dolce",
    "publish": "publish:publish",
    "verify-snapshot": "publish:verify_snapshot",
}


class _LazyGroup(click.Group):
    """A click group that imports subcommands on demand and reports :class:`UserError` as one line (exit 2)."""

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: D102 - click API
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:  # noqa: D102 - click API
        if name not in COMMANDS:
            return None
        module_name, attribute = COMMANDS[name].split(":")
        return getattr(importlib.import_module(f"longbench100.commands.{module_name}"), attribute)

    def invoke(self, ctx: click.Context):  # noqa: D102 - click API
        try:
            return super().invoke(ctx)
        except UserError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(2)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
