"""An update of a name the workflow has no handler for is refused with the name meant."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import WithStartWorkflowOperation, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy

from tests.support import agent_input, running_workers, scripted_model

SLOW = {"agents": [{"name": "main", "turns": [{"delay_ms": 20000, "text": "done"}]}]}


async def test_a_misspelt_update_in_the_first_task_is_refused_with_the_name_meant(client, git_repo):
    """Sent with the start (update-with-start), it was looked up before the run began, and
    read "Update handler for 'decide_plann' expected but not found ... retryable: true" (a
    review, 2026-12-07)."""
    wf_id = f"upd-{uuid.uuid4().hex[:8]}"
    with scripted_model(SLOW):
        async with running_workers(client) as queues:
            start = WithStartWorkflowOperation(
                "AgentWorkflow",
                agent_input("go", git_repo, queues),
                id=wf_id,
                task_queue=queues.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            )
            try:
                with pytest.raises(WorkflowUpdateFailedError) as refused:
                    await asyncio.wait_for(
                        client.execute_update_with_start_workflow(
                            "decide_plann", {"approve": True}, start_workflow_operation=start
                        ),
                        30,
                    )
            finally:
                await client.get_workflow_handle(wf_id).terminate(reason="test over")
    cause = refused.value.cause
    assert cause.message.startswith(
        "update `decide_plann` refused: AgentWorkflow has no update of that name (did you mean "
        "decide_plan?); its updates: "
    ), cause.message
    assert cause.non_retryable
