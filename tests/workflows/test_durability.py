"""A worker process SIGKILLed mid-call: a new worker finishes the run, nothing repeats."""

from __future__ import annotations

import asyncio
from collections import Counter

from temporalio.api.enums.v1 import EventType

from tests.support import (
    activity_attempts,
    agent_input,
    crashable_worker,
    scripted_model,
    start,
)
from workflows.contracts import AgentStatus

HELD = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "Reading.",
                    "tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}},
                },
                {"delay_ms": 3000, "text": "done after the crash"},
            ],
        }
    ]
}


async def wait_for_model_call(handle, turn: int, timeout: float = 30) -> None:
    """Until the agent's `turn`-th model call is in flight."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        try:
            status = await handle.query("status", result_type=AgentStatus)
            if status.state == "calling_model" and status.turn == turn - 1:
                return
        except Exception:  # noqa: BLE001 - no worker has the workflow yet
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"turn {turn} never started")


async def crash_worker_mid_call(client, dev_server, repo, script, held_workflow_id=None):
    """Start the agent on a worker process, SIGKILL that process while the model holds its
    second call (of `held_workflow_id`, default the agent itself), start a fresh worker, and
    return (handle, result, model log)."""
    with scripted_model(script) as model, crashable_worker(dev_server.address, model.url) as w:
        handle = await start(client, agent_input("go", repo, w.queues), w.queues)
        held = handle
        if held_workflow_id is not None:
            held = client.get_workflow_handle(held_workflow_id(handle.id))
        await wait_for_model_call(held, turn=2)
        await asyncio.sleep(0.5)  # the request is on the wire, the response held
        w.crash()
        result = await asyncio.wait_for(handle.result(), timeout=90)
        return handle, result, model.log


async def test_sigkill_worker_while_model_holds_response(client, dev_server, git_repo):
    handle, result, log = await crash_worker_mid_call(client, dev_server, git_repo, HELD)
    assert result.status == "completed" and result.final_text == "done after the crash"
    completed = Counter(r["turn"] for r in log if r["outcome"] == "completed")
    assert completed == {0: 1, 1: 1}, log
    assert any(r["turn"] == 1 and r["outcome"] == "disconnected" for r in log)
    calls = [a for n, a in await activity_attempts(handle) if n == "llm.call_model"]
    assert calls == [1, 2]


TREE = {
    "agents": [
        {
            "name": "kid",
            "match": {"agent_name": "kid"},
            "turns": [
                {"text": "Looking.", "tool_use": {"name": "Glob", "input": {"pattern": "**/*.py"}}},
                {"delay_ms": 3000, "text": "kid done after the crash"},
            ],
        },
        {
            "name": "parent",
            "turns": [
                {
                    "tool_use": {
                        "name": "Agent",
                        "input": {
                            "description": "slow kid",
                            "prompt": "look around",
                            "name": "kid",
                        },
                    }
                },
                {"text": "parent done"},
            ],
        },
    ]
}


async def test_sigkill_worker_while_a_child_runs(client, dev_server, git_repo):
    handle, result, log = await crash_worker_mid_call(
        client, dev_server, git_repo, TREE, held_workflow_id=lambda parent: f"{parent}/kid"
    )
    assert result.status == "completed" and result.final_text == "parent done"
    completed = Counter((r["agent"], r["turn"]) for r in log if r["outcome"] == "completed")
    assert completed == {("parent", 0): 1, ("kid", 0): 1, ("kid", 1): 1, ("parent", 1): 1}, log
    runs = [w async for w in client.list_workflows(f'WorkflowId = "{handle.id}/kid"')]
    assert len(runs) == 1
    started = 0
    async for event in handle.fetch_history_events():
        started += event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    assert started == 1
