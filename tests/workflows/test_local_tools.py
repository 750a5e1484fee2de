"""Read, Glob and Grep, and an agent's start and end steps, as local activities (issue 9): on
the workspace's host they run inside the workflow task; a workflow task on another host's
worker hands them to the host queue."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.worker import Worker

from activities.handoff import classify_handoff
from agents.config import ToolSettings
from agents.handoff import HANDOFF_UNAVAILABLE
from tests.support import (
    activity_attempts,
    agent_input,
    fast_config,
    local_activity,
    running_workers,
    scripted_model,
    spawn,
    start,
    tool_results,
)
from worker import HOST_ACTIVITIES
from workflows.contracts import AgentResult, Workspace

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
    return [q for name, q in await regular_of(handle) if name.startswith("tool.")]


async def locals_of(handle) -> list[str]:
    return [local[0] async for e in handle.fetch_history_events() if (local := local_activity(e))]


async def tools_of(handle) -> list[str]:
    return [name for name in await locals_of(handle) if name.startswith("tool.")]


async def steps_of(handle) -> list[str]:
    return sorted(name for name in await locals_of(handle) if not name.startswith("tool."))


async def on_other_host(client, git_repo, queues, prompt: str) -> tuple:
    """Start an agent whose workspace is on another host, which serves only its tool queue;
    its handle and result."""
    other_host = f"host-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=other_host, activities=HOST_ACTIVITIES):
        inp = agent_input(prompt, git_repo, queues, config=LOCAL)
        inp = inp.model_copy(
            update={"workspace": Workspace(root=str(git_repo), host_queue=other_host)}
        )
        handle = await start(client, inp, queues)
        result = await asyncio.wait_for(handle.result(), timeout=60)
    return other_host, handle, result


async def regular_of(handle) -> list[tuple[str, str]]:
    """(activity type, task queue) of every regular activity, in order."""
    return [
        (a.activity_type.name, a.task_queue.name)
        async for e in handle.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and (a := e.activity_task_scheduled_event_attributes)
    ]


async def test_on_the_host_they_run_inside_the_workflow_task(client, git_repo):
    with scripted_model(SCRIPT):
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("look", git_repo, queues, config=LOCAL)
            handle = await start(client, inp, queues)
            result = await handle.result()
    read, glob, grep = tool_results(result)
    assert "# sample" in read.content and ".py" in glob.content and not grep.is_error
    assert sorted(await tools_of(handle)) == ["tool.glob", "tool.grep", "tool.read"]
    assert await tool_queues(handle) == []  # no regular tool activity at all


async def test_elsewhere_they_go_to_the_host_queue(client, git_repo):
    """The workspace is on another host: that host serves only its tool queue, and the
    workflow's worker (a different host) answers its local activities with "not here"."""
    with scripted_model(SCRIPT):
        async with running_workers(client, cached=1000) as queues:
            other_host, handle, result = await on_other_host(client, git_repo, queues, "look")
    read, glob, grep = tool_results(result)
    assert "# sample" in read.content and ".py" in glob.content and not grep.is_error
    # Each was tried here first (and declined), then run on the workspace's host.
    assert sorted(await tools_of(handle)) == ["tool.glob", "tool.grep", "tool.read"]
    assert await tool_queues(handle) == [other_host] * 3
    assert [n for n, _ in await activity_attempts(handle) if n.startswith("tool.")].count(
        "tool.read"
    ) == 2


HELPER = {
    "agents": [
        {"name": "helper", "match": {"agent_name": "helper"}, "turns": [{"text": "all fine"}]},
        {
            "name": "main",
            "turns": [{"tool_use": spawn("helper", "check it", False)}, {"text": "done"}],
        },
    ]
}
STEPS = ["classifier.classify_handoff", "prompt.render_context", "transcript.export"]


async def test_a_sub_agents_start_and_end_steps_run_inside_the_workflow_task(client, git_repo):
    with scripted_model(HELPER):
        async with running_workers(client, cached=1000) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=LOCAL), queues)
            result = await handle.result()
            child = client.get_workflow_handle(f"{handle.id}/helper", result_type=AgentResult)
            kid = await child.result()
    assert result.final_text == "done" and kid.final_text == "all fine"
    assert kid.output_file and "all fine" in open(kid.output_file).read()
    assert await steps_of(child) == STEPS
    assert [name for name, _ in await regular_of(child)] == ["llm.call_model"]


async def test_elsewhere_the_steps_go_to_the_host_queue(client, git_repo):
    with scripted_model(HELPER):
        async with running_workers(client, cached=1000) as queues:
            other_host, handle, result = await on_other_host(client, git_repo, queues, "go")
            child = client.get_workflow_handle(f"{handle.id}/helper", result_type=AgentResult)
            kid = await child.result()
    assert result.final_text == "done" and kid.output_file
    # Each was tried here first (and declined), then run on the workspace's host.
    assert await steps_of(child) == STEPS
    ran = [(n, q) for n, q in await regular_of(child) if n != "llm.call_model"]
    assert sorted(ran) == [(name, other_host) for name in STEPS]


async def test_a_step_the_host_does_not_serve_is_declined_not_retried(client, git_repo):
    """A worker whose host queue serves another function under a step's name (here: none)
    still registers the local step, which declines: the SDK would otherwise fail the
    workflow task that schedules it on every attempt."""
    without_classifier = [a for a in HOST_ACTIVITIES if a is not classify_handoff]
    with scripted_model(HELPER):
        async with running_workers(client, cached=1000, host_activities=without_classifier) as q:
            handle = await start(client, agent_input("go", git_repo, q, config=LOCAL), q)
            result = await asyncio.wait_for(handle.result(), timeout=60)
    (note,) = tool_results(result)
    assert note.content.startswith(HANDOFF_UNAVAILABLE) and "all fine" in note.content


async def test_a_patterns_agent_types_are_looked_up_inside_the_workflow_task(client, git_repo):
    """A pipeline asks which agent types there are at its start: a host step, so on the host
    a local activity, with no regular one."""
    from agents.pipeline import PipelineStage
    from tests.workflows.test_pipeline import pipeline_input, start_pipeline

    stages = [PipelineStage(name="look", agent_type="Explroe", instructions="Look.")]
    with scripted_model(SCRIPT) as model:
        async with running_workers(client, cached=1000) as queues:
            inp = pipeline_input(git_repo, queues, stages=stages, config=LOCAL)
            handle = await start_pipeline(client, queues, inp)
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(handle.result(), 30)
    assert failed.value.cause.message.startswith(
        "PipelineWorkflow refused: agent type 'Explroe' (stage look; did you mean 'Explore'?) "
        "not found. "
        "Available agents: general-purpose, "
    ), failed.value.cause.message
    assert await locals_of(handle) == ["agents.definition_names"]
    assert await regular_of(handle) == [] and not model.log
