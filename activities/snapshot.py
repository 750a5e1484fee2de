"""A disposable copy of a workspace for a verifier (spec R81): it may build and run tests,
and nothing it does reaches the implementer's checkout. Also: which files a change touched.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError
from temporalio import activity

from activities import git_run
from activities.git_run import read_git
from activities.heartbeats import run_blocking
from activities.sandbox_tmp import remove_sandbox_tmp
from activities.store import state_dir
from activities.workspace import atomic_write

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class SnapshotRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    root: str
    name: str
    """Unique per verification (the verifier's workflow id); reused on a retry."""


def snapshot_path(name: str) -> Path:
    return snapshots_dir() / (_UNSAFE.sub("_", name).strip("._") or "snapshot")


class SnapshotOwner(BaseModel):
    """The workflow that removes a snapshot when it is done with it. One that closes without
    doing so (terminated, or cancelled mid-copy) leaves it to `outlast.reaper`."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    path: str


def _owner_file(dest: Path) -> Path:
    return dest.parent / f"{dest.name}.owner.json"


def recorded_snapshots() -> list[SnapshotOwner]:
    """Every snapshot of this host with its owner; unreadable records are skipped."""
    found = []
    for path in sorted(snapshots_dir().glob("*.owner.json")) if snapshots_dir().is_dir() else []:
        with contextlib.suppress(OSError, ValidationError):
            found.append(SnapshotOwner.model_validate_json(path.read_bytes()))
    return found


def snapshots_dir() -> Path:
    return state_dir() / "snapshots"


@activity.defn(name="workspace.snapshot")
async def snapshot(req: SnapshotRequest) -> str:
    """Copy the checkout (uncommitted changes and `.git` included) to a fresh directory.
    Idempotent: a retry replaces a half-made copy."""
    owner = SnapshotOwner(
        workflow_id=activity.info().workflow_id, path=str(snapshot_path(req.name))
    )
    stop = threading.Event()
    try:
        return await run_blocking(_snapshot, req.root, req.name, owner, stop)
    finally:
        # A cancel does not stop the thread: this does, before its next file or directory,
        # so that a cancelled copy of a large checkout does not go on filling the disk.
        stop.set()


class CopyStopped(Exception):
    """The snapshot's activity ended (cancelled) while the copy was still under way."""


def _snapshot(root: str, name: str, owner: SnapshotOwner, stop: threading.Event) -> str:
    dest = snapshot_path(name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Recorded before the copy, so that a copy cut short is found too.
    atomic_write(_owner_file(dest), owner.model_dump_json().encode())
    if dest.exists():
        shutil.rmtree(dest)
    skip = _skip_state_dir(Path(root))

    def ignore(directory: str, names: list[str]) -> list[str]:
        if stop.is_set():  # copytree asks this before it makes the directory
            raise CopyStopped(dest)
        return skip(directory, names)

    def copy(src: str, dst: str) -> object:
        if stop.is_set():  # not an OSError, so copytree does not collect it and go on
            raise CopyStopped(dest)
        return shutil.copy2(src, dst)

    shutil.copytree(root, dest, symlinks=True, ignore=ignore, copy_function=copy)
    return str(dest.resolve())


def _skip_state_dir(root: Path) -> Callable[[str, list[str]], list[str]]:
    """With the state directory inside the checkout (`./.outlast`, the default when run from
    it), the copy would contain itself and the live server database: leave it out."""
    state = state_dir().resolve()

    def ignore(directory: str, names: list[str]) -> list[str]:
        here = Path(directory).resolve()
        return [n for n in names if here / n == state]

    return ignore


@activity.defn(name="workspace.remove_snapshot")
async def remove_snapshot(name: str) -> None:
    await run_blocking(remove_snapshot_at, snapshot_path(name))


def remove_snapshot_at(dest: Path) -> None:
    """The snapshot and its owner record; only under this host's snapshots directory."""
    if dest.resolve().parent != snapshots_dir().resolve():
        raise ValueError(f"not a snapshot: {dest}")
    spellings = {str(dest), str(dest.resolve())}
    shutil.rmtree(dest, ignore_errors=True)
    # The verifier's /tmp goes with its copy (what cannot go yet, the reaper takes later).
    for spelling in spellings:
        remove_sandbox_tmp(spelling)
    _owner_file(dest).unlink(missing_ok=True)


class ChangedSince(BaseModel):
    """Which files of `root` differ from commit `base` (None: from HEAD)."""

    model_config = ConfigDict(frozen=True)

    root: str
    base: str | None = None


@activity.defn(name="workspace.head")
async def head_commit(root: str) -> str | None:
    """HEAD's commit id, the empty tree's before the first commit (so a first commit counts
    as a change too); None outside git."""
    return await run_blocking(_head, root)


def _head(root: str) -> str | None:
    def git(*args: str) -> str | None:
        done = read_git(root, *args, timeout=git_run.GIT_READ_TIMEOUT_S)
        return (done.stdout.decode().strip() or None) if done.returncode == 0 else None

    if head := git("rev-parse", "--verify", "-q", "HEAD"):
        return head
    if git("rev-parse", "--git-dir") is None:
        return None
    return git("hash-object", "-t", "tree", "/dev/null")


@activity.defn(name="workspace.changed_files")
async def changed_files(req: ChangedSince | str) -> list[str]:
    """Paths (relative) that differ from `req.base` (a bare root: from HEAD), committed since
    or not, untracked ones included; [] outside git."""
    if isinstance(req, str):  # as runs recorded before `workspace.head` ask
        req = ChangedSince(root=req)
    return await run_blocking(_changed, req.root, req.base)


def _changed(root: str, base: str | None = None) -> list[str]:
    # A timeout raises: the activity is retried, never told "nothing changed".
    status = ["status", "--porcelain", "--untracked-files=all", "-z"]
    done = read_git(root, *status, timeout=git_run.GIT_READ_TIMEOUT_S)
    if done.returncode != 0:
        return []
    paths = _since(root, base) if base else []
    entries = done.stdout.decode(errors="replace").split("\0")
    skip = False
    for entry in entries:
        if skip or not entry:
            skip = False
            continue
        status, path = entry[:2], entry[3:]
        paths.append(path)
        skip = "R" in status or "C" in status  # the next entry is the old name
    return sorted(set(paths))


def _since(root: str, base: str) -> list[str]:
    """Tracked paths whose content now differs from `base`'s: what the agent committed too
    (the status alone shows only what it left uncommitted)."""
    diff = ["diff", "--name-only", "--no-renames", "--no-relative", "-z", base, "--"]
    done = read_git(root, *diff, timeout=git_run.GIT_READ_TIMEOUT_S)
    if done.returncode != 0:  # `base` is gone (history rewritten): the status still counts
        return []
    return [p for p in done.stdout.decode(errors="replace").split("\0") if p]
