"""A demo that stops before its run does leaves nothing running behind it."""

from __future__ import annotations

import uuid

from temporalio.client import WorkflowExecutionStatus

from outlast.demo import end_if_running
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
