"""A demo that stops before its run does leaves nothing running behind it."""

from __future__ import annotations

import uuid

from temporalio.client import WorkflowExecutionStatus

from outlast.demo import end_demo, end_if_running
from tests.support import Queues, agent_input


async def test_a_demo_stopped_early_terminates_its_run(client, git_repo):
    """Ctrl-C or an error while the demo follows its run: the run stayed Running in the dev
    server's database, and the next worker there carried it on with its own model (a real
    one, with the user's key). A run that has ended is left as it is."""
    queues = Queues(task_queue=f"nobody-{uuid.uuid4().hex[:8]}", host_queue="nowhere")
    handle = await client.start_workflow(
        "AgentWorkflow",
        agent_input("demo task", git_repo, queues),
        id=f"outlast-demo-{uuid.uuid4().hex[:8]}",
        task_queue=queues.task_queue,
    )
    await end_if_running(handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.TERMINATED
    await end_if_running(handle)  # ended already: nothing to do, and no error
    assert (await handle.describe()).status == WorkflowExecutionStatus.TERMINATED


async def test_a_demo_s_end_terminates_what_runs_on_its_own_queue(client, git_repo):
    """Its sub-agents run on the demo's own queue, which no later worker serves: a stopped
    coordinator demo's workers ran on for good (a review, 2026-12-07). Others' runs stay."""
    queues = Queues(task_queue=f"outlast-demo-{uuid.uuid4().hex[:8]}", host_queue="nowhere")
    root, child, other = [
        await client.start_workflow(
            "AgentWorkflow",
            agent_input("demo task", git_repo, queues),
            id=f"{name}-{uuid.uuid4().hex[:8]}",
            task_queue=queue,
        )
        for name, queue in (
            ("outlast-demo", queues.task_queue),
            ("outlast-demo/worker", queues.task_queue),
            ("someone-else", f"nobody-{uuid.uuid4().hex[:8]}"),
        )
    ]
    try:
        await end_demo(client, root, queues.task_queue)
        for handle in (root, child):
            assert (await handle.describe()).status == WorkflowExecutionStatus.TERMINATED
        assert (await other.describe()).status == WorkflowExecutionStatus.RUNNING
    finally:
        await other.terminate(reason="test over")
