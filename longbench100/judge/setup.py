"""Build the LLM judge from its options and check it answers before any work (``score`` and ``filter``).

:func:`check_judge` is the preflight: ``GET {base_url}/models`` (a server without that route is fine)
must not refuse the key, and one one-token test request must come back within
:data:`~longbench100.llm.client.TEST_REQUEST_TIMEOUT_S` (a hung or trickling server is reported
then). A dead server, a refused key, an
unknown model, a 5xx or a reply that is not an OpenAI answer stops the run in seconds with one line,
instead of minutes of retries followed by a run whose judge tasks are all ungraded.
"""

import httpx

from longbench100.core.errors import UserError
from longbench100.core.paths import CACHE_HINT, cache_dir
from longbench100.folders.writable import ensure_writable_dir
from longbench100.judge.grader import Judge
from longbench100.llm import client as llm_client
from longbench100.llm.client import (
    TEST_PROMPT,
    _server_message,
    get_models,
    hung_server,
    is_hung,
    send_test_request,
    served_model_ids,
)
from longbench100.llm.options import JudgeConfig, JudgeOptions

PREFLIGHT_PROMPT = TEST_PROMPT
PREFLIGHT_TIMEOUT_S = 60.0
"""The longest ``GET /models`` check (capped by
:data:`~longbench100.llm.client.PROBE_TIMEOUT_S`)."""
_MODELS_SHOWN = 5


def make_judge(
    options: JudgeOptions, data_fingerprint: str | None = None, role: str = "judge"
) -> Judge | None:
    """Build the judge from the options, or ``None`` when no judge model is given (nothing is sent);
    ``data_fingerprint`` keys the key points it extracts (HELMET summaries); ``role`` names it on
    screen."""
    if not options.model:
        return None
    return Judge(options.config(), data_fingerprint=data_fingerprint, role=role)


def _key_hint(config: JudgeConfig, api_key_env: str, role: str) -> str:
    """What to do about a refused key."""
    if config.api_key is None:
        return (
            f"${api_key_env} is not set (--{role}-api-key-env names the variable holding the key)"
        )
    return f"check the key in ${api_key_env}"


def _listed_models(
    config: JudgeConfig, api_key_env: str, timeout_s: float, role: str
) -> list[str] | None:
    """The model ids ``GET /models`` lists, or ``None`` when the server has no usable models route."""
    where = f"{role} server {config.base_url}"
    try:
        timeout = min(timeout_s, llm_client.PROBE_TIMEOUT_S)
        response = get_models(config.base_url, config.api_key, timeout)
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        if is_hung(error):
            raise hung_server(f"{role} server", config.base_url) from None
        raise UserError(
            f"{where}: cannot reach it ({type(error).__name__}: {error or 'no detail'})"
        ) from None
    if response.status_code in (401, 403):
        raise UserError(
            f"{where}: HTTP {response.status_code} ({_server_message(response)}); {_key_hint(config, api_key_env, role)}"
        )
    return served_model_ids(
        response
    )  # None without a /models route (or not the OpenAI shape): the chat request decides


def check_judge(
    config: JudgeConfig,
    api_key_env: str,
    *,
    timeout_s: float = PREFLIGHT_TIMEOUT_S,
    role: str = "judge",
) -> list[str]:
    """Check that the judge (or another model ``role``: "evaluator") answers; raise :class:`UserError` with the reason when it does not.

    ``role`` names the model in messages and the options they point to (``--<role>-api-key-env``, ``--<role>-base-url``).

    Returns notes for the screen (a model the server does not list but that answered anyway, as
    servers that serve one model under any name do).
    """
    # before any paid call: the replies are kept in the cache folder
    ensure_writable_dir(cache_dir(), f"the cache folder for the {role}'s replies ({CACHE_HINT})")
    listed = _listed_models(config, api_key_env, timeout_s, role)
    result = send_test_request(config.base_url, config.model, config.api_key, f"{role} server")
    unlisted = listed is not None and config.model not in listed
    shown = (
        ", ".join(listed[:_MODELS_SHOWN])
        + (", ..." if listed and len(listed) > _MODELS_SHOWN else "")
        if listed
        else ""
    )
    if result.text is None:
        error = result.error or "unknown error"
        hints = []
        if error.startswith(("HTTP 401", "HTTP 403")):
            hints.append(_key_hint(config, api_key_env, role))
        if unlisted and error.startswith(("HTTP 400", "HTTP 404")):
            hints.append(
                f"the server does not list model {config.model!r} (it lists: {shown or 'none'})"
            )
        elif error.startswith("HTTP 404"):
            hints.append(f"is --{role}-base-url the API root (usually ending in /v1)?")
        hint = f"; {'; '.join(hints)}" if hints else ""
        raise UserError(
            f"{role} {config.model} at {config.base_url}: test request failed: {error}{hint}"
        )
    if unlisted:
        return [
            f"note: {role} server does not list model {config.model!r} (it lists: {shown or 'none'}), "
            "but it answered a test request"
        ]
    return []
