"""`agents.resume_agent` against a real server: the message starts a new run once the run the
parent knows has closed, never lands in a run that is closing, and a retry's run counts as
started."""

from __future__ import annotations

import uuid

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities import resume
from activities.resume import AgentControl, ResumeRequest

MESSAGE = {"text": "go on", "sender": "parent"}


def request(wf_id: str, known: str | None) -> ResumeRequest:
    # No worker polls this queue: the runs stay as the test leaves them.
    return ResumeRequest(
        workflow_id=wf_id, task_queue="no-worker", input={}, message=MESSAGE, known_run_id=known
    )


async def first_run(client, wf_id: str) -> str:
    handle = await client.start_workflow("AgentWorkflow", {}, id=wf_id, task_queue="no-worker")
    return handle.first_execution_run_id or ""


async def test_a_resume_waits_for_the_ended_run_to_close_and_starts_the_next(
    client, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(resume, "CLOSING_WAIT_S", 0.5)
    control = AgentControl(client)
    wf_id = f"resume-{uuid.uuid4().hex[:8]}"
    known = await first_run(client, wf_id)
    # The run the parent has the end of is still open: the message is not signalled into it.
    with pytest.raises(ApplicationError, match="has ended but not closed yet"):
        await ActivityEnvironment().run(control.resume_agent, request(wf_id, known))
    await client.get_workflow_handle(wf_id, run_id=known).terminate("closed")
    started = await ActivityEnvironment().run(control.resume_agent, request(wf_id, known))
    assert started.started and started.run_id != known
    # A retry of that resume (its result lost): the run it started is running, and it is a
    # new run all the same; it said "not started" and the parent lost track of the agent.
    again = await ActivityEnvironment().run(control.resume_agent, request(wf_id, known))
    assert again.started and again.run_id == started.run_id
    await client.get_workflow_handle(wf_id).terminate("test over")
