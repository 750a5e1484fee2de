"""A writer's sandbox /tmp (one per workspace on the host) goes when its workspace goes: with
its worktree at cleanup, or through the reaper once the workspace no longer exists."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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

REPO = Path(__file__).resolve().parents[2]


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
    (gone_tmp / "out.txt").write_text("x")
    shutil.rmtree(gone)

    dry = {Path(r.worktree_path): r for r in await reap(client, dry_run=True)}
    assert not dry[gone_tmp].removed and gone_tmp.exists() and live_tmp not in dry

    reaped = {Path(r.worktree_path): r for r in await reap(client)}
    assert reaped[gone_tmp].removed and reaped[gone_tmp].owner_status == WORKSPACE_GONE
    assert str(gone) in reaped[gone_tmp].reason
    assert not gone_tmp.exists() and recorded(gone) == []
    assert live_tmp not in reaped and live_tmp.exists() and recorded(live) == [live_tmp]


REMOVE_AS_ITS_OWNER = """
import json, sys
from pathlib import Path
from activities.sandbox_tmp import recorded_sandbox_tmps, remove_sandbox_tmp, sandbox_tmp
workspace = sys.argv[1]
tmp = Path(sandbox_tmp(workspace))
for name, mode in (("readonly", 0o500), ("unreadable", 0o000), ("unlistable", 0o300)):
    (tmp / name / "sub").mkdir(parents=True)
    (tmp / name / "sub" / "f").write_text("x")
    (tmp / name).chmod(mode)
tmp.chmod(0o500)
removed = remove_sandbox_tmp(workspace)
recorded = [t.workspace for t in recorded_sandbox_tmps()]
print(json.dumps([removed, tmp.exists(), workspace in recorded]))
"""


def test_what_a_command_left_unwritable_or_unreadable_is_removed_too(tmp_path: Path) -> None:
    """Go leaves its module cache read-only, a test suite may chmod 000 its fixtures. Run
    without the capabilities that let root ignore permissions, as any other user would be."""
    cmd = [sys.executable, "-c", REMOVE_AS_ITS_OWNER, str(tmp_path / "ws")]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")  # util-linux, on every Debian
        assert setpriv, "setpriv is needed to drop root's permission override"
        cmd = [setpriv, "--bounding-set=-dac_override,-dac_read_search", *cmd]
    env = {**os.environ, "TMPDIR": str(tmp_path / "host-tmp")}
    (tmp_path / "host-tmp").mkdir()
    done = subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    removed, left, still_recorded = json.loads(done.stdout)
    assert removed and not left and not still_recorded
