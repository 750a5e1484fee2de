"""Long agents continue as new at turn boundaries; nothing is lost (R92, R93).

A dev server with small history limits: without continue-as-new a 1,000-turn agent would be
terminated (limit.historyCount.error / limit.historySize.error); with it the run chain goes on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.converter import decode_typed_search_attributes

from activities import transcripts
from activities.store import default_store
from agents.config import AgentSettings
from agents.messages import ToolResultBlock, ToolUseBlock
from outlast.client import connect
from outlast.inspect import agent_tree
from outlast.listing import _list
from tests.support import (
    agent_input,
    fast_config,
    listed,
    local_dev_server,
    running_workers,
    scripted_model,
    start,
)
from tests.workflows.test_visibility import current_details
from workflows import search_attributes as sa

SMALL_LIMITS = {
    "limit.historyCount.suggestContinueAsNew": "600",
    "limit.historySize.suggestContinueAsNew": "300000",
    "limit.historyCount.warn": "1500",
    "limit.historyCount.error": "2500",
    "limit.historySize.warn": "1000000",
    "limit.historySize.error": "2000000",
}


@pytest.fixture(scope="module")
def small_server(state_root: Path):
    with local_dev_server(state_root / "small-limits", extra_dynamic_config=SMALL_LIMITS) as server:
        yield server


LOOP = {
    "agents": [
        {
            "name": "main",
            "after_last": "repeat_last",
            "turns": [
                {
                    "text": "again",
                    "tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}},
                },
            ],
        }
    ]
}


@pytest.mark.slow  # about 3 minutes of CI; CI still runs it
# 140-290 s as measured on this 2-core VM (it varies that much), against the suite's 300 s
# per test: it went over once. Its own limits give it room; a hang still fails.
@pytest.mark.timeout(900)
async def test_a_thousand_turns_span_several_runs(small_server, git_repo):
    client = await connect(small_server.address)
    config = fast_config(agents=AgentSettings(hard_max_turns=1000))
    with scripted_model(LOOP) as model:
        async with running_workers(client, cached=100) as queues:
            inp = agent_input(
                "loop for a long time", git_repo, queues, config=config, max_turns=1000
            )
            handle = await start(client, inp, queues)
            result = await asyncio.wait_for(handle.result(), timeout=800)
    assert result.status == "completed" and result.max_turns_reached and result.turns == 1000
    assert len(model.log) == 1000
    runs = await listed(
        client,
        f'WorkflowId = "{handle.id}"',
        until=lambda rows: WorkflowExecutionStatus.RUNNING not in {r.status for r in rows},
    )
    statuses = [r.status for r in runs]
    assert len(runs) > 1
    assert statuses.count(WorkflowExecutionStatus.CONTINUED_AS_NEW) == len(runs) - 1
    assert WorkflowExecutionStatus.TERMINATED not in statuses
    assert statuses.count(WorkflowExecutionStatus.COMPLETED) == 1
    messages = transcripts.load(default_store(), result.transcript)
    # The prompt, 1000 answers, and the tool results of each, the last turn's too (kept at
    # the end: the turn limit comes before a model call would record them).
    assert len(messages) == 2001 and result.transcript.length == 2001
    assert [m.role for m in messages] == ["user", "assistant"] * 1000 + ["user"]
    for ask, answer in zip(messages[1::2], messages[2::2], strict=False):
        (use,) = [b for b in ask.content if isinstance(b, ToolUseBlock)]
        (got,) = [b for b in answer.content if isinstance(b, ToolResultBlock)]
        assert got.tool_use_id == use.id
    assert result.usage.tool_uses == 1000
    for run in runs:
        assert run.history_length < 2500
        # Reliability row 10: however long the conversation, no event carries a payload near
        # the server's limits (the transcript travels by reference).
        run_handle = client.get_workflow_handle(handle.id, run_id=run.run_id)
        biggest = max([e.ByteSize() async for e in run_handle.fetch_history_events()])
        assert biggest < 512 * 1024, biggest


async def test_children_survive_the_parents_continue_as_new(client, git_repo):
    """Background children started in run 1 report to the run that is current when they end,
    exactly once each; the carried registry keeps the notified set."""
    config = fast_config(agents=AgentSettings(turns_per_run=2))
    spawn = [
        {
            "name": "Agent",
            "input": {
                "description": f"slow {n}",
                "prompt": "take a while",
                "name": n,
                "run_in_background": True,
            },
        }
        for n in ("k1", "k2")
    ]
    script = {
        "agents": [
            {
                "name": "k1",
                "match": {"agent_name": "k1"},
                "turns": [{"delay_ms": 2500, "text": "k1 done"}],
            },
            {
                "name": "k2",
                "match": {"agent_name": "k2"},
                "turns": [{"delay_ms": 3000, "text": "k2 done"}],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn},
                    *(
                        {
                            "delay_ms": 300,
                            "tool_use": {
                                "name": "Read",
                                "input": {"file_path": "{{cwd}}/README.md"},
                            },
                        }
                        for _ in range(6)
                    ),
                    {"text": "waiting for the kids"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            result = await asyncio.wait_for(handle.result(), timeout=120)
            runs = [w async for w in client.list_workflows(f'WorkflowId = "{handle.id}"')]
            # The last run's page in the UI (no static summary: continue_as_new takes none)
            # says where the task is.
            details = await current_details(client, handle.id)
            # `ls` and `show` give the agent's start: its first run's (they gave the latest's).
            # Its row only (the server is shared), once visibility has its end.
            query = f'WorkflowId = "{handle.id}" AND ExecutionStatus = "Completed"'
            listed = []
            for _ in range(100):
                listed = await _list(client, query, include_children=False, limit=5)
                if listed:
                    break
                await asyncio.sleep(0.1)
            tree = await agent_tree(client, handle.id)
    assert len(runs) >= 3
    first_run = min(runs, key=lambda r: r.start_time)
    assert [r.started for r in listed] == [first_run.start_time], listed
    assert tree.row.started == first_run.start_time
    first = first_run.run_id
    chain = f"run {len(runs)} of this workflow id (continued as new): the task's summary"
    assert chain in details and f"its first run, `{first}`" in details, details
    messages = transcripts.load(default_store(), result.transcript)
    notes = [
        b.text
        for m in messages
        if m.role == "user"
        for b in m.content
        if getattr(b, "text", "").startswith("<task-notification>")
    ]
    assert len(notes) == 2
    assert sum("k1 done" in n for n in notes) == 1 and sum("k2 done" in n for n in notes) == 1
    first_run = min(runs, key=lambda r: r.start_time)
    assert first_run.status == WorkflowExecutionStatus.CONTINUED_AS_NEW
    # A run that handed the agent on said `running` for good: `AgentStatus="running"`
    # listed every one (a user test, 2026-12-07).
    assert await chain_statuses(client, handle.id, len(runs)) == [
        *["continued"] * (len(runs) - 1),
        "completed",
    ]


async def chain_statuses(client, workflow_id: str, runs: int) -> list[str]:
    """Each run's `AgentStatus`, oldest first, once visibility has every run's last; and
    each continued run must have started `running` (the status it was handed on with; it
    was `continued`, the closing run's own, until its first task: a review, 2026-12-07)."""
    statuses: list[str] = []
    listed = []
    for _ in range(100):
        listed = [w async for w in client.list_workflows(f'WorkflowId = "{workflow_id}"')]
        listed.sort(key=lambda w: w.start_time)
        statuses = [w.typed_search_attributes.get(sa.AGENT_STATUS) for w in listed]
        if len(listed) == runs and "running" not in statuses:
            break
        await asyncio.sleep(0.1)
    for run in listed[1:]:
        handle = client.get_workflow_handle(workflow_id, run_id=run.run_id)
        async for event in handle.fetch_history_events():
            given = event.workflow_execution_started_event_attributes.search_attributes
            started = decode_typed_search_attributes(given).get(sa.AGENT_STATUS)
            assert started == "running", (run.run_id, started)
            break
    return statuses


async def test_a_continued_run_starts_with_the_mode_its_chain_is_in(client, git_repo):
    """Approved out of plan mode into acceptEdits, then continued: the new run's first
    upsert said `plan`, its start's, until it marked a change; a resume of a run killed
    before then read that attribute and went back to plan mode (a review, 2026-12-07)."""
    from temporalio.api.enums.v1 import EventType

    from tests.workflows.test_plan_mode import PLANS_FIRST, wait_for_pending

    config = fast_config(agents=AgentSettings(turns_per_run=2))
    with scripted_model(PLANS_FIRST):
        async with running_workers(client) as queues:
            inp = agent_input("add X", git_repo, queues, permission_mode="plan", config=config)
            handle = await start(client, inp, queues)
            view = await wait_for_pending(handle)
            await handle.signal(
                "approve_plan",
                {"request_id": view.pending.request_id, "target_mode": "acceptEdits"},
            )
            result = await asyncio.wait_for(handle.result(), 60)
    assert result.final_text == "done"
    latest = client.get_workflow_handle(handle.id)
    started = (await latest.fetch_history()).events[0].workflow_execution_started_event_attributes
    assert started.continued_execution_run_id, "the run did not continue as new"
    first_upsert = None
    async for e in latest.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            fields = e.upsert_workflow_search_attributes_event_attributes.search_attributes
            if "PermissionMode" in fields.indexed_fields:
                first_upsert = fields.indexed_fields["PermissionMode"].data
                break
    assert first_upsert == b'"acceptEdits"', first_upsert
