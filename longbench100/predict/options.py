"""What one prediction run is asked to do (:class:`PredictOptions`), checked once, before any work.

``request_settings`` is the part of the options that shapes the answers (mode, sampling, limits,
system prompt, extra body fields); it is stored in every prediction record, and resuming a folder
whose records were made with other request settings is refused, so one folder never mixes answers
obtained under different settings.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from longbench100.core.errors import UserError
from longbench100.folders.layout import controls_folder, open_data_folder
from longbench100.llm.client import OWN_KEYS, RequestExtras


@dataclass(frozen=True)
class PredictOptions:
    """Everything one prediction run needs.

    ``max_new_tokens`` of ``None`` means each task's default; ``tasks`` / ``labels`` of ``None`` mean
    everything in the data folder; ``limit`` keeps the first N rows (by row number) of each task and
    length. ``system_prompt`` (chat mode only), ``top_p``, ``stop`` and ``extra_body`` are passed to
    the server with every request (see :class:`longbench100.llm.client.RequestExtras`).
    """

    data_dir: Path
    out_dir: Path
    model: str
    base_url: str
    api_key: str | None = None
    mode: str = "chat"
    concurrency: int = 8
    temperature: float = 0.0
    max_new_tokens: int | None = None
    tasks: list[str] | None = None
    labels: list[str] | None = None
    limit: int | None = None
    closed_book: bool = True
    retry_failed: bool = False
    system_prompt: str | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    extra_body: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 600.0
    max_retries: int = 6
    backoff_base_s: float = 1.0
    progress: bool | None = (
        None  # None: a bar on a terminal, plain progress lines elsewhere; False: nothing
    )
    wait: bool = False  # wait for another run writing the same --out instead of refusing
    more_base_urls: tuple[
        str, ...
    ] = ()  # further servers of the same model: requests go to the least busy
    # also predict the data's control twins (DATA/controls) into OUT/controls
    controls: bool = False

    def for_controls(self) -> "PredictOptions":
        """The same job over the data's control twins: ``DATA/controls`` into ``OUT/controls``
        (their closed-book prompts are the real samples', so they are not asked again); refused in
        one line when they are missing or differ from the data's manifest."""
        folder = controls_folder(self.data_dir)
        if not folder.is_dir():
            raise UserError(
                f"--controls: {self.data_dir} holds no control twins ({folder}); generate writes them "
                "unless --no-controls"
            )
        open_data_folder(folder, "--controls")
        return replace(
            self,
            data_dir=folder,
            out_dir=controls_folder(self.out_dir),
            closed_book=False,
            controls=False,
        )

    def servers(self) -> tuple[str, ...]:
        """Every server's API root, ``base_url`` first."""
        return (self.base_url, *self.more_base_urls)

    def extras(self) -> RequestExtras:
        """The request fields beyond prompt, ``max_tokens`` and ``temperature``."""
        return RequestExtras(
            self.system_prompt, self.top_p, tuple(self.stop), dict(self.extra_body)
        )


SETTING_FLAGS = {
    "mode": "--mode",
    "temperature": "--temperature",
    "max_new_tokens": "--max-new-tokens",
    "top_p": "--top-p",
    "stop": "--stop",
    "system_prompt": "--system-prompt",
    "extra_body": "--extra-body",
}
"""The request settings recorded with each prediction, and the option that sets each."""


def request_settings(options: PredictOptions) -> dict[str, Any]:
    """Return the settings that shape the answers, as stored in each record's ``request_settings``."""
    return {
        "mode": options.mode,
        "temperature": options.temperature,
        "max_new_tokens": options.max_new_tokens,
        "top_p": options.top_p,
        "stop": list(options.stop),
        "system_prompt": options.system_prompt,
        "extra_body": dict(options.extra_body),
    }


def changed_settings(stored: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Return the options (as flags) whose stored value differs from the current one."""
    return [flag for key, flag in SETTING_FLAGS.items() if stored.get(key) != current.get(key)]


def check_options(options: PredictOptions) -> None:
    """Raise UserError, in one line, for options that cannot make a run; return otherwise."""
    for url in options.servers():
        if not url.startswith(("http://", "https://")):
            raise UserError(f"bad --base-url {url!r}: expected http(s)://HOST[:PORT]/v1")
    if len(set(options.servers())) != len(options.servers()):
        raise UserError("--base-url: a server is given twice")
    if options.mode not in ("chat", "completion"):
        raise UserError(f"bad --mode {options.mode!r}: use chat or completion")
    if options.system_prompt is not None and options.mode != "chat":
        raise UserError(
            "--system-prompt needs --mode chat (in completion mode, put it in the prompt template)"
        )
    for value, flag in ((options.temperature, "--temperature"), (options.timeout_s, "--timeout")):
        if not math.isfinite(value):
            raise UserError(f"bad {flag} {value}: use a finite number")
    if options.top_p is not None and not 0 < options.top_p <= 1:
        raise UserError(f"bad --top-p {options.top_p}: use a number in (0, 1]")
    if options.limit is not None and options.limit < 1:
        raise UserError(f"bad --limit {options.limit}: use a positive number of rows")
    if any(not stop for stop in options.stop):
        raise UserError("bad --stop: an empty stop sequence")
    reserved = sorted(OWN_KEYS & set(options.extra_body))
    if reserved:
        raise UserError(
            f"--extra-body may not set {', '.join(reserved)}: use the option for it (or --model, or the data)"
        )


def _refuse_constant(name: str) -> None:
    """Refuse ``NaN`` and ``Infinity``, which JSON itself does not allow (no request could send
    them)."""
    raise ValueError(f"{name} is not a JSON number")


def parse_extra_body(text: str | None) -> dict[str, Any]:
    """Parse ``--extra-body`` JSON into a dict; anything but a JSON object is a one-line UserError."""
    if text is None:
        return {}
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except ValueError as error:
        raise UserError(f"bad --extra-body {text!r}: not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise UserError(
            f"bad --extra-body {text!r}: expected a JSON object, e.g. '{{\"top_k\": 20}}'"
        )
    return value
