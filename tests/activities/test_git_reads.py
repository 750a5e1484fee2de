"""Outlast's own reads of a checkout's git state never write its index.

A plain `git status` refreshes the index's stat data and writes the index back under
`index.lock`. Outlast runs status in the background of the user's and the agents' own git
work (an agent's start, a verifier's snapshot, a worktree's cleanup check), where that lock
makes a concurrent `git commit` or `git add` fail with "index.lock: File exists", and a
status killed mid-write would leave the lock behind. And none of them may hang: a status that
never returns would hold up the worker's shutdown (and, in a worktree's cleanup, the lock of
every worktree of the repository), so it is killed after `GIT_READ_TIMEOUT_S` (a worktree
activity's git: once the attempt has run `GIT_TIMEOUT_S`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities import git_run, worktree_git, worktree_owners
from activities.context import git_snapshot
from activities.snapshot import _changed
from activities.worktree import CleanupWorktreeInput, CreateWorktreeInput, create_worktree
from activities.worktree_cleanup import cleanup_worktree
from activities.worktree_git import GitHung
from outlast.reaper import reap
from tests.activities.test_tool_bash import live_pids, marker
from tests.conftest import make_git_repo


def index_of(checkout: Path) -> Path:
    found = subprocess.run(
        ["git", "rev-parse", "--git-path", "index"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return (checkout / found).resolve()


def stale(checkout: Path, name: str) -> int:
    """Touch `name` (its text unchanged) a moment later than the index recorded it, so a
    status that refreshes the index rewrites it; the index's mtime in ns."""
    index = index_of(checkout)
    later = index.stat().st_mtime_ns + 2_000_000_000
    os.utime(checkout / name, ns=(later, later))
    return index.stat().st_mtime_ns


def git_out(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo", {"README.md": "# r\n", "src/a.py": "x = 1\n"})


def test_the_agent_start_s_git_status_writes_no_index(tmp_path: Path) -> None:
    root = repo(tmp_path)
    before = stale(root, "README.md")
    assert git_snapshot(str(root)) is not None
    assert index_of(root).stat().st_mtime_ns == before


def test_the_verifier_s_changed_files_write_no_index(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "src" / "a.py").write_text("x = 2\n")
    before = stale(root, "README.md")
    assert _changed(str(root)) == ["src/a.py"]
    assert index_of(root).stat().st_mtime_ns == before


async def test_a_worktree_s_cleanup_check_writes_no_index(tmp_path: Path) -> None:
    root = repo(tmp_path)
    inp = CreateWorktreeInput(repo_root=str(root), slug="reads")
    info = await ActivityEnvironment().run(create_worktree, inp)
    wt = Path(info.worktree_path)
    (wt / "new.txt").write_text("kept for this\n")
    before = stale(wt, "README.md")
    done = await ActivityEnvironment().run(cleanup_worktree, CleanupWorktreeInput(info=info))
    assert done.kept and "untracked" in done.reason
    assert index_of(wt).stat().st_mtime_ns == before


def hanging_fsmonitor(checkout: Path, tmp_path: Path) -> str:
    """Make every status of `checkout` wait for an fsmonitor hook that sleeps 30 s; the
    sleep's mark."""
    mark = marker(30)
    hook = tmp_path / "fsmonitor-hook"
    hook.write_text(f"#!/bin/sh\nexec sleep {mark}\n")
    hook.chmod(0o755)
    subprocess.run(["git", "config", "core.fsmonitor", str(hook)], cwd=checkout, check=True)
    return mark


def hooks_left(mark: str) -> list[int]:
    """The hook's processes still running a moment after the read failed; ended here either
    way, so that a failing test leaves nothing behind."""
    deadline = time.monotonic() + 2
    while (left := live_pids(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def test_a_hung_status_fails_the_changed_files_check_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    mark = hanging_fsmonitor(root, tmp_path)
    monkeypatch.setattr(git_run, "GIT_READ_TIMEOUT_S", 1.0)
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        _changed(str(root))
    assert time.monotonic() - started < 10
    assert hooks_left(mark) == []  # killed with git, not left running


async def test_a_hung_status_fails_a_worktree_s_cleanup_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    inp = CreateWorktreeInput(repo_root=str(root), slug="hung")
    info = await ActivityEnvironment().run(create_worktree, inp)
    mark = hanging_fsmonitor(root, tmp_path)
    monkeypatch.setattr(worktree_git, "GIT_TIMEOUT_S", 3.0)
    started = time.monotonic()
    with pytest.raises(GitHung, match="git status"):
        await ActivityEnvironment().run(cleanup_worktree, CleanupWorktreeInput(info=info))
    assert time.monotonic() - started < 10
    assert hooks_left(mark) == []
    assert Path(info.worktree_path).is_dir()  # nothing removed on a check that did not finish


async def test_a_hung_checkout_hook_fails_a_worktree_s_creation_and_frees_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a read, but the same hazard: `git worktree add` runs the repository's
    post-checkout hook under the repository's worktree lock. One that never returns is killed
    with git once the attempt has run `GIT_TIMEOUT_S`; the half-made worktree goes, so the
    retry checks it out afresh and runs the hook again (here, a hook that returns)."""
    root = repo(tmp_path)
    mark = marker(30)
    hook = root / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\nexec sleep {mark}\n")
    hook.chmod(0o755)
    monkeypatch.setattr(worktree_git, "GIT_TIMEOUT_S", 3.0)
    inp = CreateWorktreeInput(repo_root=str(root), slug="hook")
    started = time.monotonic()
    with pytest.raises(GitHung, match="git worktree add"):
        await ActivityEnvironment().run(create_worktree, inp)
    assert time.monotonic() - started < 15
    assert hooks_left(mark) == []
    path = root / ".claude" / "worktrees" / "hook"
    assert not path.exists() and str(path) not in git_out(root, "worktree", "list")
    hook.write_text("#!/bin/sh\necho ran > hook-ran\n")
    info = await asyncio.wait_for(ActivityEnvironment().run(create_worktree, inp), timeout=30)
    assert not info.existed and Path(info.worktree_path) == path
    assert (path / "README.md").read_text() == "# r\n" and (path / "hook-ran").exists()


@pytest.mark.reliability
async def test_a_worktree_whose_git_hangs_does_not_hold_up_the_reaper(
    client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worktrees of closed runs: the one whose status hangs is reported and keeps its
    record for the next pass; the other is cleaned up all the same."""
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    infos = {}
    for name in ("hung", "fine"):
        root = make_git_repo(tmp_path / name, {"README.md": "# r\n"})
        inp = CreateWorktreeInput(
            repo_root=str(root), slug=name, owner_workflow_id=f"closed-long-ago-{tmp_path.name}"
        )
        infos[name] = await ActivityEnvironment().run(create_worktree, inp)
    # Closed long ago, and gone from the server: its records are as old as that (a younger
    # one is a child that has not started yet, which the reaper leaves).
    old = time.time() - 2 * 24 * 3600
    for record in (tmp_path / "state").resolve().glob("worktree-owners/*.json"):
        os.utime(record, (old, old))
    mark = hanging_fsmonitor(Path(infos["hung"].worktree_path), tmp_path)
    monkeypatch.setattr(worktree_git, "GIT_TIMEOUT_S", 3.0)
    # The dry run says it could not look, not the real run's "tried again" (a user test).
    dry = {Path(r.worktree_path).name: r for r in await reap(client, dry_run=True)}
    assert dry["hung"].reason.startswith("cannot tell, git failed while looking: ")
    assert dry["fine"].reason.startswith("would remove: ")
    reaped = {Path(r.worktree_path).name: r for r in await reap(client)}
    assert hooks_left(mark) == []
    assert not reaped["hung"].removed and "tried again at the next reap" in reaped["hung"].reason
    assert reaped["fine"].removed and not Path(infos["fine"].worktree_path).exists()
    assert [o.worktree_path for o in worktree_owners.recorded()] == [infos["hung"].worktree_path]
