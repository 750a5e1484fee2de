"""Reliability row 8: the corpus scenarios run again on today's code, with every workflow task
replayed from history (`cached=0`) and with a warm cache, and make exactly the activities
their committed history recorded: the same types, the same number of each, in both modes."""

from __future__ import annotations

import base64
import json
import uuid
from collections import Counter
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType

from tests import support
from tests.replay.record import CHILDREN, HISTORIES, SCENARIOS

pytestmark = pytest.mark.reliability

# Scenarios whose newest recording is today's behaviour, and whose parent makes the same
# activities however the timing falls. Left out: orchestrators that react to notification
# batches (coordinator, team, background sub-agents: whether two notifications share a turn
# decides the number of model calls) and the killed and continued runs.
DETERMINISTIC = [
    "agent_demo",
    "agent_demo_v2",
    "agent_tool_errors",
    "subagents_resume",
    "pipeline_v3",
    "plan_approved_v2",
    "plan_rejected",
    "verified_task_v8",
    "fork_join",
]


def recorded(name: str) -> Counter:
    """Activities by type in a committed history, local ones named as their tool."""
    events = json.loads((HISTORIES / f"{name}.json").read_text())["events"]
    kinds = Counter(
        e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
        for e in events
        if "activityTaskScheduledEventAttributes" in e
    )
    for e in events:
        marker = e.get("markerRecordedEventAttributes", {})
        if marker.get("markerName") == support.LOCAL_ACTIVITY_MARKER:
            data = base64.b64decode(marker["details"]["data"]["payloads"][0]["data"])
            kinds[support.local_activity_of(data)[0]] += 1
    return kinds


async def made(handle) -> Counter:
    """Activities by type; a read-only tool run as a local activity counts as that tool (the
    corpus recorded them before they could run locally)."""
    kinds: Counter = Counter()
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kinds[e.activity_task_scheduled_event_attributes.activity_type.name] += 1
        elif (local := support.local_activity(e)) is not None:
            kinds[local[0]] += 1
    return kinds


async def run_scenario(name: str, cached: int, client, tmp_path: Path, monkeypatch):
    """A corpus scenario run again on today's code, with `cached` workflows kept."""
    monkeypatch.setattr(support, "DEFAULT_CACHED", cached)
    monkeypatch.setenv("OUTLAST_RECORDING", f"{name}-{cached}-{uuid.uuid4().hex[:8]}")
    return await SCENARIOS[name](client, tmp_path)


@pytest.mark.parametrize("cached", [0, 1000], ids=["full-replay", "cached"])
@pytest.mark.parametrize("name", DETERMINISTIC)
async def test_scenario_makes_exactly_the_recorded_activities(
    name: str, cached: int, client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    handle = await run_scenario(name, cached, client, tmp_path, monkeypatch)
    assert await made(handle) == recorded(name)


# Orchestrators whose model-call count depends on how notifications batch: everything else
# they do (tools, children, the store) must still match their recording exactly.
TIMING_DEPENDENT = [
    "coordinator",
    # The teams' members' types are looked up first (patched team-agent-types-checked).
    "team_v2",
    # Its member b, stopped, keeps its last tool results (patched last-results-kept).
    "team_shutdown_v8",
    # The lead adds a member: the team's add_member update, replayed task by task too.
    "team_spawn_v2",
    "subagents_sync_async_v2",
    "subagents_spawn_limit",
]
MODEL_CALL = "llm.call_model"


def children_recorded(name: str) -> int:
    events = json.loads((HISTORIES / f"{name}.json").read_text())["events"]
    return sum("startChildWorkflowExecutionInitiatedEventAttributes" in e for e in events)


async def children_started(handle) -> int:
    kind = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    return sum([e.event_type == kind async for e in handle.fetch_history_events()])


def without_model_calls(kinds: Counter) -> Counter:
    return Counter({k: n for k, n in kinds.items() if k != MODEL_CALL})


@pytest.mark.parametrize("cached", [0, 1000], ids=["full-replay", "cached"])
@pytest.mark.parametrize("name", TIMING_DEPENDENT)
async def test_orchestrators_make_the_recorded_tools_and_children(
    name: str, cached: int, client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    handle = await run_scenario(name, cached, client, tmp_path, monkeypatch)
    kinds = await made(handle)
    assert without_model_calls(kinds) == without_model_calls(recorded(name))
    assert await children_started(handle) == children_recorded(name)
    for child in CHILDREN.get(name, []):
        child_handle = client.get_workflow_handle(f"{handle.id}/{child}")
        assert without_model_calls(await made(child_handle)) == without_model_calls(
            recorded(f"{name}__{child}")
        ), child
