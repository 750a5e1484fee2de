"""A worker SIGKILLed while a Bash command runs (reliability row 1). Unsandboxed, the
command's own session outlives the worker and the retry on the next worker kills it before
running the command again; in the writer sandbox (the default where bubblewrap works) it dies
with its worker. Either way the model is told it was re-run."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path

import pytest

from activities.sandbox import WRITER_SANDBOX_ENV
from agents.config import OutlastConfig, ToolSettings
from outlast.client import connect
from tests.activities.test_tool_bash import live_pids
from tests.support import FAST_MODEL, agent_input, crashable_worker, scripted_model, start, wait_for
from tests.workflows.test_stop_and_kill import processes_with

pytestmark = pytest.mark.reliability


def script(mark: str) -> dict:
    # The first run sleeps (and is interrupted); the run after the crash finds `second` and ends.
    return one_command(
        "echo start >> runs.log; "
        f"if [ ! -f second ]; then touch second; sleep {mark}; fi; "
        "echo end >> runs.log"
    )


def one_command(command: str) -> dict:
    """A model that runs `command` with Bash once, then answers."""
    bash = {"tool_use": {"name": "Bash", "input": {"command": command}}}
    return {"agents": [{"name": "main", "turns": [bash, {"text": "done"}]}]}


def counted_runs(mark: str, sleeping: int) -> str:
    """A command that counts its runs (runs.count, runs.log): the first `sleeping` of them
    sleep, for the test to stop their worker; the next one ends."""
    return (
        "n=$(cat runs.count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > runs.count; "
        f"echo start >> runs.log; if [ $n -le {sleeping} ]; then sleep {mark}; fi; "
        "echo end >> runs.log"
    )


async def stop_the_worker_running(w, sleepers) -> int:
    """SIGTERM (a graceful stop) the worker process the one sleeper runs under, once there
    is one; its pid."""
    await wait_for(lambda: bool(sleepers()), timeout=30)
    (sleeper,) = sleepers()
    running_on = parent_of(sleeper)  # sleep <- bash [<- bwrap <- bwrap] <- the worker
    while running_on not in w.pids and running_on > 1:
        running_on = parent_of(running_on)
    assert running_on in w.pids
    w.terminate(running_on)
    return running_on


@pytest.mark.parametrize("writer_sandbox", ["off", "auto"])
async def test_sigkill_during_bash_kills_the_old_run_then_reruns_and_says_so(
    dev_server, git_repo, monkeypatch, writer_sandbox
):
    monkeypatch.setenv(WRITER_SANDBOX_ENV, writer_sandbox)  # the worker processes inherit it
    mark = f"1234.{random.randint(10**6, 10**7)}"
    config = OutlastConfig(model=FAST_MODEL, tools=ToolSettings(heartbeat_timeout_s=10))
    with (
        scripted_model(script(mark), log_bodies=True) as model,
        crashable_worker(dev_server.address, model.url) as w,
    ):
        client = await connect(dev_server.address)
        handle = await start(
            client, agent_input("run it", git_repo, w.queues, config=config), w.queues
        )
        # The sleep itself: a match on the mark alone may also be the shell's fork for
        # `touch`, which holds the shell's command line until it execs, and is gone then.
        await wait_for(lambda: bool(processes_with(f"sleep {mark}", exact=True)), timeout=30)
        first_run = processes_with(f"sleep {mark}", exact=True)
        # Its output goes to a file in its scratch directory, which the crash leaves behind.
        scratch = Path(os.readlink(f"/proc/{first_run[0]}/fd/1")).parent
        assert scratch.name.startswith("outlast-bash-") and scratch.is_dir()
        w.crash()
        if writer_sandbox == "off":
            # The interrupted run's sleep is still there: nothing but the retry will end it.
            assert all(pid in live_pids(mark) for pid in first_run)
        else:
            # bwrap --die-with-parent: the sandbox goes down with the worker.
            await wait_for(lambda: not live_pids(mark), timeout=5)
        result = await asyncio.wait_for(handle.result(), timeout=60)

    assert result.status == "completed"
    assert not live_pids(mark), "the interrupted run's processes outlived the re-run"
    assert (git_repo / "runs.log").read_text() == "start\nstart\nend\n"
    final = json.dumps([r for r in model.log if r["outcome"] == "completed"][-1]["body"])
    assert "had already started once" in final
    assert not scratch.exists(), "the interrupted run's scratch directory was left in /tmp"


def command_of(pid: int) -> str:
    """The process's command line; "" once it has exited (between a listing and this read:
    the test failed on that with FileNotFoundError, in CI)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def parent_of(pid: int) -> int:
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])


async def test_sigterm_during_bash_leaves_no_orphan_and_another_worker_finishes(
    dev_server, git_repo
):
    mark = f"1235.{random.randint(10**6, 10**7)}"
    config = OutlastConfig(model=FAST_MODEL, tools=ToolSettings(heartbeat_timeout_s=10))
    with (
        scripted_model(script(mark), log_bodies=True) as model,
        crashable_worker(dev_server.address, model.url) as w,
    ):
        w.start()  # a second worker on the same queues
        client = await connect(dev_server.address)
        inp = agent_input("run it", git_repo, w.queues, config=config)
        handle = await start(client, inp, w.queues)

        def sleepers() -> list[int]:  # not bwrap or bash, whose command lines hold the mark too
            return [p for p in live_pids(mark) if command_of(p)[:5] == "sleep"]

        running_on = await stop_the_worker_running(w, sleepers)
        assert not live_pids(mark), "the stopped worker left the command running"
        result = await asyncio.wait_for(handle.result(), timeout=60)
        survivor = w.pids

    assert result.status == "completed" and survivor and running_on not in survivor
    assert (git_repo / "runs.log").read_text() == "start\nstart\nend\n"
    final = json.dumps([r for r in model.log if r["outcome"] == "completed"][-1]["body"])
    assert "had already started once" in final


async def test_two_graceful_stops_during_one_command_still_let_it_finish(dev_server, git_repo):
    """A rolling deploy stops each worker once: a long command met two graceful stops and
    its two attempts were spent ("Bash could not run"). A graceful stop does not count
    against the one re-run a crash is given: the third worker runs it to its end."""
    mark = f"1236.{random.randint(10**6, 10**7)}"
    script = one_command(counted_runs(mark, sleeping=2))
    config = OutlastConfig(model=FAST_MODEL, tools=ToolSettings(heartbeat_timeout_s=10))
    with (
        scripted_model(script, log_bodies=True) as model,
        crashable_worker(dev_server.address, model.url) as w,
    ):
        w.start()
        w.start()  # three workers on the same queues
        client = await connect(dev_server.address)
        handle = await start(
            client, agent_input("run it", git_repo, w.queues, config=config), w.queues
        )

        def sleepers() -> list[int]:
            return [p for p in live_pids(mark) if command_of(p)[:5] == "sleep"]

        for _ in range(2):
            await stop_the_worker_running(w, sleepers)
        result = await asyncio.wait_for(handle.result(), timeout=60)
        attempts = await bash_attempts(handle)

    assert result.status == "completed"
    assert (git_repo / "runs.log").read_text() == "start\nstart\nstart\nend\n"
    assert attempts == [3]  # one activity, its third attempt the one that reported
    last = [r for r in model.log if r["outcome"] == "completed"][-1]["body"]["messages"][-1]
    (block,) = [b for b in last["content"] if b.get("type") == "tool_result"]
    assert not block.get("is_error"), block
    assert "had already started up to twice" in json.dumps(block)  # it said once


async def test_a_command_whose_worker_crashed_twice_is_not_run_a_third_time(dev_server, git_repo):
    """The attempts left for graceful stops do not become re-runs after crashes: after two
    lost workers the model is told, and the command does not run again."""
    mark = f"1237.{random.randint(10**6, 10**7)}"
    command = f"echo start >> runs.log; sleep {mark}; echo end >> runs.log"
    script = one_command(command)
    config = OutlastConfig(model=FAST_MODEL, tools=ToolSettings(heartbeat_timeout_s=5))
    with (
        scripted_model(script, log_bodies=True) as model,
        crashable_worker(dev_server.address, model.url) as w,
    ):
        client = await connect(dev_server.address)
        inp = agent_input("run it", git_repo, w.queues, config=config)
        handle = await start(client, inp, w.queues)
        for runs in (1, 2):
            await wait_for(lambda n=runs: runs_logged(git_repo) == n, timeout=60)
            await wait_for(lambda: bool(processes_with(f"sleep {mark}", exact=True)), timeout=30)
            w.crash()
        result = await asyncio.wait_for(handle.result(), timeout=90)

    assert result.status == "completed"
    assert (git_repo / "runs.log").read_text() == "start\nstart\n"
    assert not live_pids(mark)
    last = [r for r in model.log if r["outcome"] == "completed"][-1]["body"]["messages"][-1]
    (block,) = [b for b in last["content"] if b.get("type") == "tool_result"]
    said = json.dumps(block)
    assert block.get("is_error") and "started 2 times and ended without reporting" in said, said


def runs_logged(repo) -> int:
    try:
        return (repo / "runs.log").read_text().count("start")
    except OSError:
        return 0


async def bash_attempts(handle) -> list[int]:
    """The attempt that reported, for each `tool.bash` activity of the run."""
    scheduled, attempts = set(), []
    async for e in handle.fetch_history_events():
        if e.activity_task_scheduled_event_attributes.activity_type.name == "tool.bash":
            scheduled.add(e.event_id)
        started = e.activity_task_started_event_attributes
        if e.HasField("activity_task_started_event_attributes") and (
            started.scheduled_event_id in scheduled
        ):
            attempts.append(started.attempt)
    return attempts
