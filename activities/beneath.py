"""Opening a checked path without following any link on the way to it.

`resolve_in_workspace` resolves links and then checks the result, but a link swapped into the
path after the check would still be followed by a plain `open()`. Here the resolved path is
walked again one component at a time with `O_NOFOLLOW`, so a component that has become a link
since fails the open (R13) instead of leading outside. A resolved path has no links, so a link
met on the walk always means the path changed in between.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathSwapped(OSError):
    """A link appeared in a checked path between the check and the open."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            errno.ELOOP,
            f"a symbolic link appeared in {path} while it was being opened, so it was not "
            "followed and nothing outside the workspace was touched; try again",
        )


def open_dir(path: Path, *, create: bool = False) -> int:
    """An `O_PATH` descriptor of the directory `path`, walked from `/` without following links.

    Args:
        path: Absolute, with every link already resolved.
        create: Make missing directories on the way, as `mkdir -p` would.

    Raises:
        PathSwapped: a component is a link now.
        FileNotFoundError, NotADirectoryError: as for an ordinary open.
    """
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in path.parts[1:]:
            try:
                step = _open_step(part, fd, create)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise PathSwapped(path) from e
                raise
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_step(part: str, fd: int, create: bool) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):  # another writer made it first
        os.mkdir(part, 0o777, dir_fd=fd)
    return os.open(part, _DIR_FLAGS, dir_fd=fd)


def open_file(path: Path, flags: int, mode: int = 0o666) -> int:
    """`os.open(path, flags)` for a resolved path, with no link followed anywhere on it.

    `O_NONBLOCK` is worth passing for reads: a FIFO swapped in would otherwise block the open.

    Raises:
        PathSwapped: a component or the file itself is a link now.
    """
    parent = open_dir(path.parent)
    try:
        return os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise PathSwapped(path) from e
        raise
    finally:
        os.close(parent)


def read_bytes(path: Path) -> tuple[bytes, os.stat_result]:
    """The whole file and its stat, both from one descriptor."""
    with os.fdopen(open_file(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        return f.read(), os.fstat(f.fileno())
