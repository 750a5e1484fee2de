"""What a person sees of a session in the Temporal UI, read through the same APIs the UI uses:
search attributes per agent (Pattern among them), static summary and details from the task,
live current details, and a readable summary on every activity."""

from __future__ import annotations

import asyncio
import re
import uuid

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from tests.support import Queues, agent_input, listed, running_workers, start
from tests.workflows.test_demo_patterns import demo_home, run  # noqa: F401 - fixture
from worker import host_id
from workflows import search_attributes as sa
from workflows.contracts import host_task_queue

SUMMARY = re.compile(r"^[\w-]+: turn \d+: (model \S+|(Read|Write|Edit|Glob|Grep|Bash)\b.*)$")


def demo_workflow_id(out: str) -> str:
    match = re.search(r"workflow (outlast-demo-\S+)", out)
    assert match, out
    return match.group(1)


async def current_details(client: Client, workflow_id: str) -> str:
    metadata = await client.get_workflow_handle(workflow_id).query("__temporal_workflow_metadata")
    return metadata.current_details


async def activity_summaries(client: Client, workflow_id: str) -> list[str]:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    converter = client.data_converter.payload_converter
    return [
        converter.from_payload(e.user_metadata.summary, str)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.user_metadata.HasField("summary")
    ]


def all_closed_as(status: str):
    """Whether every row has its agent's last status (set as it ends, listed after it)."""
    return lambda rows: (
        bool(rows) and all(w.typed_search_attributes.get(sa.AGENT_STATUS) == status for w in rows)
    )


def verdicts_in(rows: list) -> bool:
    return sum(bool(w.typed_search_attributes.get(sa.VERIFICATION_VERDICT)) for w in rows) >= 3


async def test_coordinator_session_in_the_ui(demo_home, client):  # noqa: F811
    ok, out, _, _ = await run("coordinator", demo_home)
    assert ok, out
    wid = demo_workflow_id(out)

    rows = await listed(
        client, f'Pattern = "coordinator" AND SessionId = "{wid}"', until=all_closed_as("completed")
    )
    by_type = {}
    for w in rows:
        by_type.setdefault(w.typed_search_attributes.get(sa.AGENT_TYPE), []).append(w)
    assert set(by_type) >= {"coordinator", "worker"}, by_type
    for w in rows:
        attrs = w.typed_search_attributes
        assert attrs.get(sa.AGENT_STATUS) == "completed"
        assert attrs.get(sa.PATTERN) == "coordinator"
        assert attrs.get(sa.AGENT_ID)
    worker = by_type["worker"][0]
    assert worker.typed_search_attributes.get(sa.AGENT_DEPTH) == 1
    assert worker.typed_search_attributes.get(sa.PARENT_AGENT_ID)
    # The coordinator started each worker with them: the worker upserts only its end.
    events = (await client.get_workflow_handle(worker.id).fetch_history()).events
    started = events[0].workflow_execution_started_event_attributes.search_attributes
    assert {"AgentType", "AgentId", "SessionId", "Pattern"} <= set(started.indexed_fields)
    upserts = [
        e.upsert_workflow_search_attributes_event_attributes.search_attributes
        for e in events
        if e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
    ]
    upserted = [key for attrs in upserts for key in attrs.indexed_fields]
    assert "AgentType" not in upserted and "AgentStatus" in upserted, upserted

    desc = await client.get_workflow_handle(wid).describe()
    assert (await desc.static_summary()).startswith("coordinator: ")
    assert "Outlast coordinator" in await desc.static_details()
    # The task's text is in the summary and details only: not in the memo.
    assert set(await desc.memo()) == {"pattern", "workspace"}

    # The UI reads current details with a query: a worker answers it, also after the end,
    # on the run's queue (a demo's is its own).
    queues = Queues(desc.task_queue, host_task_queue(host_id()))
    async with running_workers(client, queues=queues):
        details = await current_details(client, wid)
    assert "**coordinator**" in details and "tokens" in details and "cache read" in details
    assert "**Sub-agents**" in details and "| completed |" in details

    summaries = await activity_summaries(client, wid)
    assert any(s.startswith("coordinator: turn 1: model ") for s in summaries), summaries
    worker_summaries = await activity_summaries(client, worker.id)
    assert any(
        re.match(r"^[\w-]+: turn \d+: (Read|Edit|Bash|Grep|Glob) \S", s) for s in worker_summaries
    ), worker_summaries
    assert all(SUMMARY.match(s) for s in summaries + worker_summaries), summaries + worker_summaries


async def test_verified_task_attributes_carry_pattern_and_verdicts(demo_home, client):  # noqa: F811
    ok, out, _, _ = await run("verified", demo_home)
    assert ok, out
    wid = demo_workflow_id(out)
    rows = await listed(client, f'Pattern = "verified" AND SessionId = "{wid}"', until=verdicts_in)
    top = next(w for w in rows if w.id == wid)
    assert top.typed_search_attributes.get(sa.AGENT_STATUS) == "passed"
    assert top.typed_search_attributes.get(sa.VERIFICATION_VERDICT) == "PASS"
    verdicts = sorted(
        w.typed_search_attributes.get(sa.VERIFICATION_VERDICT)
        for w in rows
        if w.typed_search_attributes.get(sa.AGENT_TYPE) == "verification"
    )
    # The scenario's first verifier finds the bug still there, the second passes the fix.
    assert verdicts == ["FAIL", "PASS"], verdicts
    implementers = [w for w in rows if w.id == f"{wid}/implementer"]
    assert implementers and all(
        w.typed_search_attributes.get(sa.PATTERN) == "verified" for w in implementers
    )


async def test_an_agent_whose_host_no_worker_serves_says_where_it_starts(client, git_repo):
    """It sat in `starting` with empty details for as long as nobody served its host's queue
    (a user test, 2026-12-07)."""
    async with running_workers(client) as queues:
        nowhere = Queues(
            task_queue=queues.task_queue, host_queue=f"outlast-host-{uuid.uuid4().hex}"
        )
        handle = await start(client, agent_input("Look.", git_repo, nowhere), nowhere)
        details = ""
        for _ in range(100):
            details = await current_details(client, handle.id)
            if details:
                break
            await asyncio.sleep(0.1)
        await handle.terminate("test")
    assert "starting: its first steps run on task queue " in details, details
    assert f"`{nowhere.host_queue}`, which only the worker on its checkout's host" in details
