"""The bubblewrap sandbox that read-only agents' shell commands run in.

A read-only agent (Explore, Plan) may run Bash to inspect the repository, but the command must
not be able to change the workspace or reach the network. There is no fallback: without
bubblewrap the command is refused, never run unsandboxed.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence

BWRAP_REQUIRED = (
    "Bash is unavailable to this read-only agent: its commands must run in a bubblewrap sandbox, "
    "and bubblewrap (bwrap) is not installed on the worker. Use Read, Glob and Grep instead."
)


def find_bwrap() -> str | None:
    """The bubblewrap executable on PATH, or None."""
    return shutil.which("bwrap")


def bwrap_command(
    bwrap: str,
    workspace: str,
    scratch: str,
    cwd: str,
    argv: Sequence[str],
    writable: Sequence[str] = (),
) -> list[str]:
    """The command line that runs `argv` read-only and offline.

    Args:
        bwrap: Path of the bubblewrap executable.
        workspace: Resolved workspace root; mounted read-only.
        scratch: A directory outside the workspace the command may write (the shell's cwd file).
        cwd: The directory the command starts in.
        argv: The command to run inside the sandbox.
        writable: Further directories outside the workspace the command may write (a
            coordinator's scratchpad, shared by its workers).

    Returns:
        The full argument list, bubblewrap first.
    """
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        # Mounted after --tmpfs /tmp, which would otherwise hide a workspace that lives under
        # /tmp (every test workspace does).
        "--ro-bind", workspace, workspace,
        "--bind", scratch, scratch,
        *(arg for path in writable for arg in ("--bind", path, path)),
        "--unshare-net",
        "--unshare-pid",
        # Killing bwrap's process group must take the whole sandbox down: its children live
        # in their own session (--new-session) where a killpg cannot reach them.
        "--die-with-parent",
        # Stops the command from pushing input into the worker's terminal (TIOCSTI).
        "--new-session",
        "--chdir", cwd,
        "--",
        *argv,
    ]  # fmt: skip
