"""A verifier's snapshot that its verification never removed (terminated, or cancelled in the
middle of the copy) is removed by the reaper once the verification has closed."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

from temporalio.testing import ActivityEnvironment

from activities.snapshot import SnapshotRequest, recorded_snapshots, snapshot
from outlast.reaper import Reaped, reap
from tests.conftest import make_git_repo
from workflows.contracts import AgentInput, Workspace


async def snapshot_for(owner_id: str, root: Path) -> Path:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, workflow_id=owner_id)
    name = f"{owner_id}/verify-1"
    return Path(await env.run(snapshot, SnapshotRequest(root=str(root), name=name)))


async def reaped_by_path(client) -> dict[Path, Reaped]:
    return {Path(r.worktree_path).resolve(): r for r in await reap(client)}


async def test_the_reaper_removes_snapshots_of_closed_verifications_only(
    client, tmp_path, monkeypatch
):
    # A state directory of its own: the reaper goes through every record in it, and the
    # session's holds the snapshots of every earlier test (it took 30 s in a full run).
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    root = make_git_repo(tmp_path / "repo", {"README.md": "# r\n"})
    # A workflow no worker serves stays running: the owner of a verification in progress.
    running = await client.start_workflow(
        "VerifiedTaskWorkflow",
        AgentInput(prompt="x", workspace=Workspace(root=str(root), host_queue="nobody")),
        id=f"verify-running-{uuid.uuid4().hex[:8]}",
        task_queue=f"nobody-{uuid.uuid4().hex[:8]}",
    )
    gone = await snapshot_for(f"verify-gone-{uuid.uuid4().hex[:8]}", root)  # never started
    kept = await snapshot_for(running.id, root)
    assert (gone / "README.md").exists() and (kept / "README.md").exists()

    reaped = await reaped_by_path(client)
    assert reaped[gone].removed and reaped[gone].owner_status == "NOT_FOUND"
    assert not gone.exists() and kept not in reaped and kept.exists()

    await running.terminate()
    reaped = await reaped_by_path(client)
    assert reaped[kept].removed and reaped[kept].owner_status == "TERMINATED"
    assert not kept.exists()
    assert {gone, kept}.isdisjoint(Path(o.path).resolve() for o in recorded_snapshots())
