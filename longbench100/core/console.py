"""Where a command's words go: results on stdout; warnings, notes and progress on stderr.

Every command takes ``-q/--quiet`` (no progress bars or lines, no per-file chatter) and
``-v/--verbose`` (also log what the libraries do, HTTP requests included, on stderr); the CLI
adds both to each command it loads (:func:`add_verbosity_options`). Commands hand :func:`echo` to
the library calls that report as they go, so ``longbench100 score ... 2>/dev/null`` prints the
results alone.
"""

from __future__ import annotations

import logging
import sys

import click

QUIET, NORMAL, VERBOSE = -1, 0, 1
_META_KEY = "longbench100.verbosity"
_OPTION_NAMES = ("quiet", "verbose")
DIAGNOSTIC_PREFIXES = ("warning:", "note:")  # lines the library writes that are not results


def verbosity() -> int:
    """The running command's verbosity: :data:`QUIET`, :data:`NORMAL` or :data:`VERBOSE`."""
    context = click.get_current_context(silent=True)
    return context.meta.get(_META_KEY, NORMAL) if context is not None else NORMAL


def quiet() -> bool:
    """Whether the running command was given ``-q``: no progress bars or lines."""
    return verbosity() == QUIET


def echo(message: str = "") -> None:
    """Print one message of a command: a ``warning:`` or ``note:`` line on stderr, anything else
    (results, what was written) on stdout."""
    text = str(message)
    click.echo(text, err=text.startswith(DIAGNOSTIC_PREFIXES))


def _remember(context: click.Context, parameter: click.Parameter, value: bool) -> None:
    """Option callback: store the level ``-q`` or ``-v`` asks for; both is a usage error."""
    if not value:
        return
    level = QUIET if parameter.name == "quiet" else VERBOSE
    if context.meta.get(_META_KEY, level) != level:
        raise click.UsageError("-q/--quiet and -v/--verbose exclude each other", ctx=context)
    context.meta[_META_KEY] = level
    if level == VERBOSE:
        _log_to_stderr()


def _log_to_stderr() -> None:
    """Send every library's log records from INFO up to stderr, through one handler of ours."""
    root = logging.getLogger()
    for handler in [handler for handler in root.handlers if handler.get_name() == _META_KEY]:
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_META_KEY)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _options() -> list[click.Option]:
    """The two shared options, as click parameters that the command function never sees."""
    return [
        click.Option(
            ["-q", "--quiet"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_remember,
            help="No progress bars or lines (results, warnings and notes still print).",
        ),
        click.Option(
            ["-v", "--verbose"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_remember,
            help="Also log what the libraries do (HTTP requests included) on stderr.",
        ),
    ]


def add_verbosity_options(command: click.Command) -> click.Command:
    """Give ``command`` and, for a group, each subcommand ``-q/--quiet`` and ``-v/--verbose``."""
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            add_verbosity_options(subcommand)
    if not any(parameter.name in _OPTION_NAMES for parameter in command.params):
        command.params.extend(_options())
    return command
