"""Sub-agents as child workflows: sync and async, notifications, validation (R16-R20, R35)."""

from __future__ import annotations

import re

from temporalio.api.enums.v1 import EventType

from agents.messages import TextBlock, ToolResultBlock
from tests.support import agent_input, conversation, running_workers, scripted_model, spawn, start
from workflows.contracts import AgentResult


def child(name: str, answer: str) -> dict:
    return {
        "name": name,
        "match": {"agent_name": name},
        "turns": [
            {"text": "checking", "tool_use": {"name": "Glob", "input": {"pattern": "**/*.py"}}},
            {"text": answer},
        ],
    }


FAN = {
    "agents": [
        child("c1", "answer one"),
        child("c2", "answer two"),
        child("c3", "answer three"),
        child("s1", "sync answer"),
        {
            "name": "parent",
            "after_last": "repeat_last",
            "turns": [
                {
                    "text": "Spawning.",
                    "tool_use": [
                        spawn("c1", "do one", True),
                        spawn("c2", "do two", True),
                        spawn("c3", "do three", True),
                        spawn("s1", "do sync", False),
                    ],
                },
                {"text": "Waiting for the background agents."},
            ],
        },
    ]
}


async def child_ids(handle) -> list[str]:
    ids = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            ids.append(event.start_child_workflow_execution_initiated_event_attributes.workflow_id)
    return ids


async def test_three_async_and_one_sync_child(client, git_repo):
    with scripted_model(FAN):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("fan out", git_repo, queues), queues)
            result = await handle.result()
            ids = await child_ids(handle)
            results = {
                i.rsplit("/", 1)[1]: await client.get_workflow_handle(
                    i, result_type=AgentResult
                ).result()
                for i in ids
            }
    assert result.status == "completed"
    assert sorted(i.rsplit("/", 1)[1] for i in ids) == ["c1", "c2", "c3", "s1"]
    assert all(i.startswith(f"{handle.id}/") for i in ids)
    messages = conversation(result)
    texts = [
        b.text for m in messages if m.role == "user" for b in m.content if isinstance(b, TextBlock)
    ]
    notes = [t for t in texts if t.startswith("<task-notification>")]
    assert len(notes) == 3
    for name, answer in (("c1", "answer one"), ("c2", "answer two"), ("c3", "answer three")):
        child_result = results[name]
        mine = [n for n in notes if f"<task-id>{child_result.agent_id}</task-id>" in n]
        assert len(mine) == 1, (name, notes)
        note = mine[0]
        assert "<status>completed</status>" in note
        assert f'<summary>Agent "task {name}" completed</summary>' in note
        assert f"<result>{answer}</result>" in note
        u = child_result.usage
        assert (
            f"<usage><total_tokens>{u.total_tokens}</total_tokens><tool_uses>1</tool_uses>"
            f"<duration_ms>{u.duration_ms}</duration_ms></usage>"
        ) in note
    sync_results = [
        b.content
        for m in messages
        for b in m.content
        if isinstance(b, ToolResultBlock) and "sync answer" in b.content
    ]
    assert len(sync_results) == 1
    assert f"agentId: {results['s1'].agent_id}" in sync_results[0]
    assert re.search(
        r"<usage>total_tokens: \d+\ntool_uses: 1\nduration_ms: \d+</usage>", sync_results[0]
    )
    assert not any(f"<task-id>{results['s1'].agent_id}</task-id>" in n for n in notes)
    launched = [
        b.content
        for m in messages
        for b in m.content
        if isinstance(b, ToolResultBlock) and "Async agent launched" in b.content
    ]
    assert len(launched) == 3 and all("notified automatically" in t for t in launched)
