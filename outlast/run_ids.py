"""What `outlast run --id` may name: a new workflow, not a child's id nor a closed run's."""

from __future__ import annotations

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode


def id_problem(workflow_id: str) -> str | None:
    """Why `--id` cannot name a new workflow, or None."""
    if not workflow_id.strip():
        return "--id is empty: give an id, or leave --id out for a generated one."
    if "/" in workflow_id:
        return (
            f"--id {workflow_id}: `/` joins a workflow's id to its children's "
            "(`<id>/<name>`); choose an id without it."
        )
    return None


async def closed_run(client: Client, workflow_id: str) -> str | None:
    """How the latest run of `workflow_id` ended, if there is one that has: a new run under
    its id would start silently beside it, and `outlast show` would show only the new one."""
    try:
        desc = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    if desc.status is None or desc.status == WorkflowExecutionStatus.RUNNING:
        return None  # running: the start says so (WorkflowAlreadyStartedError)
    return desc.status.name.lower().replace("_", " ")
