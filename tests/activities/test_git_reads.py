"""Outlast's own reads of a checkout's git state never write its index.

A plain `git status` refreshes the index's stat data and writes the index back under
`index.lock`. Outlast runs status in the background of the user's and the agents' own git
work (an agent's start, a verifier's snapshot, a worktree's cleanup check), where that lock
makes a concurrent `git commit` or `git add` fail with "index.lock: File exists", and a
status killed mid-write would leave the lock behind.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from temporalio.testing import ActivityEnvironment

from activities.context import git_snapshot
from activities.snapshot import _changed
from activities.worktree import (
    CleanupWorktreeInput,
    CreateWorktreeInput,
    cleanup_worktree,
    create_worktree,
)
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
