"""Upload a snapshot to the Hugging Face hub, after checking that offline mode is off and a working token exists."""

from __future__ import annotations

import re
from pathlib import Path

from longbench100.core.errors import UserError

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def check_repo_id(repo_id: str) -> None:
    """Refuse anything but ``ORG/NAME``."""
    if not _REPO_ID.match(repo_id):
        raise UserError(
            f"--repo-id {repo_id!r}: expected ORG/NAME (letters, digits, '.', '_', '-')"
        )


def check_push_access() -> str:
    """Return the hub token after asking the hub who it belongs to; raise a one-line :class:`UserError` when
    offline mode is on, no token is configured, or the hub cannot be reached or rejects the token."""
    from huggingface_hub import HfApi, constants, get_token
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if constants.HF_HUB_OFFLINE:
        raise UserError("cannot push: offline mode is on (HF_HUB_OFFLINE is set)")
    token = get_token()
    if not token:
        raise UserError("cannot push: no Hugging Face token (set HF_TOKEN or run `hf auth login`)")
    try:
        HfApi().whoami(token=token)
    except OfflineModeIsEnabled:
        raise UserError("cannot push: offline mode is on (HF_HUB_OFFLINE is set)") from None
    except HfHubHTTPError as error:
        raise UserError(
            f"cannot push: the hub at {constants.ENDPOINT} rejected the token ({_first_line(error)})"
        ) from None
    except Exception as error:  # noqa: BLE001 - any transport failure means the hub is unreachable
        raise UserError(
            f"cannot push: the hub at {constants.ENDPOINT} is unreachable ({type(error).__name__}: {_first_line(error)})"
        ) from None
    return token


def push_snapshot(snapshot: Path, repo_id: str, token: str, private: bool, message: str) -> str:
    """Create the dataset repository if needed and upload the snapshot; return the commit URL.

    Parquet files of an earlier snapshot that this one no longer has are deleted from the repository.
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            repo_id=repo_id,
            repo_type="dataset",
            folder_path=snapshot,
            commit_message=message,
            delete_patterns=["data/**"],
        )
    except Exception as error:  # noqa: BLE001 - report any hub failure as one line; the snapshot stays on disk
        raise UserError(
            f"push to {repo_id} failed ({type(error).__name__}: {_first_line(error)}); the snapshot is complete in "
            f"{snapshot}: retry with `hf upload {repo_id} {snapshot} . --repo-type dataset`"
        ) from None
    return str(commit.commit_url)


def _first_line(error: BaseException) -> str:
    """The first non-empty line of an exception's message."""
    return next(
        (line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__
    )
