"""Run a prediction job: pick the samples still to do, send them with bounded concurrency, store answers.

A sample's record is appended once its prompt and (for QA samples, unless disabled) its closed-book
prompt have both been answered or have failed for good. Rerunning the same job skips samples that
already have a record; ``retry_failed`` redoes the ones that failed, and a record without the
closed-book answer that this run asks for is redone too, and so is a record whose prompt fingerprints
(``prompt_sha256``, ``closed_book_prompt_sha256``) differ from the data's: the data was regenerated,
so the old answer belongs to another question. A record made with other request settings (see
:mod:`.options`) is refused rather than mixed. A redone sample's old record stays in the
file until its new record has been appended (the last record of an id wins); superseded records are
compacted away, atomically, when the run ends, so a failed or interrupted rerun never loses a record.

A request that never reached the server (``ConnectError``, ``ConnectTimeout`` after its retries)
means the server is gone, not that the sample is bad: the run stops (:class:`ServerLost`) without
recording that sample, so a rerun picks it up. A connection the server dropped (``RemoteProtocolError``,
``ReadError``, ``WriteError`` after the retries) may be the sample's fault, so such a sample is held
back until the server answers another one, and then recorded as failed; :data:`LOST_AFTER_DROPS`
such samples in a row mean the server has stopped answering: the run stops, recording none of them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import replace

import httpx

from longbench100.catalog.task_info import answer_room
from longbench100.core.errors import UserError
from longbench100.core.interrupts import Interrupted
from longbench100.core.progress import progress_bar
from longbench100.folders.data_records import manifest_sha256
from longbench100.folders.guard import guard_output_dir, mark_folder
from longbench100.folders.layout import first_rows
from longbench100.folders.lock import output_lock
from longbench100.llm.client import (
    CompletionResult,
    LLMClient,
    ServerBroken,
    error_reason,
    get_models,
    hung_server,
    is_hung,
    send_test_request,
    served_model_ids,
)
from longbench100.predict.data import SampleRef, index_data, load_sample
from longbench100.predict.options import (
    PredictOptions,
    changed_settings,
    check_options,
    request_settings,
)
from longbench100.predict.servers import ServerPool
from longbench100.predict.store import PredictionStore
from longbench100.predict.summary import RunSummary, by_count


def check_servers(options: PredictOptions) -> None:
    """:func:`check_server` for every server of the run, then one one-token test request to each
    (a server that lists its models but never answers is reported within its deadline)."""
    for url in options.servers():
        check_server(replace(options, base_url=url, more_base_urls=()))
    for url in options.servers():
        send_test_request(
            url,
            options.model,
            options.api_key,
            "the server",
            mode=options.mode,
            extras=options.extras(),
        )


def check_server(options: PredictOptions) -> None:
    """Fail early, with a UserError, when the server is unreachable, refuses the key or lacks the model.

    Asks ``GET {base_url}/models``; a server that does not implement it passes unchecked, unless the
    base URL lacks its ``/v1`` and ``{base_url}/v1/models`` answers: then the error suggests it.
    """
    url = options.base_url.rstrip("/") + "/models"
    try:
        response = get_models(options.base_url, options.api_key)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        if is_hung(exc):  # not "a server without /models": one that accepts and never answers
            raise hung_server("the server", options.base_url) from None
        raise UserError(
            f"cannot reach the server at {options.base_url} ({type(exc).__name__}: {exc})"
        ) from None
    if response.status_code in (401, 403):
        raise UserError(
            f"the server at {options.base_url} refused the API key (HTTP {response.status_code})"
        )
    if response.status_code == 404 and _v1_answers(options):
        raise UserError(f"the server answered 404 at {url}: {v1_hint(options.base_url)}")
    if response.status_code != 200:
        return
    served = served_model_ids(response)
    if served and options.model not in served:
        raise UserError(
            f"model {options.model!r} is not served at {options.base_url}; it serves: {', '.join(served)}"
        )


def v1_hint(base_url: str) -> str:
    """Suggest the ``/v1`` API root for a base URL that lacks it."""
    return f"did you mean --base-url {base_url.rstrip('/')}/v1?"


def _lacks_v1(base_url: str) -> bool:
    """Whether a base URL does not end in ``/v1`` (the API root of vLLM, SGLang and OpenAI)."""
    return not base_url.rstrip("/").endswith("/v1")


def _v1_answers(options: PredictOptions) -> bool:
    """Whether the base URL lacks ``/v1`` and ``{base_url}/v1/models`` answers 200."""
    if not _lacks_v1(options.base_url):
        return False
    try:
        probe = get_models(options.base_url.rstrip("/") + "/v1", options.api_key)
    except (httpx.HTTPError, httpx.InvalidURL):
        return False
    return probe.status_code == 200


def failure_message(summary: RunSummary, options: PredictOptions) -> str | None:
    """Return the one-line error for samples that stay failed after this run, or ``None`` when none did.

    A 404 from a base URL without ``/v1`` suggests the ``/v1`` root.
    """
    failed = summary.failed + summary.skipped_failed
    if not failed:
        return None
    reasons = ", ".join(f"{reason} x {count}" for reason, count in by_count(failed))
    message = f"{sum(failed.values())} of {summary.total} samples failed: {reasons}"
    if "HTTP 404" in failed and _lacks_v1(options.base_url):
        endpoint = "/chat/completions" if options.mode == "chat" else "/completions"
        message += f"; the server answered 404 at {options.base_url.rstrip('/')}{endpoint}: {v1_hint(options.base_url)}"
    return message + "; rerun with --retry-failed"


class ServerLost(Exception):
    """The server stopped accepting connections: nothing more can be done in this run."""


CONNECT_ERRORS = frozenset({"ConnectError", "ConnectTimeout"})
"""Error reasons of a request that never reached the server: the server is gone at once."""
DROP_ERRORS = frozenset({"RemoteProtocolError", "ReadError", "WriteError"})
"""Error reasons of a connection the server dropped without answering."""
LOST_AFTER_DROPS = 3
"""Samples in a row (in completion order) whose connections were dropped that mean the server is gone."""


def _data_changed(record: dict, ref: SampleRef) -> bool:
    """Whether a record answers other prompts than the data now holds (records without fingerprints never do)."""
    current = {
        "prompt_sha256": ref.prompt_sha256,
        "closed_book_prompt_sha256": ref.closed_book_prompt_sha256,
    }
    return any(key in record and record[key] != value for key, value in current.items())


def _is_finished(record: dict, ref: SampleRef, options: PredictOptions) -> bool:
    """Whether an existing record settles its sample for this run."""
    if record.get("error") is not None:
        return not options.retry_failed
    return not (
        options.closed_book and ref.has_closed_book and record.get("closed_book_prediction") is None
    )


def plan(
    refs: list[SampleRef], store: PredictionStore, options: PredictOptions, summary: RunSummary
) -> list[SampleRef]:
    """Return the samples still to do and count skipped samples in ``summary``; change no file.

    Every file is read before anything is decided, so a folder holding another model's predictions,
    or predictions made with other request settings, is refused (UserError) with all its files
    untouched. A record whose prompt fingerprints differ from the data's (the data was regenerated) is
    redone and counted in ``summary.changed``. The records of samples to redo stay where they are:
    their replacements are appended and win (see :meth:`PredictionStore.compact`).
    """
    settings = request_settings(options)
    by_file: dict[tuple[str, str], list[SampleRef]] = {}
    for ref in refs:
        by_file.setdefault((ref.task, ref.label), []).append(ref)
    latest_by_file: dict[tuple[str, str], dict[str, dict]] = {}
    for task, label in by_file:
        latest = {record["id"]: record for record in store.load(task, label)}
        for record in latest.values():
            if record.get("model") not in (None, options.model):
                raise UserError(
                    f"{store.path(task, label)} holds predictions of model {record['model']!r}, not "
                    f"{options.model!r}: choose another --out for each model"
                )
            changed = (
                changed_settings(record["request_settings"], settings)
                if "request_settings" in record
                else []
            )
            if changed:
                raise UserError(
                    f"{store.path(task, label)} holds predictions made with other {', '.join(changed)}: "
                    "rerun with the options it was made with, or use another --out"
                )
        latest_by_file[(task, label)] = latest
    todo: list[SampleRef] = []
    for key, file_refs in by_file.items():
        latest = latest_by_file[key]
        for ref in file_refs:
            stored = latest.get(ref.id)
            if stored is not None and _data_changed(stored, ref):
                summary.changed += 1
            elif stored is not None and _is_finished(stored, ref, options):
                summary.skipped += 1
                if stored.get("error") is not None:
                    summary.skipped_failed[error_reason(stored["error"])] += 1
                continue
            todo.append(ref)
    return todo


def make_record(
    ref: SampleRef, run: dict, answer: CompletionResult, closed: CompletionResult | None
) -> dict:
    """Build the prediction record (docs/schema.md keys first, then run details) for one sample.

    ``run`` holds what every record of the run shares: ``model``, ``data_manifest_sha256`` and
    ``request_settings``.
    """
    error = answer.error
    if error is None and closed is not None and closed.error is not None:
        error = f"closed book {closed.error}"
    return {
        "id": ref.id,
        "prediction": answer.text,
        "closed_book_prediction": None if closed is None else closed.text,
        "error": error,
        "task": ref.task,
        "label": ref.label,
        "model": run["model"],
        "prompt_sha256": ref.prompt_sha256,
        "closed_book_prompt_sha256": ref.closed_book_prompt_sha256,
        "data_manifest_sha256": run["data_manifest_sha256"],
        "finish_reason": answer.finish_reason,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "latency_s": round(answer.latency_s, 4),
        "attempts": answer.attempts,
        "closed_book_finish_reason": None if closed is None else closed.finish_reason,
        "closed_book_prompt_tokens": None if closed is None else closed.prompt_tokens,
        "closed_book_completion_tokens": None if closed is None else closed.completion_tokens,
        "closed_book_latency_s": None if closed is None else round(closed.latency_s, 4),
        "closed_book_attempts": None if closed is None else closed.attempts,
        "closed_book_error": None if closed is None else closed.error,
        "request_settings": run["request_settings"],
    }


def _count(summary: RunSummary, record: dict, results: list[CompletionResult]) -> None:
    """Add one finished sample to the summary."""
    for result in results:
        summary.requests += result.attempts
        summary.prompt_tokens += result.prompt_tokens or 0
        summary.completion_tokens += result.completion_tokens or 0
        if result.error is None and not (result.text or "").strip():
            summary.empty[result.finish_reason or "none"] += 1
    if record["error"] is None:
        summary.done += 1
    else:
        summary.failed[error_reason(record["error"])] += 1


async def _predict_one(
    client: LLMClient, ref: SampleRef, options: PredictOptions, run: dict
) -> tuple[dict, list[CompletionResult]]:
    """Send one sample's prompt (and closed-book prompt) and return its record and the raw results."""
    sample = load_sample(ref)
    max_tokens = answer_room(ref.task, sample.answer_tokens, options.max_new_tokens)
    requests = [
        client.complete(sample.prompt, max_tokens=max_tokens, temperature=options.temperature)
    ]
    if options.closed_book and sample.closed_book_prompt is not None:
        requests.append(
            client.complete(
                sample.closed_book_prompt, max_tokens=max_tokens, temperature=options.temperature
            )
        )
    results = list(await asyncio.gather(*requests))
    record = make_record(ref, run, results[0], results[1] if len(results) > 1 else None)
    return record, results


async def _run_all(
    todo: list[SampleRef],
    store: PredictionStore,
    options: PredictOptions,
    run: dict,
    summary: RunSummary,
) -> None:
    """Send every sample in ``todo`` with at most ``options.concurrency`` requests in flight."""
    next_refs: Iterator[SampleRef] = iter(todo)
    bar = progress_bar(len(todo), "predict", "sample", options.progress)

    held: list[tuple[SampleRef, dict, list[CompletionResult]]] = []  # dropped connections, in a row

    def save(ref: SampleRef, record: dict, results: list[CompletionResult]) -> None:
        store.append(ref.task, ref.label, record)
        _count(summary, record, results)
        bar.update(1)
        if summary.failed:
            bar.set_postfix(failed=sum(summary.failed.values()), refresh=False)

    def save_held() -> None:
        while held:
            save(*held.pop(0))

    async def answer(pool: ServerPool, ref: SampleRef) -> tuple[dict, list[CompletionResult]]:
        """One sample's answers from the least busy server; a server that is gone is dropped and the sample
        sent to another (with one server, its loss stops the run)."""
        while True:
            client = pool.pick()
            if client is None:
                raise ServerLost(f"every server is gone, the last: {pool.dropped[-1][1]}")
            pool.start(client)
            try:
                record, results = await _predict_one(client, ref, options, run)
            except ServerBroken as broken:
                if pool.size == 1:
                    raise
                pool.drop(client, f"its first attempts all failed: {broken.error}")
                continue
            finally:
                pool.finish(client)
            errors = [result.error for result in results if result.error is not None]
            lost = next((error for error in errors if error_reason(error) in CONNECT_ERRORS), None)
            if (
                lost is None
            ):  # a request that never reached the server says nothing about the sample
                return record, results
            if pool.size == 1:
                raise ServerLost(lost)
            pool.drop(client, lost)

    async def worker(pool: ServerPool) -> None:
        for ref in next_refs:
            record, results = await answer(pool, ref)
            errors = [result.error for result in results if result.error is not None]
            dropped = [error for error in errors if error_reason(error) in DROP_ERRORS]
            if dropped:
                held.append((ref, record, results))
                if len(held) >= LOST_AFTER_DROPS:
                    raise ServerLost(
                        f"{len(held)} samples in a row got no answer, the last: {dropped[0]}"
                    )
                continue
            save_held()  # the server answers: the dropped connections were those samples' own failures
            save(ref, record, results)

    try:
        async with AsyncExitStack() as stack:
            clients = [
                await stack.enter_async_context(
                    LLMClient.from_settings(
                        replace(options, base_url=url),
                        mode=options.mode,
                        extras=options.extras(),
                        retry_unreachable=len(options.servers()) == 1,
                    )
                )
                for url in options.servers()
            ]
            pool = ServerPool(clients, options.servers())
            count = min(
                options.concurrency * len(clients), len(todo)
            )  # --concurrency is per server
            workers = [asyncio.create_task(worker(pool)) for _ in range(count)]
            finished, unfinished = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            for (
                task
            ) in unfinished:  # only after a failure: stop the others, losing just their requests
                task.cancel()
            await asyncio.gather(*unfinished, return_exceptions=True)
            for task in finished:
                task.result()
        save_held()  # fewer than LOST_AFTER_DROPS at the very end: record them as failed
    finally:
        bar.close()


def run_predictions(options: PredictOptions) -> RunSummary:
    """Run the whole job described by ``options`` and return its summary.

    The output stays consistent whenever the run stops (interrupt, crash, lost server): rerun the
    same job to resume.
    """
    check_options(options)
    guard_output_dir(options.out_dir, "--out", "predictions", {"--data": options.data_dir})
    with output_lock(options.out_dir, "--out", options.wait):
        return _run_locked(options)


def _run_locked(options: PredictOptions) -> RunSummary:
    """:func:`run_predictions` once this run holds the output's lock."""
    started = time.perf_counter()
    summary = RunSummary()
    refs = index_data(options.data_dir, options.tasks, options.labels)
    if options.limit is not None:
        refs = first_rows(refs, options.limit)
    summary.total = len(refs)
    store = PredictionStore(options.out_dir)
    mark_folder(options.out_dir, "predictions")
    files: list[tuple[str, str]] = []
    completed = False
    try:
        todo = plan(refs, store, options, summary)
        files = list(dict.fromkeys((ref.task, ref.label) for ref in refs))
        if todo:
            check_servers(options)
            run = {
                "model": options.model,
                "data_manifest_sha256": manifest_sha256(options.data_dir),
                "request_settings": request_settings(options),
            }
            asyncio.run(_run_all(todo, store, options, run, summary))
        completed = True
    except ServerLost as lost:
        saved = summary.done + sum(summary.failed.values())
        raise UserError(
            f"lost {'the server at ' + options.base_url if len(options.servers()) == 1 else 'every server'} ({lost}); "
            f"{saved} samples were saved by this run: "
            "rerun the same command to resume"
        ) from None
    finally:
        store.close()
        try:  # drop records superseded by this run (or by an earlier one killed before it compacted)
            for task, label in files:
                store.compact(task, label)
        except (OSError, UserError):
            if completed:
                raise
        summary.wall_s = time.perf_counter() - started
    return summary


def run_predict(options: PredictOptions, echo: Callable[[str], None] = print) -> RunSummary:
    """Run the prediction job, ``echo`` its summary lines and return the summary (the library entry
    point).

    Raises UserError for bad options or data, a refused folder, an unusable or lost server, and
    :class:`~longbench100.core.interrupts.Interrupted` (with the resume hint) on Ctrl-C or SIGTERM.
    Samples that failed for good do not raise: check ``summary.failed`` / :func:`failure_message`
    (the command exits 1 with that message). With ``options.controls`` the data's control twins are
    predicted next, into ``OUT/controls``, and their failures counted in the summary returned."""
    # a missing or edited controls folder fails first, before any request
    twins_options = options.for_controls() if options.controls else None
    try:
        summary = run_predictions(options)
        for line in summary.lines():
            echo(line)
        if twins_options is not None:
            twins = run_predictions(twins_options)
            for line in twins.lines():
                echo(f"controls: {line}")
            summary.failed.update(twins.failed)
    except KeyboardInterrupt as stop:
        raise Interrupted(
            "finished samples are saved; rerun the same command to resume", stop
        ) from None
    return summary
