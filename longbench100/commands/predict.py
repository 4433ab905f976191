"""``longbench100 predict``: query an OpenAI-compatible server for every generated sample, resumably."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from longbench100.catalog.task_info import parse_task_list
from longbench100.core import console
from longbench100.core.errors import UserError
from longbench100.core.lengths import parse_length_list

from .data_folder_option import data_folder_option

OPENAI_BASE_URL = "OPENAI_BASE_URL"  # the environment variables the OpenAI SDK reads
OPENAI_API_KEY = "OPENAI_API_KEY"


def _max_new_tokens(text: str) -> int | None:
    """Parse ``auto`` (``None``: each task's default) or a positive token count."""
    if text.strip().lower() == "auto":
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise UserError(f"bad --max-new-tokens {text!r}: use auto or a positive number of tokens")
    return int(text)


def _api_key(variable: str | None) -> str | None:
    """Read the API key from the named environment variable; without one, from ``OPENAI_API_KEY``
    as the OpenAI SDK does (none when it is unset or empty: local servers need no key)."""
    if variable is None:
        return os.environ.get(OPENAI_API_KEY, "").strip() or None
    value = os.environ.get(variable, "").strip()
    if not value:
        raise UserError(
            f"--api-key-env {variable}: environment variable {variable} is not set or empty"
        )
    return value


@click.command(context_settings={"show_default": True})
@data_folder_option("Folder from `generate`.")
@click.option(
    "--model",
    required=True,
    help="Model name as the server knows it (vLLM: as given to `vllm serve`).",
)
@click.option(
    "--base-url",
    "base_urls",
    multiple=True,
    help="API root, e.g. http://127.0.0.1:8000/v1. Give it several times for replicas of one model: each "
    "request goes to the least busy server, a dead one is dropped and its "
    "requests sent elsewhere.  [default: $OPENAI_BASE_URL]",
)
@click.option(
    "--base-urls-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A file of API roots, one per line (# starts a comment), added to the --base-url ones.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Prediction folder (per model).",
)
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="Environment variable holding the API key.  "
    "[default: OPENAI_API_KEY when set, else send none]",
)
@click.option(
    "--mode",
    type=click.Choice(["chat", "completion"]),
    default="chat",
    help="chat: the server applies the model's chat template; completion: prompts are sent verbatim "
    "(use it for data generated with --chat-template or for base models).",
)
@click.option(
    "--concurrency", type=click.IntRange(min=1), default=8, help="Most requests in flight at once."
)
@click.option(
    "--temperature", type=click.FloatRange(min=0), default=0.0, help="Sampling temperature."
)
@click.option(
    "--max-new-tokens",
    "max_new_tokens_text",
    default="auto",
    help="Answer length limit: auto (per task: 32-64 retrieval, 128 QA, 512 summaries) or a number.",
)
@click.option("--tasks", default="all", help="Comma-separated task names, or all.")
@click.option(
    "--lengths",
    default=None,
    help="Comma-separated length labels, e.g. 2k,4k,8k  [default: all in --data]",
)
@click.option(
    "--closed-book/--no-closed-book",
    default=True,
    help="Also ask QA questions without their passages (needed for the QA filter at scoring).",
)
@click.option(
    "--controls",
    is_flag=True,
    help="Also predict the control twins of the data (DATA/controls, written by generate) "
    "into OUT/controls, for score --controls.",
)
@click.option(
    "--retry-failed", is_flag=True, help="Redo samples recorded with an error by an earlier run."
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Only the first N rows (by row number) of each task and "
    "length, for smoke runs; a later run without it does the rest.  [default: all]",
)
@click.option(
    "--system-prompt",
    default=None,
    help="A system message sent before each prompt (chat mode only).",
)
@click.option(
    "--top-p",
    type=click.FloatRange(min=0, max=1, min_open=True),
    default=None,
    help="Nucleus sampling top_p sent to the server.  [default: the server's]",
)
@click.option(
    "--stop", multiple=True, help="A stop sequence sent to the server; repeat for several."
)
@click.option(
    "--extra-body",
    "extra_body_text",
    metavar="JSON",
    default=None,
    help="A JSON object merged into every request body, e.g. '{\"top_k\": 20}' (vLLM sampling extras).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    default=600.0,
    help="Seconds per request.",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=6,
    help="Retries on 429, 5xx, timeouts, connection errors.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    show_default=False,
    help="Progress: a bar on a terminal, plain lines on stderr otherwise [default: shown]",
)
@click.option(
    "--wait",
    is_flag=True,
    help="When another run is writing the same --out, wait for it instead of refusing.",
)
def predict(
    data_dir: Path,
    model: str,
    base_urls: tuple[str, ...],
    base_urls_file: Path | None,
    out_dir: Path,
    api_key_env: str | None,
    mode: str,
    concurrency: int,
    temperature: float,
    max_new_tokens_text: str,
    tasks: str,
    lengths: str | None,
    closed_book: bool,
    controls: bool,
    retry_failed: bool,
    limit: int | None,
    system_prompt: str | None,
    top_p: float | None,
    stop: tuple[str, ...],
    extra_body_text: str | None,
    timeout_s: float,
    max_retries: int,
    progress: bool | None,
    wait: bool,
) -> None:
    """Send every sample's prompt to an OpenAI-compatible server and write PRED/<task>/<label>.jsonl.

    Works with vLLM, SGLang and hosted APIs. Answers are appended as they arrive; rerunning the same
    command resumes where it stopped (even after kill -9); a sample that is redone keeps its old
    record until the new one is written. Failed requests are retried with backoff; a prompt the
    server rejects (e.g. longer than its context) is recorded with the error and the run goes on,
    while a server that stops answering stops the run. Exits 1 when any sample stays failed
    (rerun with --retry-failed), 2 on a usage error. The request settings (--mode, --temperature,
    --max-new-tokens, --top-p, --stop, --system-prompt, --extra-body) are recorded with each answer,
    and a rerun into the same --out must use the same ones. See docs/predict.md.

    \b
    Example:
      vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 34000 &
      longbench100 predict --data out --model Qwen/Qwen2.5-7B-Instruct \\
          --base-url http://127.0.0.1:8000/v1 --lengths 2k,4k,6k,8k,16k,32k --out preds/qwen7b
    """
    from longbench100.predict.run import failure_message, run_predict

    from ..predict.options import PredictOptions, parse_extra_body

    servers = _servers(base_urls, base_urls_file)
    options = PredictOptions(
        data_dir=data_dir,
        out_dir=out_dir,
        model=model,
        base_url=servers[0],
        more_base_urls=servers[1:],
        api_key=_api_key(api_key_env),
        mode=mode,
        concurrency=concurrency,
        temperature=temperature,
        max_new_tokens=_max_new_tokens(max_new_tokens_text),
        tasks=None if tasks.strip() == "all" else parse_task_list(tasks),
        labels=None if lengths is None else [label for label, _ in parse_length_list(lengths)],
        limit=limit,
        closed_book=closed_book,
        retry_failed=retry_failed,
        system_prompt=system_prompt,
        top_p=top_p,
        stop=stop,
        extra_body=parse_extra_body(extra_body_text),
        timeout_s=timeout_s,
        max_retries=max_retries,
        progress=False if console.quiet() else progress,
        wait=wait,
        controls=controls,
    )
    # Ctrl-C / SIGTERM: the CLI prints the resume hint, exit 130 / 143
    summary = run_predict(options, echo=console.echo)
    failure = failure_message(summary, options)
    if failure is not None:
        click.echo(f"error: {failure}", err=True)
        sys.exit(1)


def _servers(base_urls: tuple[str, ...], urls_file: Path | None) -> tuple[str, ...]:
    """The API roots of ``--base-url`` (repeated) and ``--base-urls-file``, in order; without
    either, ``$OPENAI_BASE_URL`` as the OpenAI SDK reads it; at least one."""
    servers = list(base_urls)
    if urls_file is not None:
        try:
            lines = urls_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise UserError(f"--base-urls-file {urls_file}: cannot read it ({error})") from None
        servers += [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]
    if not servers and os.environ.get(OPENAI_BASE_URL, "").strip():
        servers.append(os.environ[OPENAI_BASE_URL].strip())
    if not servers:
        raise UserError(
            "give the server: --base-url http://HOST:PORT/v1 (several times for "
            f"replicas), --base-urls-file, or set {OPENAI_BASE_URL}"
        )
    return tuple(servers)
