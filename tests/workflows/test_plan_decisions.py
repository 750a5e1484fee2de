"""A plan decided by two people at once: one decision is taken, the other is told so (the
`decide_plan` update). As signals after a query, both were told theirs was taken (a user
test, 2026-12-06)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio import workflow
from temporalio.client import WorkflowUpdateFailedError
from temporalio.worker import Worker

from outlast.api import Task, TaskEnded
from tests.support import agent_input, running_workers, scripted_model, start
from tests.workflows.test_plan_mode import APPROVED, REJECTED, cli, wait_for_pending
from workflows.contracts import PendingPlan, PlanDecision, PlanView


async def test_two_approvals_at_once_take_one_and_refuse_the_other(client, dev_server, git_repo):
    # The turn after the approval takes a while: the agent still runs when the second
    # decision comes (it had ended, under load, before the second CLI asked).
    script = {"agents": [{**APPROVED["agents"][0]}]}
    turns = list(script["agents"][0]["turns"])
    turns[4] = {**turns[4], "delay_ms": 8000}
    script["agents"][0]["turns"] = turns
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("add X", git_repo, queues), queues)
            await wait_for_pending(handle)
            both = await asyncio.gather(
                cli(dev_server.address, "approve", handle.id),
                cli(dev_server.address, "approve", handle.id),
            )
            result = await handle.result()
            with pytest.raises(TaskEnded) as ended:
                await Task(handle, "single").approve_plan()
    assert "is not running (completed); nothing was sent" in str(ended.value)
    assert sorted(code for code, _ in both) == [0, 2], both
    taken = next(out for code, out in both if code == 0)
    refused = next(out for code, out in both if code != 0)
    assert f"plan plan-1 of {handle.id} approved; it goes on in default mode" in taken, taken
    # Which of the two ways depends on whether the other's query came first.
    said = " ".join(refused.split())
    # Either way it says how plan-1 was decided (it said only "no plan is waiting").
    assert "decided already: it was approved" in said or "plan-1 was approved" in said, refused
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
    # Sent again as it is, it would be refused again (`temporal` printed "retryable: true").
    assert no_mode.value.cause.non_retryable and other.value.cause.non_retryable
    assert no_mode.value.cause.type == "ValueError"
    assert view.pending is not None and view.pending.request_id == "plan-1"
    # Whether the agent has taken up the rejection yet decides which.
    late_said = str(late.value.cause)
    assert "plan plan-1 is decided already" in late_said or "no plan is waiting" in late_said
    assert result.final_text == "I will revise the plan."


@workflow.defn(name="AgentWorkflow", sandboxed=False)
class EarlierPlanner:
    """An agent as a worker of an earlier release runs it: a plan waits, and the decision
    comes by the signals, as there is no `decide_plan` update."""

    def __init__(self) -> None:
        self.decided: dict | None = None

    @workflow.run
    async def run(self, _: dict) -> dict:
        await workflow.wait_condition(lambda: self.decided is not None)
        return self.decided or {}

    @workflow.query(name="plan")
    def plan(self) -> PlanView:
        pending = PendingPlan(request_id="plan-1", plan="# Plan", plan_file="/p.md")
        return PlanView(mode="plan", pending=None if self.decided else pending)

    @workflow.signal(name="approve_plan")
    def approve_plan(self, decision: dict) -> None:
        self.decided = {"signal": "approve_plan", **decision}

    @workflow.signal(name="reject_plan")
    def reject_plan(self, decision: dict) -> None:
        self.decided = {"signal": "reject_plan", **decision}


async def earlier_planner(client, queue: str):
    return await client.start_workflow(
        "AgentWorkflow", {}, id=f"{queue}-{uuid.uuid4().hex[:6]}", task_queue=queue
    )


async def test_a_worker_without_the_update_gets_the_signal_as_before(client, dev_server):
    queue = f"earlier-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[EarlierPlanner]):
        by_api = await earlier_planner(client, queue)
        assert await Task(by_api, "single").reject_plan("smaller steps") is True
        rejected = await by_api.result()
        by_cli = await earlier_planner(client, queue)
        code, out = await cli(dev_server.address, "approve", by_cli.id)
        approved = await by_cli.result()
    assert rejected["signal"] == "reject_plan" and rejected["feedback"] == "smaller steps"
    assert rejected["request_id"] == "plan-1", rejected
    assert code == 0 and f"plan plan-1 of {by_cli.id} approved" in out, out
    assert approved["signal"] == "approve_plan" and approved["request_id"] == "plan-1"


async def test_a_decision_that_does_not_say_which_way_is_refused(client, git_repo):
    """`{"aprove": false}` approved the plan (pydantic drops the unknown field, and
    `approve` defaulted to true); a misspelt `feedbak` was lost the same way."""
    with scripted_model(REJECTED):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("add X", git_repo, queues), queues)
            await wait_for_pending(handle)
            refusals = []
            for raw in ({"aprove": False}, {"approve": False, "feedbak": "more tests"}):
                with pytest.raises(WorkflowUpdateFailedError) as refused:
                    await handle.execute_update("decide_plan", raw, result_type=str)
                refusals.append(str(refused.value.cause))
                # One failure, said whole: pydantic's error came chained under it, as a
                # second one `temporal` printed "retryable: true" (a user test, 2026-12-06).
                assert refused.value.cause.cause is None, refused.value.cause.cause
                assert refused.value.cause.non_retryable
            view = await wait_for_pending(handle)
            await handle.execute_update(
                "decide_plan", {"approve": False, "feedback": "more tests"}, result_type=str
            )
            result = await handle.result()
    assert "invalid PlanDecisionInput: approve: Field required" in refusals[0], refusals
    assert "unknown field feedbak (did you mean feedback?" in refusals[1], refusals
    assert view.pending is not None  # neither decided it
    assert result.final_text == "I will revise the plan."
