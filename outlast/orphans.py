"""Sub-agents left running by a parent that closed without stopping them.

A sub-agent is a child workflow started with ParentClosePolicy.ABANDON, so that it outlives
its parent's continue-as-new (and a background one, the parent's turn); an agent that ends
in any way it runs code for stops its children itself (R26, R92). A terminated or timed-out
parent runs no code: its children would go on, calling the model and holding their worktrees,
with no one to hear of their end. The reaper finds them (a running AgentWorkflow whose parent
workflow id has no running run) and cancels them, as a kill of the parent would have: each
ends `killed` and cleans up its own worktree and children.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict
from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

log = logging.getLogger(__name__)

AGENT_PARENTS = frozenset({"AgentWorkflow", "CoordinatorWorkflow"})
"""The parents that start sub-agents with ABANDON. The patterns' members (a team's, a
fork-join's, a verified task's) are started with REQUEST_CANCEL: the server cancels those."""
QUERY = 'WorkflowType = "AgentWorkflow" AND ExecutionStatus = "Running"'


class Orphan(BaseModel):
    """A running sub-agent whose parent closed, and what the reaper did with it."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    parent_id: str
    parent_status: str
    """The parent's latest run's status name (TERMINATED, TIMED_OUT...), or NOT_FOUND."""
    cancelled: bool
    reason: str


async def find_orphans(client: Client) -> list[tuple[str, str, str, str]]:
    """(workflow id, run id, parent id, parent status) of every running sub-agent whose
    parent workflow id has no running run. A parent's id that runs again (continued as new,
    or started anew under the same id) keeps its children: no live agent is cancelled."""
    found = []
    parents: dict[str, tuple[str | None, str | None]] = {}
    async for wf in client.list_workflows(QUERY):
        if not wf.parent_id:
            continue
        if wf.parent_id not in parents:
            parents[wf.parent_id] = await _parent(client, wf.parent_id)
        status, parent_type = parents[wf.parent_id]
        if status is not None and (parent_type is None or parent_type in AGENT_PARENTS):
            found.append((wf.id, wf.run_id, wf.parent_id, status))
    return found


async def _parent(client: Client, parent_id: str) -> tuple[str | None, str | None]:
    """The status name of the parent's latest run (None while it runs; NOT_FOUND past the
    namespace's retention) and its workflow type (None if unknown)."""
    try:
        desc = await client.get_workflow_handle(parent_id).describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            return "NOT_FOUND", None
        raise
    if desc.status in (None, WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING):
        return None, desc.workflow_type
    return desc.status.name, desc.workflow_type


async def stop_orphans(client: Client, *, dry_run: bool = False) -> list[Orphan]:
    """Cancel every running sub-agent whose parent closed (see the module's docstring).

    Args:
        dry_run: Report what would be cancelled, change nothing.
    """
    done = []
    for workflow_id, run_id, parent_id, status in await find_orphans(client):
        why = f"its parent {parent_id} closed ({status.lower()}) without stopping it"
        if dry_run:
            done.append(Orphan(workflow_id=workflow_id, parent_id=parent_id,
                               parent_status=status, cancelled=False,
                               reason=f"would cancel (dry run): {why}"))  # fmt: skip
            continue
        try:
            await client.get_workflow_handle(workflow_id, run_id=run_id).cancel(reason=why)
        except RPCError as e:
            if e.status != RPCStatusCode.NOT_FOUND:
                raise
            continue  # it ended meanwhile
        log.warning("cancelled sub-agent %s: %s", workflow_id, why)
        done.append(Orphan(workflow_id=workflow_id, parent_id=parent_id, parent_status=status,
                           cancelled=True, reason=f"cancelled: {why}"))  # fmt: skip
    return done
