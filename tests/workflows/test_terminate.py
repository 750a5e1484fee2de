"""Terminate, not cancel, during a tool (reliability row 4): the workflow gets no chance to
clean up, so the tool's processes must die on their own at the next heartbeat (the server
answers it with "not found", which the worker turns into a cancellation)."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from tests.activities.test_tool_bash import live_pids
from tests.support import agent_input, running_workers, scripted_model, start, wait_for

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
    # Heartbeats go out every second (throttled to at most one a second): a few of them.
    assert gone_after < 5, gone_after
