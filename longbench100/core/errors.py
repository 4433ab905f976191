"""The one exception type that the command line turns into a one-line error message, and error wording helpers."""

import errno
import json


class UserError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""


class HubUnreachable(UserError):
    """The Hugging Face hub could not be reached; no later download will succeed either."""


class SourceAbsent(UserError):
    """A registered source's file (or zip member, repository or revision) does not exist where it is read from."""


def json_error_text(error: json.JSONDecodeError) -> str:
    """A JSON decoding error as a whole phrase with its place: "Invalid control character at column 12".

    ``error.msg`` alone can end mid-sentence ("Invalid control character at"); the line is named
    only when the text spans several lines (a JSONL line is one line).
    """
    place = (
        f"line {error.lineno} column {error.colno}" if error.lineno > 1 else f"column {error.colno}"
    )
    return f"{error.msg} {place}" if error.msg.endswith(" at") else f"{error.msg} at {place}"


OUT_OF_ROOM = {
    errno.ENOSPC: ("no space left on the device", "free some space"),
    errno.EDQUOT: ("the disk quota is used up", "free some space or raise the quota"),
    errno.EFBIG: (
        "a file reached the largest size this process may write (ulimit -f)",
        "raise that limit",
    ),
}
"""The write errors that mean no room is left, each as (what happened, what frees room)."""


def out_of_room(error: OSError) -> tuple[str, str] | None:
    """What stopped ``error``'s write for lack of room and what frees it (see :data:`OUT_OF_ROOM`),
    or None when ``error`` is of another kind."""
    return OUT_OF_ROOM.get(error.errno) if error.errno is not None else None
