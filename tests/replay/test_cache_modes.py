"""Reliability row 8: the corpus scenarios run again on today's code, with every workflow task
replayed from history (`cached=0`) and with a warm cache, and make exactly the activities
their committed history recorded: the same types, the same number of each, in both modes."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType

from tests import support
from tests.replay.record import HISTORIES, SCENARIOS

pytestmark = pytest.mark.reliability

# Scenarios whose newest recording is today's behaviour, and whose parent makes the same
# activities however the timing falls. Left out: orchestrators that react to notification
# batches (coordinator, team, background sub-agents: whether two notifications share a turn
# decides the number of model calls) and the killed and continued runs.
DETERMINISTIC = [
    "agent_demo",
    "agent_tool_errors",
    "subagents_resume",
    "pipeline",
    "plan_approved",
    "plan_rejected",
    "verified_task_v2",
    "fork_join",
]


def recorded(name: str) -> Counter:
    events = json.loads((HISTORIES / f"{name}.json").read_text())["events"]
    return Counter(
        e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
        for e in events
        if "activityTaskScheduledEventAttributes" in e
    )


async def made(handle) -> Counter:
    kinds: Counter = Counter()
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kinds[e.activity_task_scheduled_event_attributes.activity_type.name] += 1
    return kinds


@pytest.mark.parametrize("cached", [0, 1000], ids=["full-replay", "cached"])
@pytest.mark.parametrize("name", DETERMINISTIC)
async def test_scenario_makes_exactly_the_recorded_activities(
    name: str, cached: int, client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(support, "DEFAULT_CACHED", cached)
    monkeypatch.setenv("OUTLAST_RECORDING", f"{name}-{cached}-{uuid.uuid4().hex[:8]}")
    handle = await SCENARIOS[name](client, tmp_path)
    assert await made(handle) == recorded(name)
