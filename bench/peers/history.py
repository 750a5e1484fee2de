"""History size of one finished execution, the same way for every configuration.

`history_size_bytes` is the server's own count (DescribeWorkflowExecution), summed over a
continue-as-new chain (Outlast continues as new on long runs; the peers never do), followed
run by run from the first run id so no visibility query (which can lag) is needed.
"""

from __future__ import annotations

import collections

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

CAN = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW


def _stamp(event) -> float:
    return event.event_time.ToNanoseconds() / 1e6


class Timeline:
    """Where one execution's time went, from event timestamps (milliseconds, summed):
    `wft_queue` server dispatch of workflow tasks, `wft_run` worker processing them (local
    activities run inside it), `act_queue` activity dispatch, `act_run:<type>` activity
    execution by type."""

    def __init__(self) -> None:
        self.totals: collections.Counter = collections.Counter()
        self._at: dict[int, tuple[float, str]] = {}

    def add(self, event) -> None:
        t, et = _stamp(event), event.event_type
        if et == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            self._at[event.event_id] = (t, "wft")
        elif et == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            a = event.workflow_task_started_event_attributes
            self._gap("wft_queue", a.scheduled_event_id, t)
            self._at[event.event_id] = (t, "wft")
        elif et == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            self._gap("wft_run", event.workflow_task_completed_event_attributes.started_event_id, t)
        elif et == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            self._at[event.event_id] = (t, name)
        elif et == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            a = event.activity_task_started_event_attributes
            self._gap("act_queue", a.scheduled_event_id, t)
            self._at[event.event_id] = (t, self._at.get(a.scheduled_event_id, (0, "?"))[1])
        elif et == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            started = event.activity_task_completed_event_attributes.started_event_id
            name = self._at.get(started, (0, "?"))[1]
            self._gap(f"act_run:{name}", started, t)

    def _gap(self, key: str, since_event: int, t: float) -> None:
        if since_event in self._at:
            self.totals[key] += t - self._at[since_event][0]


def _kind(event, types: dict[int, str]) -> str:
    """The event type, with the activity type for activity events (`types` maps scheduled
    event ids to activity types, filled as the history is read in order)."""
    name = EventType.Name(event.event_type).replace("EVENT_TYPE_", "")
    et = event.event_type
    if et == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        types[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        return f"{name}:{types[event.event_id]}"
    if et == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        sid = event.activity_task_started_event_attributes.scheduled_event_id
        return f"{name}:{types.get(sid)}"
    if et == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        sid = event.activity_task_completed_event_attributes.scheduled_event_id
        return f"{name}:{types.get(sid)}"
    return name


async def chain_stats(client: Client, workflow_id: str, run_id: str | None = None) -> dict:
    """Events, bytes and runs of a workflow's continue-as-new chain starting at `run_id`."""
    events = size = runs = 0
    by_kind: collections.Counter = collections.Counter()
    timeline = Timeline()
    while True:
        handle = client.get_workflow_handle(workflow_id, run_id=run_id)
        info = (await handle.describe()).raw_description.workflow_execution_info
        events += int(info.history_length)
        size += int(info.history_size_bytes)
        runs += 1
        last, types = None, {}
        async for event in handle.fetch_history_events():
            by_kind[_kind(event, types)] += event.ByteSize()
            timeline.add(event)
            last = event
        if last is None or last.event_type != CAN or run_id is None:
            # Without a first run id the handle already points at the latest run.
            break
        run_id = last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
    return {
        "events": events,
        "bytes": size,
        "runs": runs,
        "bytes_by_kind": dict(by_kind),
        "timeline_ms": dict(timeline.totals),
    }


async def tree_stats(client: Client, workflow_id: str, run_id: str | None, children: list[str]):
    """The parent's chain stats plus the children's summed (fan-out through child workflows)."""
    parent = await chain_stats(client, workflow_id, run_id)
    kids = [await chain_stats(client, c) for c in children]
    parent["children"] = {
        "n": len(kids),
        "events": sum(k["events"] for k in kids),
        "bytes": sum(k["bytes"] for k in kids),
    }
    return parent
