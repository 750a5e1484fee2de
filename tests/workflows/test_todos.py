"""TodoWrite (T7): an agent's todo list is workflow state, shown while it works, replaced
wholesale by each call, and dropped when the agent ends."""

from __future__ import annotations

import asyncio

from agents.todos import TODO_WRITE_RESULT
from tests.support import (
    agent_input,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from tests.workflows.test_visibility import current_details
from workflows.contracts import AgentStatus


async def status_when(handle, holds, timeout: float = 30) -> AgentStatus:
    """The agent's `status` once `holds(status)` is true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        status = await handle.query("status", result_type=AgentStatus)
        if holds(status):
            return status
        assert asyncio.get_running_loop().time() < deadline, f"not reached: {status}"
        await asyncio.sleep(0.1)


FIRST = [
    {"content": "Read the config", "status": "completed", "activeForm": "Reading the config"},
    {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
    {"content": "Fix the bug", "status": "pending", "activeForm": "Fixing the bug"},
]
SECOND = [
    {**FIRST[0]},
    {**FIRST[1], "status": "completed"},
    {**FIRST[2], "status": "in_progress"},
]
TODOS = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {"text": "Planning.", "tool_use": {"name": "TodoWrite", "input": {"todos": FIRST}}},
                {
                    "text": "Updating.",
                    "tool_use": {
                        "name": "TodoWrite",
                        "input": {"todos": [{"content": "No active form", "status": "pending"}]},
                    },
                },
                {
                    "delay_ms": 4000,
                    "text": "Again.",
                    "tool_use": {"name": "TodoWrite", "input": {"todos": SECOND}},
                },
                {"delay_ms": 4000, "text": "Done: the bug is fixed."},
            ],
        }
    ]
}


async def test_the_todo_list_shows_while_the_agent_works_and_goes_at_its_end(client, git_repo):
    with scripted_model(TODOS, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("fix it", git_repo, queues), queues)

            def at_turn(n: int):
                return status_when(handle, lambda s: s.turn >= n and s.state == "calling_model")

            # Held in its third model call: the first list stands (the invalid call changed
            # nothing), rebuilt from history by a worker that caches no run.
            third = await at_turn(2)
            assert [t.model_dump(by_alias=True) for t in third.todos] == FIRST
            details = await current_details(client, handle.id)
            assert "**Todos** (1 of 3 done)" in details
            assert "- [x] Read the config" in details
            assert "- [ ] **Running the tests** (in progress)" in details
            assert "- [ ] Fix the bug" in details
            fourth = await at_turn(3)
            assert [t.model_dump(by_alias=True) for t in fourth.todos] == SECOND
            assert "**Fixing the bug** (in progress)" in await current_details(client, handle.id)
            result = await asyncio.wait_for(handle.result(), timeout=60)
            final = await handle.query("status", result_type=AgentStatus)
            final_details = await current_details(client, handle.id)
    assert result.status == "completed"
    assert final.todos == [] and "Todos" not in final_details
    first, invalid, second = tool_results(result)
    assert first.content == TODO_WRITE_RESULT and not first.is_error
    assert invalid.is_error and "activeForm" in invalid.content
    assert second.content == TODO_WRITE_RESULT and not second.is_error
    tools = {t["name"]: t for t in model.log[0]["body"]["tools"]}
    item = tools["TodoWrite"]["input_schema"]["$defs"]["TodoItem"]
    assert item["required"] == ["content", "status", "activeForm"]


async def test_a_finished_list_is_not_kept(client, git_repo):
    done = [{**item, "status": "completed"} for item in FIRST]
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "TodoWrite", "input": {"todos": FIRST}}},
                    {"tool_use": {"name": "TodoWrite", "input": {"todos": done}}},
                    {"delay_ms": 4000, "text": "All done."},
                ],
            }
        ]
    }
    with scripted_model(script) as _:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            # Held in its third call (the agent has not ended, which would empty it too).
            held = await status_when(handle, lambda s: s.turn >= 2 and s.state == "calling_model")
            assert held.todos == []
            result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed"
    assert [r.is_error for r in tool_results(result)] == [False, False]
