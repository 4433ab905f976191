"""One CLI option group for a model endpoint: the LLM judge, the annotator, the coverage evaluator.

Each role gets the same five options under its own prefix (``--judge-model``, ``--judge-base-url``,
``--judge-api-key-env``, ``--judge-concurrency``, ``--judge-max-tokens``), with the role's defaults
and help; the annotator adds ``--annotator-loop-penalty``. The command receives one
:class:`~longbench100.llm.options.JudgeOptions` under the role's name instead of loose parameters.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from longbench100.llm.options import ANNOTATOR_LOOP_PENALTY, ANNOTATOR_MAX_TOKENS, JudgeOptions

_DEFAULTS = JudgeOptions()


@dataclass(frozen=True)
class EndpointRole:
    """What differs between the roles: the option prefix, the help wording, the reply budget and
    whether replies that loop to the budget are asked again (``--<role>-loop-penalty``)."""

    name: str
    """The option prefix and the name of the command's parameter that receives the options."""
    model_help: str
    max_tokens: int
    max_tokens_note: str = ""
    loop_penalty: bool = False


ROLES = {
    role.name: role
    for role in (
        EndpointRole(
            "judge",
            model_help="Judge model name on the OpenAI-compatible server.",
            max_tokens=_DEFAULTS.max_tokens,
        ),
        EndpointRole(
            "annotator",
            model_help="Model that labels each chunk of the one-document ETHIC tasks "
            "(recalling, organizing, section_summarizing): a summary, or the people "
            "(legal references in contracts) it names, per chunk of at most 1,024 "
            "tokens; replies are cached by model and prompt. Those tasks are refused "
            "without it.",
            max_tokens=ANNOTATOR_MAX_TOKENS,
            max_tokens_note=" (a cut-off reply is no label)",
            loop_penalty=True,
        ),
        EndpointRole(
            "evaluator",
            model_help="Evaluator model on an OpenAI-compatible server: one 0/1 decision per "
            "chunk.",
            max_tokens=400,
        ),
    )
}
"""The endpoint roles by name: ``judge`` (score, filter), ``annotator`` (generate) and
``evaluator`` (coverage)."""


def _options(role: EndpointRole) -> list[Callable]:
    """The click options of ``role``, in the order ``--help`` lists them."""
    prefix = f"--{role.name}"
    options = [
        click.option(f"{prefix}-model", help=role.model_help),
        click.option(
            f"{prefix}-base-url",
            default=_DEFAULTS.base_url,
            show_default=True,
            help=f"API root of the {role.name}'s OpenAI-compatible server "
            "(e.g. http://127.0.0.1:8080/v1).",
        ),
        click.option(
            f"{prefix}-api-key-env",
            default=_DEFAULTS.api_key_env,
            show_default=True,
            help=f"Environment variable holding the {role.name} API key "
            "(optional for local servers).",
        ),
        click.option(
            f"{prefix}-concurrency",
            type=click.IntRange(1),
            default=_DEFAULTS.concurrency,
            show_default=True,
            help=f"{role.name.capitalize()} calls in flight at once.",
        ),
        click.option(
            f"{prefix}-max-tokens",
            type=click.IntRange(16),
            default=role.max_tokens,
            show_default=True,
            help=f"Reply budget of one {role.name} call{role.max_tokens_note}.",
        ),
    ]
    if role.loop_penalty:
        options.append(
            click.option(
                f"{prefix}-loop-penalty",
                type=click.FloatRange(0, 2),
                default=ANNOTATOR_LOOP_PENALTY,
                show_default=True,
                help=f"A reply that runs to {prefix}-max-tokens with nothing usable (a small model "
                "repeating itself) is asked once more with this OpenAI frequency_penalty, still "
                "greedy; 0 asks once only.",
            )
        )
    return options


def _settings(role: EndpointRole, values: dict[str, Any]) -> JudgeOptions:
    """Take the role's option values out of ``values`` (a command's keyword arguments) as one
    :class:`JudgeOptions` (an empty model name is no model)."""

    def take(option: str) -> Any:
        return values.pop(f"{role.name}_{option}")

    return JudgeOptions(
        take("model") or None,
        take("base_url"),
        take("api_key_env"),
        take("concurrency"),
        take("max_tokens"),
        take("loop_penalty") if role.loop_penalty else _DEFAULTS.loop_penalty,
    )


def endpoint_options(role: str) -> Callable[[Callable], Callable]:
    """A decorator that adds the endpoint options of ``role`` (a key of :data:`ROLES`) to a click
    command and passes the command one :class:`JudgeOptions` as the keyword argument ``role``."""
    spec = ROLES[role]

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def with_endpoint(*args: Any, **values: Any) -> Any:
            settings = _settings(spec, values)
            return command(*args, **values, **{spec.name: settings})

        for option in reversed(_options(spec)):
            with_endpoint = option(with_endpoint)
        return with_endpoint

    return decorate
