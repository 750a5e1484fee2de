"""Sub-agents left running by a parent that closed without stopping them.

A sub-agent is a child workflow started with ParentClosePolicy.ABANDON, so that it outlives
its parent's continue-as-new (and a background one, the parent's turn); an agent that ends
in any way it runs code for stops its children itself (R26, R92). A terminated or timed-out
parent runs no code: its children would go on, calling the model and holding their worktrees,
with no one to hear of their end. A resumed run (SendMessage to an agent that had ended, a
verified task's implementer from round 2) is no child of anyone's in Temporal's terms: its
start names its parent in the memo (`activities.resume`). The reaper finds them (a running
AgentWorkflow whose parent's workflow id has no running run) and cancels them, as a kill of
the parent would have: each ends `killed` and cleans up its own worktree and children.

Every worker's reaper scans the namespace; two that cancel the same orphan do no harm (a
second cancel changes nothing).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

AGENT_PARENTS = frozenset({"AgentWorkflow", "CoordinatorWorkflow", "TeamWorkflow"})
"""The parents that start sub-agents with ABANDON: a team since it continues as new
(`workflows.team_carry`; a team started before that uses REQUEST_CANCEL, and a second cancel
of its members changes nothing). The other patterns' members (a fork-join's, a verified
task's first implementer and its verifiers) are started with REQUEST_CANCEL: the server
cancels those. A parent named in a resumed run's memo counts whatever its type."""
QUERY = 'WorkflowType = "AgentWorkflow" AND ExecutionStatus = "Running"'
COMPLETED_GRACE = timedelta(seconds=60)
"""How long after its parent completed a sub-agent is left to close on its own. A team that
continued as new completes once every member's last report is in, a moment before each
member's run has closed (its transcript export, its own end); one found then was cancelled,
ending `killed` with its work done. A parent terminated or timed out gets no grace: nothing
of it will stop its children."""
MEMO_PARENT = "parent_workflow_id"
"""The memo key a resumed run's start names its parent by (`activities.resume`)."""


class Orphan(BaseModel):
    """A running sub-agent whose parent closed, and what the reaper did with it."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["sub-agent"] = "sub-agent"
    """Tells these apart from the worktrees in `outlast reap --json`."""
    workflow_id: str
    run_id: str
    parent_id: str
    parent_status: str
    """The parent's latest run's status name (TERMINATED, TIMED_OUT...), or NOT_FOUND."""
    cancelled: bool = False
    reason: str = ""


async def find_orphans(client: Client) -> list[Orphan]:
    """Every running sub-agent whose parent's workflow id has no running run. A parent's id
    that runs again (continued as new, or started anew under the same id) keeps its
    children: no live agent is cancelled."""
    found = []
    parents: dict[str, tuple[str | None, str | None]] = {}
    async for wf in client.list_workflows(QUERY):
        parent_id, by_memo = await _parent_of(wf)
        if parent_id is None:
            continue
        if parent_id not in parents:
            parents[parent_id] = await _parent(client, parent_id)
        status, parent_type = parents[parent_id]
        if status is None or status == CLOSING:
            continue
        if by_memo or parent_type is None or parent_type in AGENT_PARENTS:
            found.append(
                Orphan(
                    workflow_id=wf.id, run_id=wf.run_id, parent_id=parent_id, parent_status=status
                )
            )
    return found


async def _parent_of(wf: WorkflowExecution) -> tuple[str | None, bool]:
    """The run's parent's workflow id, and whether it came from the memo (a resumed run)."""
    if wf.parent_id:
        return wf.parent_id, False
    try:
        named = (await wf.memo()).get(MEMO_PARENT)
    except Exception:  # noqa: BLE001 - a memo this client cannot decode names no parent
        return None, False
    return (named, True) if isinstance(named, str) and named else (None, False)


CLOSING = "CLOSING"
"""`_parent`'s status of a parent that completed within COMPLETED_GRACE."""


async def _parent(client: Client, parent_id: str) -> tuple[str | None, str | None]:
    """The status name of the parent's latest run (None while it runs; NOT_FOUND past the
    namespace's retention; CLOSING for COMPLETED_GRACE after it completed) and its workflow
    type (None if unknown)."""
    try:
        desc = await client.get_workflow_handle(parent_id).describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            return "NOT_FOUND", None
        raise
    if desc.status in (None, WorkflowExecutionStatus.RUNNING):
        return None, desc.workflow_type
    if desc.status == WorkflowExecutionStatus.COMPLETED and desc.close_time is not None:
        if datetime.now(UTC) - desc.close_time < COMPLETED_GRACE:
            return CLOSING, desc.workflow_type
    return desc.status.name, desc.workflow_type


async def stop_orphans(
    client: Client, *, dry_run: bool = False, parents: Collection[str] | None = None
) -> list[Orphan]:
    """Cancel every running sub-agent whose parent closed (see the module's docstring).

    Args:
        dry_run: Report what would be cancelled, change nothing.
        parents: Only the sub-agents of these parents (None: of any).
    """
    done = []
    for orphan in await find_orphans(client):
        if parents is not None and orphan.parent_id not in parents:
            continue
        why = f"its parent {orphan.parent_id} closed ({orphan.parent_status.lower()}) without "
        why += "stopping it"
        if dry_run:
            done.append(orphan.model_copy(update={"reason": f"would cancel (dry run): {why}"}))
            continue
        handle = client.get_workflow_handle(orphan.workflow_id, run_id=orphan.run_id)
        try:
            # The server takes a cancel of a closed run without a word: ask first.
            if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                continue  # it ended since the listing
            await handle.cancel(reason=why)
        except RPCError as e:
            if e.status != RPCStatusCode.NOT_FOUND:
                raise
            continue  # gone past the namespace's retention meanwhile
        done.append(orphan.model_copy(update={"cancelled": True, "reason": f"cancelled: {why}"}))
    return done
