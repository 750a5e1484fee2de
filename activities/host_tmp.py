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
from pathlib import Path

from activities.errors import OutlastError


class HostTmpRefused(OutlastError):
    """A directory under the host's /tmp that Outlast would use is not this user's own.
    Retrying cannot help: the worker's operator must remove it."""

    retryable = False


def host_tmp_root() -> Path:
    return Path(tempfile.gettempdir(), f"outlast-{os.getuid()}")


def own_directory(path: Path) -> bool:
    """A directory (not a link) of this user that no other user may write in."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & stat.S_IWOTH


def private_dir(*parts: str) -> Path:
    """`host_tmp_root()` joined with `parts`, each level made (mode 0700) if missing and
    checked to be this user's own.

    Raises:
        HostTmpRefused: a level is not (another user's, open to all, a link, a file).
    """
    path = host_tmp_root()
    for part in ("", *parts):
        path = path / part if part else path
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        if not own_directory(path):
            raise HostTmpRefused(
                f"{path} is not a directory of this worker's user that only it can write: "
                "another user may have made it. The worker's operator must remove it."
            )
    return path
