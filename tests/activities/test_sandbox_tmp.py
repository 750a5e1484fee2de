"""A writer's sandbox /tmp (one per workspace on the host) goes when its workspace goes: with
its worktree at cleanup, or through the reaper once the workspace no longer exists."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.sandbox_tmp import (
    recorded_sandbox_tmps,
    remove_sandbox_tmp,
    sandbox_tmp,
    sandbox_tmps_dir,
)
from activities.worktree import CleanupWorktreeInput, CreateWorktreeInput, create_worktree
from activities.worktree_cleanup import cleanup_worktree
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


async def test_the_reaper_says_a_worktree_s_sandbox_tmp_in_its_dry_run_as_its_real_run_does(
    client, tmp_path: Path
) -> None:
    """A sandbox /tmp goes with its worktree. The dry run listed the /tmp of a deleted
    worktree as the reaper's own "would remove", the real run then said nothing of it (the
    cleanup took it along), and the /tmp of a worktree about to be removed was in neither (a
    user test, 2026-12-05). Both runs list each under its worktree now, and the same ones."""
    repo = make_git_repo(tmp_path / "repo", {"README.md": "# r\n"})
    owner = f"closed-long-ago-{tmp_path.name}"
    infos, tmps = {}, {}
    for name in ("plain", "deleted", "changed"):
        inp = CreateWorktreeInput(repo_root=str(repo), slug=name, owner_workflow_id=owner)
        infos[name] = await ActivityEnvironment().run(create_worktree, inp)
        tmps[name] = Path(sandbox_tmp(infos[name].worktree_path))
        (tmps[name] / "out.txt").write_text("x")
    (Path(infos["changed"].worktree_path) / "new.txt").write_text("work\n")
    shutil.rmtree(infos["deleted"].worktree_path)
    # Closed long ago and gone from the server (a younger record is a child not started yet).
    old = time.time() - 2 * 24 * 3600
    for record in (tmp_path / "state").resolve().glob("worktree-owners/*.json"):
        os.utime(record, (old, old))

    dry = [r for r in await reap(client, dry_run=True) if r.kind == "sandbox-tmp"]
    assert {Path(r.worktree_path): r.reason for r in dry} == {
        tmps[name]: "would remove (dry run) with its worktree: the sandbox /tmp of "
        + infos[name].worktree_path
        for name in ("plain", "deleted")
    }
    assert all(t.exists() for t in tmps.values()) and not any(r.removed for r in dry)

    real = [r for r in await reap(client) if r.kind == "sandbox-tmp"]
    assert {Path(r.worktree_path) for r in real} == {Path(r.worktree_path) for r in dry}
    assert all(r.removed and r.workflow_id == owner for r in real)
    assert all("removed with its worktree" in r.reason for r in real)
    assert not tmps["plain"].exists() and not tmps["deleted"].exists()
    assert tmps["changed"].exists() and recorded(Path(infos["changed"].worktree_path))


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
try:
    (tmp / "unreadable").iterdir().__next__()
    sys.exit("permissions are not enforced in this process: the test would prove nothing")
except PermissionError:
    pass
assert workspace in [t.workspace for t in recorded_sandbox_tmps()]
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
        # Out of the inheritable (and so ambient) set too: a container may have them there.
        drop = ["--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"]
        cmd = [setpriv, *drop, *cmd]
    env = {**os.environ, "TMPDIR": str(tmp_path / "host-tmp")}
    (tmp_path / "host-tmp").mkdir()
    done = subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    removed, left, still_recorded = json.loads(done.stdout)
    assert removed and not left and not still_recorded


async def test_what_cannot_be_removed_keeps_its_record_for_the_next_reap(
    client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = make_git_repo(tmp_path / "gone", {"README.md": "# g\n"})
    tmp = Path(sandbox_tmp(str(gone)))
    shutil.rmtree(gone)
    rmtree = shutil.rmtree
    monkeypatch.setattr(shutil, "rmtree", lambda *a, **kw: None)  # a removal that fails

    reaped = {Path(r.worktree_path): r for r in await reap(client)}
    assert not reaped[tmp].removed and "next reap tries again" in reaped[tmp].reason
    assert tmp.exists() and recorded(gone) == [tmp]

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    reaped = {Path(r.worktree_path): r for r in await reap(client)}
    assert reaped[tmp].removed and not tmp.exists() and recorded(gone) == []


@pytest.mark.parametrize("squatted", ["open-to-all", "a-link"])
async def test_a_directory_someone_else_could_control_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, squatted: str
) -> None:
    """/tmp is everyone's: a directory others can write, or a link, where the sandboxes'
    /tmp directories live would receive what commands write to /tmp, and hand over what the
    reaper deletes. Bash is then refused, as an error the model can work around."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "host-tmp"))
    (tmp_path / "host-tmp").mkdir()
    repo = make_git_repo(tmp_path / "repo", {"README.md": "# r\n"})
    mine = sandbox_tmps_dir().parent
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if squatted == "open-to-all":
        mine.mkdir()
        mine.chmod(0o777)
    else:
        mine.symlink_to(elsewhere)
    # What the other user planted: a /tmp for this workspace, and its record.
    planted = sandbox_tmps_dir() / "planted"
    (planted / "keep").mkdir(parents=True)
    record = {"workspace": str(tmp_path / "no-such-workspace"), "path": str(planted)}
    (sandbox_tmps_dir() / "planted.json").write_text(json.dumps(record))

    is_error, content = await bash(repo, "echo hi > /tmp/x")
    assert is_error and "Bash is unavailable" in content and str(mine) in content
    assert recorded_sandbox_tmps() == []  # the reaper sees nothing there to act on
    assert not remove_sandbox_tmp(str(repo))
    assert (planted / "keep").is_dir() and not list(sandbox_tmps_dir().glob("*/x"))


def test_a_link_in_place_of_a_sandbox_tmp_goes_and_what_it_names_stays(tmp_path: Path) -> None:
    workspace = str(tmp_path / "ws")
    path = Path(sandbox_tmp(workspace))
    path.rmdir()
    target = tmp_path / "target"
    (target / "sub").mkdir(parents=True)
    (target / "sub").chmod(0o751)
    path.symlink_to(target)

    assert remove_sandbox_tmp(workspace)
    assert not path.is_symlink() and recorded(Path(workspace)) == []
    assert (target / "sub").is_dir() and (target / "sub").stat().st_mode & 0o777 == 0o751
