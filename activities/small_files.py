"""Reading a small file a user or a repository supplies to configure agents (an agent
definition, a SKILL.md): a regular file, opened once, so nothing can be swapped in between the
checks and the read; never blocking on a FIFO or reading a device; never more than a limit."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SmallFileError(ValueError):
    """The file cannot be used; the message names it and says why."""


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
    resolved = path.resolve(strict=True)
    if within is not None and not resolved.is_relative_to(within.resolve()):
        raise SmallFileError(f"{path} resolves outside {within}")
    fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SmallFileError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SmallFileError(f"{path} is over {limit // 1024} KB")
    return data
