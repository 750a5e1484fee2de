"""A worker SIGKILLed while a Bash command runs (reliability row 1): the command's own
session outlives the worker; the retry on the next worker kills it before running the
command again, and the model is told it was re-run."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from agents.config import OutlastConfig, ToolSettings
from outlast.client import connect
from tests.activities.test_tool_bash import live_pids
from tests.support import FAST_MODEL, agent_input, crashable_worker, scripted_model, start, wait_for

pytestmark = pytest.mark.reliability


def script(mark: str) -> dict:
    # The first run sleeps (and is interrupted); the run after the crash finds `second` and ends.
    command = (
        "echo start >> runs.log; "
        f"if [ ! -f second ]; then touch second; sleep {mark}; fi; "
        "echo end >> runs.log"
    )
    return {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": command}}},
                    {"text": "done"},
                ],
            }
        ]
    }


async def test_sigkill_during_bash_kills_the_old_run_then_reruns_and_says_so(dev_server, git_repo):
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
        await wait_for(lambda: bool(live_pids(mark)), timeout=30)
        first_run = live_pids(mark)
        w.crash()
        # The interrupted run's sleep is still there: nothing but the retry will end it.
        assert all(pid in live_pids(mark) for pid in first_run)
        result = await asyncio.wait_for(handle.result(), timeout=60)

    assert result.status == "completed"
    assert not live_pids(mark), "the interrupted run's processes outlived the re-run"
    assert (git_repo / "runs.log").read_text() == "start\nstart\nend\n"
    final = json.dumps([r for r in model.log if r["outcome"] == "completed"][-1]["body"])
    assert "had already started once" in final


def command_of(pid: int) -> str:
    return open(f"/proc/{pid}/cmdline").read()


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
        await wait_for(lambda: bool(live_pids(mark)), timeout=30)
        (sleeper,) = [
            p for p in live_pids(mark) if open(f"/proc/{p}/cmdline").read()[:5] == "sleep"
        ]
        running_on = parent_of(parent_of(sleeper))  # sleep <- bash <- the worker process
        assert running_on in w.pids
        w.terminate(running_on)
        assert not live_pids(mark), "the stopped worker left the command running"
        result = await asyncio.wait_for(handle.result(), timeout=60)
        survivor = w.pids

    assert result.status == "completed" and survivor and running_on not in survivor
    assert (git_repo / "runs.log").read_text() == "start\nstart\nend\n"
    final = json.dumps([r for r in model.log if r["outcome"] == "completed"][-1]["body"])
    assert "had already started once" in final
