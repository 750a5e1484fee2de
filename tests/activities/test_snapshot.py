"""A verifier's workspace snapshot whose activity is cancelled mid-copy stops copying: the
copy runs in a thread that a cancel does not stop by itself, and a large checkout would go on
filling the disk for nothing."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import threading
import time
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities import snapshot as snapshots
from activities.snapshot import SnapshotRequest, remove_snapshot_at, snapshot, snapshot_path
from tests.conftest import make_git_repo


async def test_a_cancelled_snapshot_stops_copying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    files = {f"src/{d}/f{i}.txt": "x\n" for d in range(4) for i in range(50)}
    root = make_git_repo(tmp_path / "repo", files)
    copy2, copied = shutil.copy2, []
    at_the_tenth, go_on, ended = threading.Event(), threading.Event(), threading.Event()
    outcome: list[BaseException | str] = []

    def held_at_the_tenth(src: str, dst: str) -> object:
        if len(copied) == 9:  # the file in flight when the cancel comes
            at_the_tenth.set()
            go_on.wait(60)
        done = copy2(src, dst)
        copied.append(src)
        return done

    copy_checkout = snapshots._snapshot

    def watched(*args: object) -> str:
        try:
            path = copy_checkout(*args)
            outcome.append("finished")
            return path
        except BaseException as e:
            outcome.append(e)
            raise
        finally:
            ended.set()

    monkeypatch.setattr(shutil, "copy2", held_at_the_tenth)
    monkeypatch.setattr(snapshots, "_snapshot", watched)
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, workflow_id="verify-cancelled")
    name = "verify-cancelled/verify-1"
    copying = asyncio.create_task(env.run(snapshot, SnapshotRequest(root=str(root), name=name)))
    try:
        deadline = time.monotonic() + 60
        while not at_the_tenth.is_set() and not copying.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert at_the_tenth.is_set(), copying
        env.cancel()
        with pytest.raises(asyncio.CancelledError):
            await copying
    finally:
        go_on.set()
    assert await asyncio.to_thread(ended.wait, 60)
    try:
        assert isinstance(outcome[0], snapshots.CopyStopped)
        assert len(copied) == 10  # the file in flight, and nothing after it
    finally:
        remove_snapshot_at(snapshot_path(name))


def _git(repo: Path, *args: str) -> None:
    import subprocess

    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", *args], cwd=repo, check=True
    )


async def test_changed_files_since_a_base_include_what_was_committed(tmp_path):
    from activities.snapshot import ChangedSince, changed_files, head_commit

    repo = make_git_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
    base = await head_commit(str(repo))
    assert base and len(base) == 40
    (repo / "a.txt").write_text("A\n")
    _git(repo, "commit", "-qam", "a")
    _git(repo, "mv", "b.txt", "moved.txt")
    _git(repo, "commit", "-qm", "move")
    (repo / "c.txt").write_text("C\n")  # left uncommitted
    (repo / "new.txt").write_text("new\n")  # untracked
    since = await changed_files(ChangedSince(root=str(repo), base=base))
    assert since == ["a.txt", "b.txt", "c.txt", "moved.txt", "new.txt"]
    # From HEAD (what a bare root asks, as runs recorded before): the commits are hidden.
    assert await changed_files(str(repo)) == ["c.txt", "new.txt"]
    # A base that is gone (history rewritten) leaves the status.
    gone = ChangedSince(root=str(repo), base="0" * 40)
    assert await changed_files(gone) == ["c.txt", "new.txt"]


async def test_no_base_outside_git_and_the_empty_tree_before_the_first_commit(tmp_path):
    from activities.snapshot import ChangedSince, changed_files, head_commit

    assert await head_commit(str(tmp_path)) is None
    _git(tmp_path, "init", "-q")
    base = await head_commit(str(tmp_path))
    assert base == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree
    (tmp_path / "a.txt").write_text("a\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-qm", "first")
    # The first commit is a change like any other.
    assert await changed_files(ChangedSince(root=str(tmp_path), base=base)) == ["a.txt"]
