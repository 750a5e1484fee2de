"""This user's directory under the host's /tmp, `$TMPDIR/outlast-<uid>`: it holds the writer
sandboxes' /tmp (`activities.sandbox_tmp`) and the coordinators' scratchpads
(`activities.scratchpad`).

/tmp is everyone's, and the name is predictable: another user could make that directory first
(after a reboot, say), or a link there, and then read what the agents write, or hand over
what the reaper deletes. So it is used only if it is a directory of this user that no other
user may write in, and made with mode 0700 when missing.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from activities.errors import OutlastError


class HostTmpRefused(OutlastError):
    """A directory under the host's /tmp that Outlast would use is not this user's own.
    Retrying cannot help: the worker's operator must remove it."""

    retryable = False


def host_tmp_root() -> Path:
    return Path(tempfile.gettempdir(), f"outlast-{os.getuid()}")


def _own_directory(path: Path) -> bool:
    """A directory (not a link) of this user that no other user may write in."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & stat.S_IWOTH


def _levels(parts: tuple[str, ...]) -> Iterator[Path]:
    path = host_tmp_root()
    yield path
    for part in parts:
        path = path / part
        yield path


def private_dir(*parts: str) -> Path:
    """`host_tmp_root()` joined with `parts`, each level made (mode 0700) if missing and
    checked to be this user's own.

    Raises:
        HostTmpRefused: a level is not (another user's, open to all, a link, a file).
    """
    for path in _levels(parts):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        if not _own_directory(path):
            raise HostTmpRefused(
                f"{path} is not a directory of this worker's user that only it can write: "
                "another user may have made it. The worker's operator must remove it."
            )
    return path


def is_private(*parts: str) -> bool:
    """Whether `host_tmp_root()` and each level of `parts` below it exist and are this
    user's own; nothing is made."""
    return all(_own_directory(path) for path in _levels(parts))
