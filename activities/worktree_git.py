"""Git for the worktree activities: every command an argument list in the C locale, bounded
by its attempt's deadline, and every change to a repository's worktrees made under one lock.

A hung git command (a post-checkout hook that waits, an LFS filter asking for credentials, a
stuck filesystem) is killed with what it started once the attempt has run `GIT_TIMEOUT_S`:
it would hold the repository's lock, and every other agent's worktree with it, for as long as
the worker lives. The bases of the worktrees Outlast made are recorded in the git common dir
(`BASES_DIR`), which is how creation and cleanup know a worktree as Outlast's.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from activities.git_run import NO_OPTIONAL_LOCKS, run_git
from activities.heartbeats import heartbeating

T = TypeVar("T")

GIT_TIMEOUT_S = 100.0
"""How long one attempt's git may run, from the attempt's start (waiting for the lock
included): a hung command (a post-checkout hook that waits, an LFS filter asking for
credentials, a stuck filesystem) is killed at that point, below the activities' 2-minute
limit (`workflows.worktrees.WORKTREE_OPTIONS`), so the lock is free before the attempt's
retry asks for it."""

LOCK_FILE = "outlast-worktree.lock"
"""In the git common dir: held while a repository's worktrees change (`serialised`)."""
BASES_DIR = "outlast-worktrees"
"""In the git common dir: one file per worktree branch Outlast made, holding its base."""
C_LOCALE = {"LC_ALL": "C", "LANGUAGE": "C"}
"""Git's messages untranslated, so what is parsed from them means the same everywhere."""


class GitFailed(Exception):
    """A git command exited non-zero. Where that answers a question (no such branch, not a
    repository) it is caught; elsewhere the activity fails and is retried (a lock another git
    held, a hook that failed once), where a `WorktreeRefused` is not."""

    def __init__(self, args: tuple[str, ...], status: int, stderr: bytes):
        text = stderr.decode(errors="replace").strip()
        super().__init__(f"git {' '.join(args)} failed ({status}): {text}")


class GitHung(Exception):
    """A git command ran past its attempt's `GIT_TIMEOUT_S` and was killed. Never taken for
    an answer (a stuck filesystem is not "not a repository"): the attempt fails and is
    retried."""


def attempt_deadline() -> float:
    """When the git of an attempt starting now must be done (`time.monotonic()`)."""
    return time.monotonic() + GIT_TIMEOUT_S


def git(cwd: Path, *args: str, deadline: float, reads: bool = False) -> str:
    """`git <args>` in `cwd`, its output less the final newline; `reads`: without optional
    locks (`NO_OPTIONAL_LOCKS`).

    Raises:
        GitFailed: It exited non-zero.
        GitHung: It was still running at `deadline` and was killed, with what it started.
    """
    env = {**C_LOCALE, **NO_OPTIONAL_LOCKS} if reads else C_LOCALE
    try:
        done = run_git(str(cwd), *args, timeout=max(deadline - time.monotonic(), 0.1), env=env)
    except subprocess.TimeoutExpired:
        raise GitHung(
            f"git {' '.join(args)} killed, with what it started: the attempt's git has run "
            f"{GIT_TIMEOUT_S:g} s"
        ) from None
    if done.returncode != 0:
        raise GitFailed(args, done.returncode, done.stderr)
    out = done.stdout.decode(errors="surrogateescape")
    return out[:-1] if out.endswith("\n") else out


@dataclass(frozen=True)
class Repo:
    """The work tree an attempt changes: its toplevel and git common dir."""

    top: Path
    common: Path
    deadline: float
    """The attempt's (`attempt_deadline`): every git command it runs ends by then."""

    def git(self, *args: str) -> str:
        return git(self.top, *args, deadline=self.deadline)


async def serialised(repo: Repo, fn: Callable[[], T]) -> T:
    """Run `fn` in a thread holding the repository's worktree lock, heartbeating meanwhile.

    If the activity is cancelled while the thread still waits for the lock, the thread gives
    up once it gets the lock; if `fn` has already started it runs to completion, which is
    safe because both operations are idempotent. The lock is always released by the thread
    that took it, whatever happens to the awaiting coroutine.
    """
    abandoned = threading.Event()

    def locked() -> T | None:
        fd = os.open(repo.common / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return None if abandoned.is_set() else fn()
        finally:
            os.close(fd)  # releases the flock

    try:
        async with heartbeating():
            result = await asyncio.to_thread(locked)
    except asyncio.CancelledError:
        abandoned.set()
        raise
    return cast(T, result)  # None only when abandoned, and then CancelledError was raised


def registered(repo: Repo) -> dict[Path, dict[str, str]]:
    """`git worktree list --porcelain` as path -> attributes (`HEAD`, `branch`, `locked`...)."""
    found: dict[Path, dict[str, str]] = {}
    for block in repo.git("worktree", "list", "--porcelain").split("\n\n"):
        attrs = dict((line.split(" ", 1) + [""])[:2] for line in block.splitlines() if line)
        if "worktree" in attrs:
            found[Path(attrs["worktree"])] = attrs
    return found


def base_file(repo: Repo, branch: str) -> Path:
    return repo.common / BASES_DIR / branch


def outlast_branches(repo: Repo) -> list[str]:
    """The branches of worktrees Outlast made and has not removed (their base records)."""
    try:
        return [p.name for p in (repo.common / BASES_DIR).iterdir() if p.is_file()]
    except FileNotFoundError:
        return []


def read_base(repo: Repo, branch: str) -> str | None:
    try:
        return base_file(repo, branch).read_text().strip() or None
    except FileNotFoundError:
        return None


def branch_tip(repo: Repo, branch: str) -> str | None:
    try:
        return repo.git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
    except GitFailed:
        return None
