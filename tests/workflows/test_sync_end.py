"""A sync sub-agent's end reaches its parent once: through the child workflow's result, which
the parent waits on anyway. The signal it used to send as well cost the child a server round
trip and a workflow task before it could complete, and the parent an event and often a
workflow task."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle

from agents.config import AgentSettings
from tests.interceptors import Hold
from tests.support import (
    agent_input,
    fast_config,
    notifications,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from tests.workflows.test_agent_endings import helper_script, mail_while_finishing


async def event_types(handle: WorkflowHandle) -> list[int]:
    return [e.event_type async for e in handle.fetch_history_events()]


async def test_a_sync_sub_agent_reports_through_its_result_alone(client, git_repo):
    with scripted_model(helper_script([{"text": "the answer is 42"}], background=False)):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            result = await parent.result()
            child = client.get_workflow_handle(f"{parent.id}/helper")
            parent_events, child_events = await event_types(parent), await event_types(child)
    (delivered,) = tool_results(result)
    assert delivered.content.startswith("the answer is 42") and not delivered.is_error
    assert "agentId: " in delivered.content and notifications(result) == []
    assert EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED not in parent_events
    assert EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED not in child_events
    assert EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED in parent_events


async def test_a_background_sub_agent_still_signals_its_end(client, git_repo):
    helper = [{"text": "background answer"}]
    with scripted_model(helper_script(helper)):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            result = await parent.result()
            child_events = await event_types(client.get_workflow_handle(f"{parent.id}/helper"))
    (note,) = notifications(result)
    assert "background answer" in note
    assert EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED in child_events


async def test_mail_reaching_a_sync_sub_agent_as_it_finishes_is_answered(client, git_repo):
    kid, result, _ = await mail_while_finishing(client, git_repo, background=False)
    assert kid.final_text == "read your mail"
    (delivered,) = tool_results(result)
    assert delivered.content.startswith("read your mail")
    assert notifications(result) == []


LATE_BACKGROUNDING = Hold(10, signal="set_backgrounded")
"""A parent's `set_backgrounded` arrives 10 s late: the child completes meanwhile, so the signal
finds it closed."""


async def backgrounded_as_it_completes(client, git_repo, wf_id: str | None = None):
    """A sync child that completes just as its parent auto-backgrounds it: (the parent's
    handle, its result)."""
    config = fast_config(agents=AgentSettings(auto_background_ms=500))
    helper = [{"text": "the answer is 42", "delay_ms": 1000}]
    with scripted_model(helper_script(helper, background=False)):
        async with running_workers(client, interceptors=[LATE_BACKGROUNDING]) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            parent = await start(client, inp, queues, wf_id)
            return parent, await parent.result()


async def test_a_child_that_completes_as_it_is_backgrounded_still_answers_the_call(
    client, git_repo
):
    """A sync child completes just as the parent auto-backgrounds it. It did not signal its
    end, so that end must come back as the tool result rather than wait on the handle
    watcher, which a continue-as-new of the parent would drop."""
    parent, result = await backgrounded_as_it_completes(client, git_repo)
    parent_events = await event_types(parent)
    # The race happened: the parent's backgrounding reached a closed child.
    assert EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED in parent_events
    (delivered,) = tool_results(result)
    assert delivered.content.startswith("the answer is 42") and not delivered.is_error
    assert notifications(result) == []
