"""Which write errors mean that no room is left, and what each run is told to do about it."""

from __future__ import annotations

import errno

import pytest

from longbench100.core.errors import out_of_room


@pytest.mark.parametrize(
    ("code", "happened"),
    [(errno.ENOSPC, "no space left"), (errno.EDQUOT, "quota"), (errno.EFBIG, "ulimit -f")],
)
def test_a_full_disk_a_used_quota_and_a_size_limit_are_out_of_room(code: int, happened: str):
    room = out_of_room(OSError(code, "no room"))
    assert room is not None and happened in room[0] and room[1]


@pytest.mark.parametrize("code", [errno.EACCES, errno.EIO, None])
def test_other_write_errors_are_not(code: int | None):
    error = OSError(code, "other") if code is not None else OSError("no errno")
    assert out_of_room(error) is None
