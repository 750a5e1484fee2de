"""Terminate, not cancel, during a tool (reliability row 4): the workflow gets no chance to
clean up, so the tool's processes must die on their own at the next heartbeat (the server
answers it with "not found", which the worker turns into a cancellation)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.service import RPCError

from activities.heartbeats import HEARTBEAT_INTERVAL_S
from outlast.reaper import reap
from tests.activities.test_tool_bash import live_pids
from tests.support import agent_input, running_workers, scripted_model, spawn, start, wait_for

pytestmark = pytest.mark.reliability


async def test_terminate_during_bash_kills_its_processes_at_the_next_heartbeat(client, git_repo):
    mark = f"1237.{random.randint(10**6, 10**7)}"
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": f"sleep {mark} & wait"}}},
                    {"text": "never"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("sleep", git_repo, queues), queues)
            await wait_for(lambda: bool(live_pids(mark)), timeout=30)
            await handle.terminate(reason="operator pulled the plug")
            terminated_at = time.monotonic()
            while live_pids(mark) and time.monotonic() - terminated_at < 15:
                await asyncio.sleep(0.1)
            gone_after = time.monotonic() - terminated_at
    assert not live_pids(mark), "the terminated run's command is still running"
    # A terminated run runs no code of its own, so no kill on the host: the command ends when
    # its activity's next heartbeat (one every HEARTBEAT_INTERVAL_S) finds the run gone.
    assert gone_after < HEARTBEAT_INTERVAL_S + 3, gone_after


def git(repo, *args) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def sleepers(mark: str) -> list[int]:
    """The `sleep` processes themselves: bwrap and bash have the mark in their command line too."""
    return [p for p in live_pids(mark) if open(f"/proc/{p}/cmdline").read().startswith("sleep")]


def worktree_of(repo, name_mark: str) -> Path | None:
    """The worktree whose checkout holds the file named `name_mark` (each child makes one)."""
    for line in git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree ") and "/.claude/worktrees/" in line:
            path = Path(line.split(" ", 1)[1])
            if (path / name_mark).exists() or name_mark in git(path, "status", "--porcelain"):
                return path
    return None


async def test_the_reaper_cleans_up_worktrees_of_terminated_runs(
    client, git_repo, tmp_path, monkeypatch, caplog
):
    """A terminated agent never cleans up its worktree. The reaper removes an unchanged one
    with its branch, keeps one with changes (the run's work), and leaves a running agent's."""
    # Its own state directory: the session's (shared by every test) holds the worktree and
    # snapshot records of earlier tests, and reaping them all made this test 6x slower.
    # The agent's activities run in this process, so they record here as well.
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    mark = f"1238.{random.randint(10**6, 10**7)}"

    def child(name: str, before: str) -> dict:
        command = f"{before}sleep {mark} & wait"
        return {
            "name": name,
            "match": {"agent_name": name},
            "turns": [
                {"tool_use": {"name": "Bash", "input": {"command": command}}},
                {"text": "never"},
            ],
        }

    script = {
        "agents": [
            child("clean", ""),
            child("dirty", "echo work > dirty-work.txt && "),
            child("alive", "echo work > alive-work.txt && "),
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": [
                            spawn(n, "work", True, isolation="worktree")
                            for n in ("clean", "dirty", "alive")
                        ]
                    },
                    {"text": "waiting"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_for(lambda: len(sleepers(mark)) == 3, timeout=30)
            worktrees = {
                line.split(" ", 1)[1]
                for line in git(git_repo, "worktree", "list", "--porcelain").splitlines()
                if line.startswith("worktree ") and "/.claude/worktrees/" in line
            }
            assert len(worktrees) == 3
            for name in ("clean", "dirty"):
                await client.get_workflow_handle(f"{handle.id}/{name}").terminate()
            await wait_for(lambda: len(sleepers(mark)) == 1, timeout=15)
            dirty = worktree_of(git_repo, "dirty-work.txt")
            alive = worktree_of(git_repo, "alive-work.txt")
            (clean,) = {Path(p) for p in worktrees} - {dirty, alive}
            # `outlast reap --dry-run` as a person runs it: what would go, and nothing goes.
            dry = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "outlast.cli", "reap", "--dry-run"],
                env={**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert dry.returncode == 0, dry.stdout + dry.stderr
            # What the real run then does: it said "would clean up" of both (a user test).
            said = " ".join(dry.stdout.split())
            assert f"{clean} ({handle.id}/clean, terminated): would remove: no changes" in said
            assert f"{dirty} ({handle.id}/dirty, terminated): would keep: worktree has 1 " in said
            assert clean.exists() and dirty.exists()
            # No line of a real run's ("removed PATH ..."). Not "removed" anywhere: other
            # tests' leftovers it lists may have it in their paths (`test_a_removed_...`).
            done = ("removed ", "killed ", "kept ")
            assert not [line for line in dry.stdout.splitlines() if line.startswith(done)]
            assert len(branch_names(git_repo)) == 3
            caplog.clear()
            reaped = {r.worktree_path: r for r in await reap(client)}
            # Said once, by whoever asked (`outlast reap` printed each kept one twice: its
            # line, and the reaper's own warning; a user test, 2026-12-05).
            assert not [r for r in caplog.records if r.name == "outlast.reaper"]
            await client.get_workflow_handle(f"{handle.id}/alive").terminate()
            with contextlib.suppress(RPCError):  # it may have ended with its child
                await handle.terminate()
    assert reaped[str(clean)].removed and reaped[str(clean)].owner_status == "TERMINATED"
    assert not clean.exists()
    assert not reaped[str(dirty)].removed and "untracked file" in reaped[str(dirty)].reason
    assert (dirty / "dirty-work.txt").read_text() == "work\n"
    assert str(alive) not in reaped and alive.exists()
    assert len(branch_names(git_repo)) == 2  # the kept one's and the running one's
    # Nothing is left to reap for the two handled: their records are gone.
    again = {r.worktree_path for r in await reap(client, dry_run=True)}
    assert str(clean) not in again and str(dirty) not in again


def branch_names(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)", "--list", "worktree-*").split()


async def test_the_reaper_leaves_the_worktree_of_an_owner_not_started_yet(
    client, git_repo, tmp_path, monkeypatch
):
    """A parent makes its child's worktree, then starts the child; a worker that restarts in
    between reaps at once, and the server knows no such workflow yet. That read as "closed
    and gone past retention", and the worktree the child was about to start in was removed.
    An unknown owner's worktree goes only once its record is older than any retention."""
    from activities import worktree_owners
    from activities.worktree import CreateWorktreeInput, create_worktree

    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    owner = f"not-started-{random.randint(10**6, 10**7)}"
    info = await create_worktree(
        CreateWorktreeInput(
            repo_root=str(git_repo),
            slug=f"agent-a{random.randint(16**6, 16**7 - 1):07x}",
            owner_workflow_id=owner,
        )
    )
    # As the activity records it (this test calls the function outside an activity).
    worktree_owners.remember(
        worktree_owners.WorktreeOwner(workflow_id=owner, **info.model_dump(exclude={"existed"}))
    )
    assert [r for r in await reap(client) if r.worktree_path == info.worktree_path] == []
    assert Path(info.worktree_path).is_dir()
    record = next((tmp_path / "state").resolve().glob("worktree-owners/*.json"))
    old = time.time() - 2 * 24 * 3600
    os.utime(record, (old, old))
    assert worktree_owners.record_age_s(info.worktree_path) > 24 * 3600
    (reaped,) = [r for r in await reap(client) if r.worktree_path == info.worktree_path]
    assert reaped.removed and reaped.owner_status == "NOT_FOUND"
    assert not Path(info.worktree_path).exists()


async def test_the_reaper_cancels_the_sub_agents_a_terminated_parent_left_running(client, git_repo):
    """A sub-agent is started ABANDON (it must outlive its parent's continue-as-new), so a
    terminated parent left its sync child running, its command and model calls with it. The
    reaper cancels such a child (it ends killed, its command gone); a running parent's child
    is left alone."""
    from temporalio.client import WorkflowExecutionStatus

    from outlast.orphans import stop_orphans

    mark = f"1239.{random.randint(10**6, 10**7)}"
    script = {
        "agents": [
            {
                "name": "kid",
                "match": {"agent_name": "kid"},
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": f"sleep {mark} & wait"}}},
                    {"text": "never"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [{"tool_use": spawn("kid", "work", False)}, {"text": "done"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            gone = await start(client, agent_input("go", git_repo, queues), queues)
            kept = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_for(lambda: len(sleepers(mark)) == 2, timeout=30)
            await gone.terminate(reason="operator pulled the plug")
            dry = await stop_orphans(client, dry_run=True, parents=[gone.id])
            assert [(o.workflow_id, o.cancelled) for o in dry] == [(f"{gone.id}/kid", False)]
            assert len(sleepers(mark)) == 2  # a dry run changes nothing
            # Only this test's: the namespace holds other tests' runs.
            done = await stop_orphans(client, parents=[gone.id, kept.id])
            orphan = client.get_workflow_handle(f"{gone.id}/kid")
            await wait_for(lambda: len(sleepers(mark)) == 1, timeout=15)
            orphan_status = await status_once_closed(orphan)
            kid_status = (await client.get_workflow_handle(f"{kept.id}/kid").describe()).status
            await kept.terminate()
            await stop_orphans(client, parents=[kept.id])  # the test leaves nothing running
    assert [(o.workflow_id, o.parent_status, o.cancelled) for o in done] == [
        (f"{gone.id}/kid", "TERMINATED", True)
    ]
    assert "its parent" in done[0].reason and "terminated" in done[0].reason
    assert orphan_status == WorkflowExecutionStatus.CANCELED
    assert kid_status == WorkflowExecutionStatus.RUNNING


async def test_the_reaper_cancels_a_resumed_sub_agent_of_a_terminated_parent(client, git_repo):
    """A sub-agent resumed by SendMessage is a run its parent's activity started, no child in
    Temporal's terms: its start names the parent in its memo, and the reaper goes by that."""
    from temporalio.client import WorkflowExecutionStatus

    from outlast.orphans import stop_orphans
    from tests.replay.scenarios_subagents import kid, resuming_parent

    mark = f"1240.{random.randint(10**6, 10**7)}"
    sleep = {"tool_use": {"name": "Bash", "input": {"command": f"sleep {mark} & wait"}}}
    first_then_sleep = kid("helper", {"text": "first"}, sleep, {"text": "never"})
    script = {"agents": [first_then_sleep, resuming_parent("more")]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_for(lambda: len(sleepers(mark)) == 1, timeout=30)
            helper = client.get_workflow_handle(f"{parent.id}/helper")
            desc = await helper.describe()
            # The resumed run: no parent in Temporal's terms, its parent in the memo.
            assert desc.parent_id is None
            assert (await desc.memo()).get("parent_workflow_id") == parent.id
            await parent.terminate(reason="operator pulled the plug")
            done = await stop_orphans(client, parents=[parent.id])
            await wait_for(lambda: not sleepers(mark), timeout=15)
            status = await status_once_closed(helper)
    assert [(o.workflow_id, o.cancelled) for o in done] == [(f"{parent.id}/helper", True)]
    assert status == WorkflowExecutionStatus.CANCELED


async def status_once_closed(handle, timeout: float = 10):
    """The run's status once it has closed (a cancelled agent cleans up first), or RUNNING."""
    from temporalio.client import WorkflowExecutionStatus

    status = None
    for _ in range(int(timeout * 10)):
        status = (await handle.describe()).status
        if status != WorkflowExecutionStatus.RUNNING:
            break
        await asyncio.sleep(0.1)
    return status


async def test_a_model_call_of_a_terminated_agent_ends_in_one_log_line(client, git_repo, caplog):
    """Terminated during a model call, the call's cancel (the server no longer has its
    attempt) was logged as the SDK's warning with ~80 lines of traceback, per agent (a user
    test, 2026-12-05): one INFO line now."""
    import logging

    from tests.workflows.test_agent_control import wait_status

    caplog.set_level(logging.INFO)
    # The reply comes well after the heartbeat that learns of the terminate: heartbeats are
    # throttled to 0.8 x the 5 s timeout, so one sent just before the terminate left the next
    # one at ~6 s, and a 6 s reply under load beat it (then nothing was cancelled).
    script = {"agents": [{"name": "m", "turns": [{"delay_ms": 20000, "text": "late"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_status(handle, lambda s: s.state == "calling_model")
            # The state shows before the call's activity is scheduled and picked up; a
            # terminate before that leaves no attempt to cancel.
            await _model_call_started(handle)
            await handle.terminate("enough")
            await wait_for(
                lambda: any(
                    "Stopped: the server no longer" in r.getMessage() for r in caplog.records
                ),
                timeout=30,
            )
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]


async def _model_call_started(handle) -> None:
    started = PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
    for _ in range(300):
        pending = (await handle.describe()).raw_description.pending_activities
        if any(a.state == started for a in pending):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the model call was not picked up within 30 s")


async def test_the_reaper_gives_a_completed_parent_s_sub_agent_a_minute_to_close(
    client, git_repo, monkeypatch
):
    """A team that continued as new completes once its members' last reports are in, a
    moment before their runs close; a reaper scan then cancelled such a member, its work
    done. A sub-agent of a parent that completed is left for `COMPLETED_GRACE`, then
    cancelled as before."""
    import uuid

    from outlast import orphans

    with scripted_model({"agents": [{"name": "main", "turns": [{"text": "done"}]}]}):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            await parent.result()
    # Its sub-agent, still running: no worker polls its queue (the memo names the parent,
    # as a resumed sub-agent's start does).
    kid = await client.start_workflow(
        "AgentWorkflow",
        agent_input("go", git_repo, queues),
        id=f"{parent.id}/kid-{uuid.uuid4().hex[:6]}",
        task_queue=f"none-{uuid.uuid4().hex}",
        memo={orphans.MEMO_PARENT: parent.id},
    )
    try:
        assert await orphans.stop_orphans(client, parents=[parent.id]) == []
        monkeypatch.setattr(orphans, "COMPLETED_GRACE", timedelta(0))
        done = await orphans.stop_orphans(client, parents=[parent.id])
        assert [(o.workflow_id, o.parent_status, o.cancelled) for o in done] == [
            (kid.id, "COMPLETED", True)
        ]
    finally:
        await kid.terminate(reason="test")
