"""TaskStop reaching a coordinator's queued worker while it starts: off the queue, its child
workflow not registered yet. The stop is kept and carried out once the worker has started,
instead of "No task found" and a worker that runs anyway."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from tests.interceptors import Hold
from tests.support import (
    fast_config,
    notifications,
    running_workers,
    scripted_model,
    tool_results,
    wait_for,
)
from tests.workflows.test_coordinator import run_coordinator, start_coordinator, worker

SLOW_START = Hold(3, child_suffix="/queued")
"""The child workflow `queued` starts 3 s late: the coordinator's next turn comes while it is
still starting."""


SPAWN_BOTH = {
    "tool_use": [
        worker("holder", "implementation", "Edit README.md.", ["README.md"]),
        worker("queued", "implementation", "Edit it too.", ["README.md"]),
    ]
}
"""Both edit README.md: `queued` waits for `holder`."""

SCRIPT = {
    "agents": [
        {
            "name": "holder",
            "match": {"agent_name": "holder"},
            "turns": [{"delay_ms": 1500, "text": "HOLDER-DONE"}],
        },
        {
            "name": "queued",
            "match": {"agent_name": "queued"},
            "turns": [{"delay_ms": 20000, "text": "QUEUED-DONE"}],
        },
        {
            "name": "coordinator",
            "match": {"agent_type": "coordinator"},
            "turns": [
                SPAWN_BOTH,
                {"text": "Waiting."},  # long before the holder ends (1.5 s)
                # Holder's notification: its files are free and `queued` starts.
                {"tool_use": {"name": "TaskStop", "input": {"task_id": "queued"}}},
                {"text": "Waiting."},
                {"text": "All done."},
            ],
            "after_last": "repeat_last",
        },
    ]
}


async def stop_as_it_starts(client, git_repo, wf_id: str | None = None):
    """(the coordinator's handle, its result, the scripted model's log)"""
    wf_id = wf_id or f"coord-{uuid.uuid4().hex[:8]}"
    with scripted_model(SCRIPT, log_bodies=True) as model:
        async with running_workers(client, interceptors=[SLOW_START]) as queues:
            handle, result = await run_coordinator(client, queues, git_repo, wf_id)
    return handle, result, model.log


async def test_task_stop_of_a_starting_queued_worker_stops_it_once_started(client, git_repo):
    handle, result, log = await stop_as_it_starts(client, git_repo)
    queued = await client.get_workflow_handle(f"{handle.id}/queued").describe()
    assert result.status == "completed", result.error
    stop = tool_results(result)[-1]
    assert not stop.is_error and "was starting" in stop.content, stop.content
    assert queued.status == WorkflowExecutionStatus.CANCELED
    (_, killed) = notifications(result)
    assert "<status>killed</status>" in killed and "queued" in killed
    queued_calls = [r for r in log if r["headers"].get("x-outlast-agent-name") == "queued"]
    assert len(queued_calls) <= 1  # stopped at its first model call at the latest


KILL_SCRIPT = {
    "agents": [
        *SCRIPT["agents"][:2],
        {
            "name": "coordinator",
            "match": {"agent_type": "coordinator"},
            "turns": [
                SPAWN_BOTH,
                {"text": "Waiting."},
            ],
            "after_last": "repeat_last",
        },
    ]
}


async def test_a_killed_coordinator_stops_a_worker_that_was_starting(client, git_repo):
    """R92: killed while a queued worker's child workflow has started but is not registered
    yet, the coordinator waits for it and stops it with the others. It ended first, and the
    worker ran on for no one."""
    held = threading.Event()
    unheard = Hold(4, child_suffix="/queued", after_start=True, on_hold=held.set)
    wf_id = f"coord-{uuid.uuid4().hex[:8]}"
    with scripted_model(KILL_SCRIPT):
        async with running_workers(client, interceptors=[unheard]) as queues:
            handle = await start_coordinator(client, queues, git_repo, wf_id, config=fast_config())
            await wait_for(held.is_set)  # the holder is done: `queued` started, unheard of
            await handle.cancel()
            with pytest.raises(WorkflowFailureError):
                await handle.result()
            queued = client.get_workflow_handle(f"{wf_id}/queued")
            # Its model call takes 20 s: stopped, it ends long before.
            status = await wait_status_change(queued, timeout=15)
    assert status == WorkflowExecutionStatus.CANCELED


async def wait_status_change(handle, timeout: float) -> WorkflowExecutionStatus | None:
    """The workflow's status once it is no longer running (None if it still is)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        status = (await handle.describe()).status
        if status != WorkflowExecutionStatus.RUNNING or (
            asyncio.get_running_loop().time() > deadline
        ):
            return None if status == WorkflowExecutionStatus.RUNNING else status
        await asyncio.sleep(0.2)
