"""Cancelling a verified task stops its implementer, whichever await the cancel lands in."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
from temporalio import activity
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from agents.config import AgentSettings
from tests.support import fast_config, running_workers, scripted_model, wait_for
from tests.workflows.test_verified_task import SCRIPT, edit_app, task_repo
from workflows import search_attributes as sa
from workflows.contracts import Workspace
from workflows.pattern_contracts import VerifiedTaskInput, VerifiedTaskResult


class SlowDescribe(Interceptor):
    """Once armed, the implementer's liveness check (`agents.describe_agents`) takes 5 s: a
    cancel sent meanwhile reaches the task inside an activity."""

    def __init__(self) -> None:
        self.armed, self.held = threading.Event(), threading.Event()

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        hold = self

        class Inbound(ActivityInboundInterceptor):
            async def execute_activity(self, input: ExecuteActivityInput):
                if hold.armed.is_set() and activity.info().activity_type == (
                    "agents.describe_agents"
                ):
                    hold.held.set()
                    await asyncio.sleep(5)
                return await super().execute_activity(input)

        return Inbound(next)


def slow_second_round() -> dict:
    """SCRIPT, with the implementer's second run taking 30 s over its fix."""
    script = {"agents": [dict(a) for a in SCRIPT["agents"]]}
    implementer = script["agents"][-1]
    turns = list(implementer["turns"])
    turns[3] = {**edit_app("'hey'", "'hi'"), "delay_ms": 30_000}
    implementer["turns"] = turns
    return script


async def test_a_cancel_during_a_liveness_check_stops_the_resumed_implementer(client, tmp_path):
    """Round 2's implementer is a resumed run, not the task's child: parent-close does not
    reach it. A cancel that lands while the task checks that run's liveness (an activity)
    used to end the task and leave the implementer running (it came as an ActivityError,
    which the task's cancel path did not catch)."""
    repo = task_repo(tmp_path / "repo")
    slow = SlowDescribe()
    with scripted_model(slow_second_round()):
        async with running_workers(client, interceptors=[slow]) as queues:
            wf_id = f"verified-cancel-{uuid.uuid4().hex[:8]}"
            handle = await client.start_workflow(
                "VerifiedTaskWorkflow",
                VerifiedTaskInput(
                    task="Make greet() return 'hi' so that the test suite passes.",
                    workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
                    config=fast_config(agents=AgentSettings(liveness_check_s=1)),
                ),
                id=wf_id,
                task_queue=queues.task_queue,
                result_type=VerifiedTaskResult,
            )
            rounds: list = []

            async def poll_rounds() -> None:
                rounds[:] = await handle.query("rounds")

            for _ in range(300):
                await poll_rounds()
                if rounds:
                    break
                await asyncio.sleep(0.2)
            assert rounds, "round 1 never ended"
            slow.armed.set()
            await wait_for(slow.held.is_set, timeout=30)
            await handle.cancel()
            with pytest.raises(WorkflowFailureError) as ended:
                await handle.result()
            assert isinstance(ended.value.cause, CancelledError)
            task = (await handle.describe()).typed_search_attributes
            assert task.get(sa.AGENT_STATUS) == "killed"
            implementer = client.get_workflow_handle(f"{wf_id}/implementer")
            for _ in range(300):
                desc = await implementer.describe()
                if desc.status != WorkflowExecutionStatus.RUNNING:
                    break
                await asyncio.sleep(0.1)
            assert desc.status == WorkflowExecutionStatus.CANCELED
