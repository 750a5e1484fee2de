"""Sync sub-agents started by one response share one background-hint timer (R21): each still
gets its hint after 2 s, also when the child whose wait started the timer ends first."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle

from tests.support import agent_input, patch_ids, running_workers, scripted_model, start
from workflows.contracts import AgentStatus
from workflows.versions import BASELINE


def spawn(name: str) -> dict:
    return {
        "name": "Agent",
        "input": {"description": f"look at {name}", "prompt": f"{name}: look", "name": name},
    }


def script(children: dict[str, int]) -> dict:
    """The parent's first response starts every child (sync) at once; child `name` answers
    after `children[name]` ms."""
    kids = [
        {
            "name": name,
            "match": {"agent_name": name},
            "turns": [{"delay_ms": delay, "text": f"{name} done"}],
        }
        for name, delay in children.items()
    ]
    parent = {
        "name": "main",
        "turns": [
            {"text": "fanning out", "tool_use": [spawn(name) for name in children]},
            {"text": "all answered"},
        ],
    }
    return {"agents": [*kids, parent]}


async def timer_events(handle: WorkflowHandle) -> list[int]:
    kinds = (EventType.EVENT_TYPE_TIMER_STARTED, EventType.EVENT_TYPE_TIMER_FIRED)
    return [e.event_type async for e in handle.fetch_history_events() if e.event_type in kinds]


async def run(client, git_repo, children: dict[str, int]) -> tuple[AgentStatus, WorkflowHandle]:
    with scripted_model(script(children)):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            result = await parent.result()
            status = await parent.query("status", result_type=AgentStatus)
    assert result.final_text == "all answered"
    return status, parent


async def test_a_response_s_sync_children_share_one_hint_timer(client, git_repo):
    status, parent = await run(client, git_repo, {"k1": 2600, "k2": 2600, "k3": 2600})
    assert {c.name: c.background_hint for c in status.children} == {
        "k1": True,
        "k2": True,
        "k3": True,
    }
    # One timer, not three: the three waits began in the workflow task that saw them start.
    assert await timer_events(parent) == [
        EventType.EVENT_TYPE_TIMER_STARTED,
        EventType.EVENT_TYPE_TIMER_FIRED,
    ]
    assert await patch_ids(parent) == [BASELINE]  # the sharing is part of the baseline


async def test_the_shared_timer_outlives_the_child_that_started_it(client, git_repo):
    """The quick child is the first call: its wait starts the timer and ends before 2 s; the
    slow ones still get their hint from that same timer."""
    status, parent = await run(client, git_repo, {"quick": 0, "slow1": 3000, "slow2": 3000})
    hints = {c.name: c.background_hint for c in status.children}
    assert hints == {"quick": False, "slow1": True, "slow2": True}
    assert await timer_events(parent) == [
        EventType.EVENT_TYPE_TIMER_STARTED,
        EventType.EVENT_TYPE_TIMER_FIRED,
    ]


async def test_a_lone_sync_child_keeps_its_own_timer(client, git_repo):
    status, parent = await run(client, git_repo, {"solo": 2600})
    assert [c.background_hint for c in status.children] == [True]
    assert await timer_events(parent) == [
        EventType.EVENT_TYPE_TIMER_STARTED,
        EventType.EVENT_TYPE_TIMER_FIRED,
    ]
