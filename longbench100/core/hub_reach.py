"""Whether the Hugging Face hub can be reached, checked once per process and fast.

Without this check an offline machine waits through the hub client's retries (about 20 s) before
it learns what a socket connection says at once.
"""

from __future__ import annotations

import functools
import socket
from urllib.parse import urlsplit


@functools.cache
def hub_problem() -> str | None:
    """``None`` when the hub's host accepts a connection within a few seconds, else why not."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    url = urlsplit(constants.ENDPOINT)
    try:
        socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)), timeout=5).close()
    except OSError as error:
        return f"{url.hostname}: {error.strerror or type(error).__name__}"
    return None
