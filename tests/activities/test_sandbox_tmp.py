"""A writer's sandbox /tmp (one per workspace on the host) goes when its workspace goes: with
its worktree at cleanup, or through the reaper once the workspace no longer exists."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.sandbox_tmp import recorded_sandbox_tmps, sandbox_tmp
from activities.worktree import (
    CleanupWorktreeInput,
    CreateWorktreeInput,
    cleanup_worktree,
    create_worktree,
)
from outlast.reaper import WORKSPACE_GONE, reap
from tests.activities.test_writer_sandbox import bash
from tests.conftest import make_git_repo

pytestmark = pytest.mark.reliability


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))


def recorded(workspace: Path) -> list[Path]:
    return [Path(t.path) for t in recorded_sandbox_tmps() if t.workspace == str(workspace)]


async def worktree(repo: Path, slug: str):
    env = ActivityEnvironment()
    return await env.run(create_worktree, CreateWorktreeInput(repo_root=str(repo), slug=slug))


async def test_a_removed_worktree_takes_its_sandbox_tmp_along_and_a_kept_one_keeps_it(
    tmp_path: Path,
) -> None:
    repo = make_git_repo(tmp_path / "repo", {"README.md": "# r\n"})
    plain, changed = await worktree(repo, "plain"), await worktree(repo, "changed")
    tmps = {}
    for name, info in (("plain", plain), ("changed", changed)):
        ws = Path(info.worktree_path)
        assert await bash(ws, "echo build > /tmp/out.txt && echo ok") == (False, "ok")
        (tmp,) = recorded(ws)
        assert (tmp / "out.txt").read_text() == "build\n"  # the sandbox's /tmp is this one
        (tmp / "cache").mkdir()
        (tmp / "cache" / "mod.go").write_text("x")
        (tmp / "cache").chmod(0o500)  # read-only, as Go leaves its module cache
        tmps[name] = tmp
    (Path(changed.worktree_path) / "new.txt").write_text("work\n")

    env = ActivityEnvironment()
    for info in (plain, changed):
        await env.run(cleanup_worktree, CleanupWorktreeInput(info=info))

    assert not Path(plain.worktree_path).exists() and not tmps["plain"].exists()
    assert recorded(Path(plain.worktree_path)) == []
    assert Path(changed.worktree_path).exists() and tmps["changed"].exists()
    assert recorded(Path(changed.worktree_path)) == [tmps["changed"]]


async def test_the_reaper_removes_sandbox_tmps_of_workspaces_that_are_gone(
    client, tmp_path: Path
) -> None:
    gone = make_git_repo(tmp_path / "gone", {"README.md": "# g\n"})
    live = make_git_repo(tmp_path / "live", {"README.md": "# l\n"})
    gone_tmp, live_tmp = Path(sandbox_tmp(str(gone))), Path(sandbox_tmp(str(live)))
    (gone_tmp / "deep" / "er").mkdir(parents=True)
    (gone_tmp / "deep" / "er" / "f").write_text("x")
    os.chmod(gone_tmp / "deep", 0o500)
    shutil.rmtree(gone)

    dry = {Path(r.worktree_path): r for r in await reap(client, dry_run=True)}
    assert not dry[gone_tmp].removed and gone_tmp.exists() and live_tmp not in dry

    reaped = {Path(r.worktree_path): r for r in await reap(client)}
    assert reaped[gone_tmp].removed and reaped[gone_tmp].owner_status == WORKSPACE_GONE
    assert str(gone) in reaped[gone_tmp].reason
    assert not gone_tmp.exists() and recorded(gone) == []
    assert live_tmp not in reaped and live_tmp.exists() and recorded(live) == [live_tmp]
