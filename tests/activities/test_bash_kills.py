"""`tool.bash_kill` (a run's commands killed on their host, without a heartbeat to carry the
cancel), and the kill marks and run records it relies on, with real processes."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.tools import bash as bash_tool
from activities.tools import bash_runs
from activities.tools.base import KillRequest
from activities.tools.bash import NOT_RUN_KILLED, kill_bash_runs, run_bash
from tests.activities import test_tool_bash
from tests.activities.test_tool_bash import eventually, gone_by, live_pids, marker, request

# test_tool_bash's fixtures: this test's own run records and kill marks, a git workspace.
own_state = test_tool_bash.own_state
ws = test_tool_bash.ws


class _Info:
    """What `activity.info()` says to a Bash activity of one workflow run."""

    def __init__(self, workflow_id: str, activity_id: str) -> None:
        self.env = ActivityEnvironment()
        self.env.info = dataclasses.replace(
            self.env.info, workflow_id=workflow_id, workflow_run_id="run-1", activity_id=activity_id
        )


async def test_kill_on_host_stops_that_runs_commands_only(ws: Path) -> None:
    """A killed run's commands stop at once, without a heartbeat to carry the cancel; a
    command of another workflow run goes on."""
    mine, other = marker(), marker()
    task = asyncio.create_task(_Info("wf-a", "5").env.run(run_bash, request(ws, f"sleep {mine}")))
    bystanding = _Info("wf-b", "5").env
    bystander = asyncio.create_task(bystanding.run(run_bash, request(ws, f"sleep {other}")))
    # Recorded, not only running: the record is written just after the command starts (a kill
    # before it is the kill mark's case, tested below); on a loaded machine that is later.
    assert await eventually(
        lambda: live_pids(mine) and live_pids(other) and bash_runs.running_for("wf-a", "run-1"),
        within=10.0,
    )
    killer = _Info("wf-a", "9").env
    started = time.monotonic()
    killed = await killer.run(kill_bash_runs, KillRequest(workflow_id="wf-a", run_id="run-1"))
    out = await asyncio.wait_for(task, timeout=2.0)
    assert time.monotonic() - started < 2.0
    assert killed == 1 and await gone_by(mine, started)
    assert out.is_error and out.content.startswith("Exit code 143")  # SIGTERM
    assert live_pids(other) and not bystander.done()
    # Nothing left to kill: its record says it finished (a kill took the exit status of
    # one for a process group while writing this).
    assert await killer.run(kill_bash_runs, KillRequest(workflow_id="wf-a", run_id="run-1")) == 0
    bystanding.cancel()
    with pytest.raises(asyncio.CancelledError):
        await bystander
    assert await eventually(lambda: not live_pids(other), within=2.0)


async def test_a_kill_as_the_command_starts_leaves_nothing_running(ws: Path) -> None:
    """A kill in the sandbox's first milliseconds would kill bubblewrap and leave the command
    running outside its group: the kill waits until the sandbox is set up."""
    for n in range(5):
        mark = marker()
        env = _Info(f"wf-early-{n}", "5").env
        task = asyncio.create_task(env.run(run_bash, request(ws, f"sleep {mark}")))
        deadline = time.monotonic() + 30
        while not bash_runs.running_for(f"wf-early-{n}", "run-1"):
            assert time.monotonic() < deadline, f"round {n}: the command never started"
            await asyncio.sleep(0.0005)
        kill = KillRequest(workflow_id=f"wf-early-{n}", run_id="run-1")
        assert await _Info(f"wf-early-{n}", "9").env.run(kill_bash_runs, kill) == 1
        await asyncio.wait_for(task, timeout=3.0)
        await asyncio.sleep(0.3)
        assert not live_pids(mark), f"round {n}: the command outlived its kill"


async def test_a_killed_runs_next_command_does_not_run(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Bash call that starts after its run's kill (a worker had taken it just before) runs
    nothing; another run's commands are not affected."""
    marked_first: list[bool] = []
    scan = bash_runs.running_for

    def scan_after_the_mark(workflow_id: str, run_id: str) -> list[int]:
        # The kill marks, then scans: a command recording meanwhile sees one or the other.
        marked_first.append(bash_runs.kill_requested())
        return scan(workflow_id, run_id)

    monkeypatch.setattr(bash_runs, "running_for", scan_after_the_mark)
    kill = KillRequest(workflow_id="wf-late", run_id="run-1")
    assert await _Info("wf-late", "9").env.run(kill_bash_runs, kill) == 0
    assert marked_first == [True]
    out = await _Info("wf-late", "5").env.run(run_bash, request(ws, "touch made"))
    assert out.is_error and out.content == NOT_RUN_KILLED
    assert not (ws / "made").exists()
    other = await _Info("wf-other", "5").env.run(run_bash, request(ws, "touch made"))
    assert not other.is_error and (ws / "made").exists()


async def test_a_killed_runs_retry_kills_the_first_attempts_leftover_and_runs_nothing(
    ws: Path,
) -> None:
    mark = marker()
    leftover = await asyncio.create_subprocess_exec("sleep", mark, start_new_session=True)
    try:
        first, retry = _Info("wf-retry", "6").env, _Info("wf-retry", "6").env
        first.run(bash_runs.remember, leftover.pid)  # what the attempt that died left
        retry.info = dataclasses.replace(retry.info, attempt=2)
        kill = KillRequest(workflow_id="wf-retry", run_id="run-1")
        await _Info("wf-retry", "9").env.run(kill_bash_runs, kill)
        assert await asyncio.wait_for(leftover.wait(), 3.0) == -15  # the kill found it
        again = await retry.run(run_bash, request(ws, "touch made"))
    finally:
        if leftover.returncode is None:
            leftover.kill()
    # The output says it did not run, and does not say it ran again.
    assert again.content == f"{NOT_RUN_KILLED}\n{bash_runs.NOT_RUN_RERUN_NOTE}"
    assert not (ws / "made").exists()
    assert not list((Path(os.environ["OUTLAST_HOME"]) / "bash-runs").iterdir())


async def test_a_kill_during_the_sandbox_probe_stops_the_command_before_it_starts(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_argv = bash_tool.sandbox_argv

    def kill_arrives_meanwhile(*args: object) -> list[str] | str:
        bash_runs.mark_killed("wf-probe", "run-1")  # the probe can take seconds
        return real_argv(*args)

    monkeypatch.setattr(bash_tool, "sandbox_argv", kill_arrives_meanwhile)
    out = await _Info("wf-probe", "5").env.run(run_bash, request(ws, "touch made"))
    assert out.is_error and out.content == NOT_RUN_KILLED
    assert not (ws / "made").exists()


async def test_a_kill_before_the_command_is_recorded_still_kills_it(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kill comes after the Bash activity started but before it recorded its process group,
    so the kill finds nothing to signal: the command kills itself once recorded."""
    mark, record = marker(), bash_runs.remember

    def kill_arrives_then_record(pgid: int, scratch: str | None = None) -> None:
        bash_runs.mark_killed("wf-window", "run-1")  # and its scan found no record
        record(pgid, scratch)

    monkeypatch.setattr(bash_runs, "remember", kill_arrives_then_record)
    started = time.monotonic()
    out = await asyncio.wait_for(
        _Info("wf-window", "5").env.run(run_bash, request(ws, f"sleep {mark}")), timeout=5.0
    )
    assert out.is_error and out.content.startswith("Exit code 143")  # SIGTERM
    assert time.monotonic() - started < 2.0
    assert await gone_by(mark, started)


def test_old_kill_marks_and_run_records_are_pruned(tmp_path: Path) -> None:
    bash_runs.mark_killed("wf-old", "run-1")
    records = tmp_path / "state" / "bash-runs"
    records.mkdir(parents=True)
    (records / "old.json").write_text('{"pgid": 1, "workflow_id": "wf-old", "run_id": "run-1"}')
    (records / "new.json").write_text('{"pgid": 1, "workflow_id": "wf-new", "run_id": "run-1"}')
    marks = tmp_path / "state" / "bash-kills"
    (old_mark,) = marks.iterdir()
    day_ago = time.time() - 24 * 3600
    os.utime(old_mark, (day_ago, day_ago))
    week_ago = time.time() - 8 * 24 * 3600
    os.utime(records / "old.json", (week_ago, week_ago))
    bash_runs.mark_killed("wf-new", "run-1")
    assert not old_mark.exists() and len(list(marks.iterdir())) == 1
    assert bash_runs.running_for("wf-new", "run-1") == []
    assert sorted(p.name for p in records.iterdir()) == ["new.json"]


async def test_a_retry_after_a_lost_result_says_the_command_ran_here_to_its_end(ws: Path) -> None:
    """A server away for longer than the heartbeat timeout: the command ends, its result
    does not reach the server, and the attempt is retried on the same worker. The record was
    gone with the command's end, so the retry said the first run had been on another machine,
    where it might still be running (a user test, 2026-12-05)."""
    first, retry = _Info("wf-lost", "7").env, _Info("wf-lost", "7").env
    retry.info = dataclasses.replace(retry.info, attempt=2)
    command = "echo ran >> runs.log; exit 3"
    out = await first.run(run_bash, request(ws, command))
    assert out.is_error and out.content.startswith("Exit code 3")
    again = await retry.run(run_bash, request(ws, command))
    assert again.content.endswith(bash_runs.RERUN_UNREPORTED_NOTE.format(code="3")), again
    assert (ws / "runs.log").read_text() == "ran\nran\n"


async def test_finished_commands_records_go_after_a_day(ws: Path, monkeypatch) -> None:
    """One record per Bash call: kept a day for a retry, then pruned as new ones come."""
    await _Info("wf-day", "1").env.run(run_bash, request(ws, "true"))
    records = Path(os.environ["OUTLAST_HOME"]) / "bash-runs"
    (old,) = records.glob("*.json")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    monkeypatch.setattr(bash_runs, "_pruned_at", 0.0)
    await _Info("wf-day", "2").env.run(run_bash, request(ws, "true"))
    assert len(list(records.glob("*.json"))) == 1 and not old.exists()


async def test_the_reaper_kills_a_command_its_closed_run_left_running(client, ws: Path) -> None:
    """A worker SIGKILLed under an unsandboxed command (a session of its own, to outlive the
    worker for the retry), then its run terminated: no retry and no kill on the host came,
    and `sleep 301` ran on; `outlast reap` said nothing to clean up (a user test,
    2026-12-05). A command of a run that still runs is left alone."""
    from outlast.reaper import reap

    runs, sleeps, scratches = {}, {}, {}
    for name in ("closed", "running", "other-namespace"):
        handle = await client.start_workflow(
            "AgentWorkflow", id=f"{name}-{uuid.uuid4().hex}", task_queue=f"none-{uuid.uuid4().hex}"
        )
        runs[name] = handle
        sleeps[name] = await asyncio.create_subprocess_exec(
            "sleep", marker(), start_new_session=True
        )
        env = ActivityEnvironment()
        namespace = "elsewhere" if name == "other-namespace" else client.namespace
        env.info = dataclasses.replace(
            env.info,
            workflow_id=runs["closed" if name == "other-namespace" else name].id,
            workflow_run_id=runs["closed" if name == "other-namespace" else name].result_run_id,
            activity_id=f"5-{name}",
            workflow_namespace=namespace,
        )
        # What the dead worker's attempt left: its command, and its scratch directory.
        scratches[name] = Path(tempfile.mkdtemp(prefix="outlast-bash-"))
        env.run(bash_runs.remember, sleeps[name].pid, str(scratches[name]))
    # Another namespace's run of the same id: this namespace's client cannot tell of it.
    await runs["other-namespace"].terminate(reason="test")
    await runs["closed"].terminate(reason="test")
    try:
        dry = [r for r in await reap(client, dry_run=True) if r.kind == "command"]
        assert [(r.workflow_id, r.removed) for r in dry] == [(runs["closed"].id, False)]
        assert dry[0].reason.startswith("would kill (dry run)") and dry[0].owner_status == (
            "TERMINATED"
        )
        assert sleeps["closed"].returncode is None
        (killed,) = [r for r in await reap(client) if r.kind == "command"]
        assert killed.removed and killed.worktree_path == f"process group {sleeps['closed'].pid}"
        assert await asyncio.wait_for(sleeps["closed"].wait(), 5) == -15
        assert sleeps["running"].returncode is None
        assert sleeps["other-namespace"].returncode is None
        assert not scratches["closed"].exists()
        assert scratches["running"].exists() and scratches["other-namespace"].exists()
        assert [r for r in await reap(client) if r.kind == "command"] == []  # its record went
    finally:
        for proc in sleeps.values():
            if proc.returncode is None:
                proc.kill()
        for scratch in scratches.values():
            shutil.rmtree(scratch, ignore_errors=True)
        await runs["running"].terminate(reason="test")
