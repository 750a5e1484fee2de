"""Read, Glob and Grep as local activities (issue 9): on the workspace's host they run inside
the workflow task; a workflow task on another host's worker hands them to the host queue."""

from __future__ import annotations

import asyncio
import uuid

from temporalio.api.enums.v1 import EventType
from temporalio.worker import Worker

from agents.config import ToolSettings
from tests.support import (
    activity_attempts,
    agent_input,
    fast_config,
    local_activity,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from worker import HOST_ACTIVITIES
from workflows.contracts import Workspace

SCRIPT = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "tool_use": [
                        {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}},
                        {"name": "Glob", "input": {"pattern": "**/*.py"}},
                        {"name": "Grep", "input": {"pattern": "def ", "output_mode": "count"}},
                    ]
                },
                {"text": "done"},
            ],
        }
    ]
}
LOCAL = fast_config(tools=ToolSettings(local_tools=True))


async def tool_queues(handle) -> list[str]:
    """The task queue of every regular tool activity, in order."""
    queues = []
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = e.activity_task_scheduled_event_attributes
            if attrs.activity_type.name.startswith("tool."):
                queues.append(attrs.task_queue.name)
    return queues


async def locals_of(handle) -> list[str]:
    return [local[0] async for e in handle.fetch_history_events() if (local := local_activity(e))]


async def test_on_the_host_they_run_inside_the_workflow_task(client, git_repo):
    with scripted_model(SCRIPT):
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("look", git_repo, queues, config=LOCAL)
            handle = await start(client, inp, queues)
            result = await handle.result()
    read, glob, grep = tool_results(result)
    assert "# sample" in read.content and ".py" in glob.content and not grep.is_error
    assert sorted(await locals_of(handle)) == ["tool.glob", "tool.grep", "tool.read"]
    assert await tool_queues(handle) == []  # no regular tool activity at all


async def test_elsewhere_they_go_to_the_host_queue(client, git_repo):
    """The workspace is on another host: that host serves only its tool queue, and the
    workflow's worker (a different host) answers its local activities with "not here"."""
    other_host = f"host-{uuid.uuid4().hex[:8]}"
    with scripted_model(SCRIPT):
        async with running_workers(client, cached=1000) as queues:
            async with Worker(client, task_queue=other_host, activities=HOST_ACTIVITIES):
                inp = agent_input("look", git_repo, queues, config=LOCAL)
                inp = inp.model_copy(
                    update={"workspace": Workspace(root=str(git_repo), host_queue=other_host)}
                )
                handle = await start(client, inp, queues)
                result = await asyncio.wait_for(handle.result(), timeout=60)
    read, glob, grep = tool_results(result)
    assert "# sample" in read.content and ".py" in glob.content and not grep.is_error
    # Each was tried here first (and declined), then run on the workspace's host.
    assert sorted(await locals_of(handle)) == ["tool.glob", "tool.grep", "tool.read"]
    assert await tool_queues(handle) == [other_host] * 3
    assert [n for n, _ in await activity_attempts(handle) if n.startswith("tool.")].count(
        "tool.read"
    ) == 2
