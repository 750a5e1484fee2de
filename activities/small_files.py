"""Reading a small file a user or a repository supplies to configure agents (an agent
definition, a SKILL.md, CLAUDE.md): a regular file, opened once, so nothing can be swapped in
between the checks and the read; never blocking on a FIFO or reading a device; never more than
a limit."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SmallFileError(ValueError):
    """The file cannot be used; the message names it and says why."""


def _resolved(path: Path) -> Path:
    # Not Path.resolve: before Python 3.13 it raises RuntimeError on a link loop, not OSError.
    return Path(os.path.realpath(path, strict=True))


def _open_regular(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise SmallFileError(f"{path} is not a regular file")
    return fd


def text_of(data: bytes) -> str:
    """UTF-8 text with newlines as Python's text files read them (a CRLF file is not carried
    into a prompt with its carriage returns); a byte that is no UTF-8 becomes U+FFFD."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def read_head(path: Path, limit: int) -> bytes | None:
    """Up to `limit` bytes from the start of the regular file `path` (a link is followed);
    None when there is no such regular file. For files whose head is all that is used (a
    CLAUDE.md of a gigabyte is cut, not read whole and then cut)."""
    try:
        fd = _open_regular(_resolved(path))
    except (OSError, SmallFileError):
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(limit)


def read_small_file(path: Path, limit: int, within: Path | None = None) -> bytes:
    """The file's bytes, at most `limit` of them.

    Args:
        path: the file; a symlink is followed (users link definitions from their dotfiles).
        limit: a larger file is refused, not cut: half a definition would parse as another.
        within: where the resolved file must lie (a project's file must stay in its checkout).

    Raises:
        FileNotFoundError: there is no such file.
        SmallFileError: it resolves outside `within`, is not a regular file, or is too big.
        OSError: it cannot be opened or read (permissions, a link loop).
    """
    resolved = _resolved(path)
    if within is not None and not resolved.is_relative_to(within.resolve()):
        raise SmallFileError(f"{path} resolves outside {within}")
    fd = _open_regular(resolved)
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise SmallFileError(f"{path} is over {limit // 1024} KB")
    return data
