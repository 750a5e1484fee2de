"""A plan decided by two people at once: one decision is taken, the other is told so (the
`decide_plan` update). As signals after a query, both were told theirs was taken (a user
test, 2026-12-06)."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import WorkflowUpdateFailedError

from outlast.api import Task
from tests.support import agent_input, running_workers, scripted_model, start
from tests.workflows.test_plan_mode import APPROVED, REJECTED, cli, wait_for_pending
from workflows.contracts import PlanDecision


async def test_two_approvals_at_once_take_one_and_refuse_the_other(client, dev_server, git_repo):
    with scripted_model(APPROVED):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("add X", git_repo, queues), queues)
            await wait_for_pending(handle)
            both = await asyncio.gather(
                cli(dev_server.address, "approve", handle.id),
                cli(dev_server.address, "approve", handle.id),
            )
            result = await handle.result()
    assert sorted(code for code, _ in both) == [0, 2], both
    taken = next(out for code, out in both if code == 0)
    refused = next(out for code, out in both if code != 0)
    assert f"plan plan-1 of {handle.id} approved" in taken, taken
    # Which of the two ways depends on whether the other's query came first.
    said = " ".join(refused.split())
    assert "plan plan-1 is decided already" in said or "no plan is waiting" in said, refused
    assert result.final_text == "implemented the plan"


async def test_a_decision_on_another_plan_is_refused_and_changes_nothing(client, git_repo):
    with scripted_model(REJECTED):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("add X", git_repo, queues), queues)
            await wait_for_pending(handle)
            with pytest.raises(WorkflowUpdateFailedError) as other:
                await handle.execute_update(
                    "decide_plan", PlanDecision(request_id="plan-9"), result_type=str
                )
            with pytest.raises(WorkflowUpdateFailedError) as no_mode:
                await handle.execute_update(
                    "decide_plan", PlanDecision(target_mode="yolo"), result_type=str
                )
            view = await wait_for_pending(handle)  # still waiting: nothing was decided
            task = Task(handle, "single")
            assert await task.reject_plan("more tests") is True
            with pytest.raises(WorkflowUpdateFailedError) as late:
                await handle.execute_update(
                    "decide_plan", PlanDecision(request_id="plan-1"), result_type=str
                )
            result = await handle.result()
    assert "the plan waiting is plan-1, not plan-9" in str(other.value.cause), other.value
    assert "target_mode yolo is no mode" in str(no_mode.value.cause), no_mode.value
    assert view.pending is not None and view.pending.request_id == "plan-1"
    # Whether the agent has taken up the rejection yet decides which.
    late_said = str(late.value.cause)
    assert "plan plan-1 is decided already" in late_said or "no plan is waiting" in late_said
    assert result.final_text == "I will revise the plan."
