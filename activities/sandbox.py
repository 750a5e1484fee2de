"""The bubblewrap sandboxes that agents' shell commands run in.

A read-only agent (Explore, Plan) may run Bash to inspect the repository, but the command must
not be able to change the workspace or reach the network. There is no fallback: without
bubblewrap the command is refused, never run unsandboxed.

A writer's command may change its workspace and reach the network, but nothing else on the
worker's disk, and never the git hooks or config that the worker's own git commands would run
(R15). Its `/tmp` is a directory per workspace that lasts from call to call; the host's /tmp
is not visible to it, so a tool or virtualenv installed under the host's /tmp is not found.
The worker's operator chooses with `OUTLAST_WRITER_SANDBOX`: `auto` (the default) sandboxes
when bubblewrap works on the host and otherwise runs the command unsandboxed, as before, with
a warning; `bwrap` refuses to run without it; `off` never sandboxes writers.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from activities.sandbox_tmp import sandbox_tmp

log = logging.getLogger(__name__)

WRITER_SANDBOX_ENV = "OUTLAST_WRITER_SANDBOX"
WriterPolicy = Literal["auto", "bwrap", "off"]
WRITER_BWRAP_REQUIRED = (
    "Bash is unavailable: this worker runs writers' commands only in a bubblewrap sandbox "
    f"({WRITER_SANDBOX_ENV}=bwrap), and bubblewrap does not work here. Use Read, Write, Edit, "
    "Glob and Grep instead."
)

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
    tmp: str | None = None,
    readable: Sequence[str] = (),
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
        tmp: A directory mounted as `/tmp`, kept from call to call (the verifier's, R81);
            None: a fresh, empty `/tmp` for each call.
        readable: Directories to show read-only even where the sandbox's own `/tmp` would
            hide them (the agent's background commands' output).

    Returns:
        The full argument list, bubblewrap first.
    """
    return _sandboxed(
        bwrap,
        tmp=["--tmpfs", "/tmp"] if tmp is None else ["--bind", tmp, "/tmp"],
        workspace=["--ro-bind", workspace, workspace],
        scratch=scratch,
        writable=writable,
        readable=readable,
        offline=True,
        cwd=cwd,
        argv=argv,
    )


def _sandboxed(
    bwrap: str,
    *,
    tmp: list[str],
    workspace: list[str],
    scratch: str,
    writable: Sequence[str],
    offline: bool,
    readable: Sequence[str] = (),
    cwd: str,
    argv: Sequence[str],
) -> list[str]:
    """The bwrap command line both sandboxes share: the host read-only, their own /tmp,
    then the workspace as each mounts it, the call's scratch and the extra writable dirs."""
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        *tmp,
        # Mounted after /tmp, which would otherwise hide a workspace that lives under /tmp
        # (every test workspace does).
        *workspace,
        "--bind", scratch, scratch,
        *(arg for path in writable for arg in ("--bind", path, path)),
        *(arg for path in readable for arg in ("--ro-bind", path, path)),
        *(["--unshare-net"] if offline else []),
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


def writer_policy() -> WriterPolicy:
    """The operator's choice for writers' commands; an unknown value is an error, not `off`."""
    value = os.environ.get(WRITER_SANDBOX_ENV, "auto").strip().lower() or "auto"
    if value not in ("auto", "bwrap", "off"):
        raise ValueError(f"{WRITER_SANDBOX_ENV}={value!r}: use auto, bwrap or off")
    return value  # type: ignore[return-value]


_PROBE_LOCK = threading.Lock()


def working_bwrap() -> str | None:
    """bwrap, if it is installed and can make a sandbox here (a container without user
    namespaces has the binary but cannot use it). Probed once per process: Bash calls build
    their command lines on worker threads, and those that come during the probe wait for it
    (holding their threads, up to the probe's 10 s, once in the process's life)."""
    with _PROBE_LOCK:
        return _probed_bwrap()


def forget_bwrap_probe() -> None:
    """Probe again at the next call (for tests)."""
    with _PROBE_LOCK:
        _probed_bwrap.cache_clear()


@functools.cache
def _probed_bwrap() -> str | None:
    bwrap = find_bwrap()
    if bwrap is None:
        return None
    probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
             "--die-with-parent", "--", "true"]  # fmt: skip
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        log.warning("bubblewrap is installed but cannot create a sandbox on this host")
    return bwrap if ok else None


@dataclass(frozen=True)
class GitDirs:
    """Where a workspace's git metadata lives: its own git dir and the shared common dir
    (the same directory for a plain checkout; the main repository's `.git` for a worktree)."""

    git_dir: Path
    common: Path


def git_dirs(workspace: Path) -> GitDirs | None:
    """The git dirs of a workspace whose root holds `.git`, read from disk without running git."""
    dot_git = workspace / ".git"
    if dot_git.is_dir():
        resolved = dot_git.resolve()
        return GitDirs(resolved, resolved)
    try:
        first = dot_git.read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = (workspace / first.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
    except OSError:
        common = git_dir
    return GitDirs(git_dir, common)


def git_protection(workspace: Path) -> list[str]:
    """bwrap arguments that keep a writer's git working and its hooks and config read-only."""
    dirs = git_dirs(workspace)
    if dirs is None:
        return []
    args: list[str] = []
    if not dirs.common.is_relative_to(workspace):
        # A worktree: `git add` and `git commit` write the index, objects and refs under the
        # main repository's git dir, which is outside the workspace.
        args += ["--bind", str(dirs.common), str(dirs.common)]
    # A missing hooks directory could be created and filled; an empty one is mounted instead.
    (dirs.common / "hooks").mkdir(exist_ok=True)
    args += ["--ro-bind", str(dirs.common / "hooks"), str(dirs.common / "hooks")]
    args += ["--ro-bind", str(dirs.common / "config"), str(dirs.common / "config")]
    for extra in {dirs.common / "config.worktree", dirs.git_dir / "config.worktree"}:
        args += ["--ro-bind-try", str(extra), str(extra)]
    return args


def writer_bwrap_command(
    bwrap: str,
    workspace: str,
    scratch: str,
    cwd: str,
    argv: Sequence[str],
    writable: Sequence[str] = (),
    readable: Sequence[str] = (),
) -> list[str]:
    """The command line that runs `argv` with only the workspace (and scratch dirs) writable.

    Args:
        bwrap: Path of a working bubblewrap executable.
        workspace: Resolved workspace root; mounted read-write, its git hooks and config not.
        scratch: The call's own directory (the shell's cwd file).
        cwd: The directory the command starts in.
        argv: The command to run inside the sandbox.
        writable: Further directories the command may write (a coordinator's scratchpad).
        readable: Directories shown read-only (see `bwrap_command`).
    """
    return _sandboxed(
        bwrap,
        tmp=["--bind", sandbox_tmp(workspace), "/tmp"],
        workspace=["--bind", workspace, workspace, *git_protection(Path(workspace))],
        scratch=scratch,
        writable=writable,
        readable=readable,
        offline=False,
        cwd=cwd,
        argv=argv,
    )
