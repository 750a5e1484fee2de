"""Running an agent as a child of a pattern workflow (pipeline stage, verifier, teammate),
and reading how it failed."""

from __future__ import annotations

from typing import Literal

from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError, is_cancelled_exception
from temporalio.workflow import ParentClosePolicy

from workflows import search_attributes as sa
from workflows import versions
from workflows.child_endings import describe_runs, spent
from workflows.contracts import AgentInput, AgentResult, AgentUsage

ENDED_CHILD_USAGE = "ended-child-usage"
"""Patch: a pattern reads what a child that ended without a result (failed, killed) spent,
from its `status` query after the end, so the pattern's totals count it."""


async def run_agent_child(child: AgentInput, workflow_id: str, summary: str) -> AgentResult:
    """Start `AgentWorkflow` and wait for its result. A cancelled parent cancels the child,
    which still cleans up (never terminate: that skips cleanup).

    Raises:
        ChildWorkflowError: the child failed or was cancelled (see `child_failure`).
    """
    child, attributes = sa.child_start(child)
    return await workflow.execute_child_workflow(
        "AgentWorkflow",
        child,
        id=workflow_id,
        result_type=AgentResult,
        parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
        static_summary=summary,
        search_attributes=attributes,
    )


def child_failure(e: ChildWorkflowError) -> tuple[Literal["failed", "killed"], str]:
    """How a child agent ended without a result, and the reason to show."""
    status: Literal["failed", "killed"] = "killed" if is_cancelled_exception(e) else "failed"
    return status, getattr(e.cause, "message", None) or str(e.cause or e)


async def ended_usage(workflow_id: str) -> AgentUsage:
    """What a child agent that ended without a result had spent; nothing if it cannot be read
    (no worker answers its `status` query, Temporal does not answer), and nothing once this
    workflow is cancelled itself (no result of its own will count it). The failure carries no
    usage: a cancelled workflow records no details."""
    if workflow.cancellation_reason() is not None or not versions.patched(ENDED_CHILD_USAGE):
        return AgentUsage()
    try:
        [state] = await describe_runs([workflow_id])
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        workflow.logger.warning("no usage for %s: %s", workflow_id, e.cause or e)
        return AgentUsage()
    return spent(state)
