"""The signals a workflow refused, as `outlast show` asks for them: the query that holds them
for each workflow type. `show` listed an agent's and a pipeline's only, and none once the
workflow had completed, when a person asks why a signal did nothing (user tests,
2026-12-06)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio.client import Client, WorkflowExecutionDescription, WorkflowQueryFailedError
from temporalio.service import RPCError

REFUSALS_QUERY = {
    "TeamWorkflow": "team",
    "ForkJoinWorkflow": "refused_signals",
    "VerifiedTaskWorkflow": "refused_signals",
}
"""The query that holds a pattern's refused signals (its whole view, for a team's); an
agent's and a pipeline's come with the queries `show` makes of them anyway."""

CLOSED_QUERY_S = 1.0
"""The most `show` waits for a completed workflow's refusals: a worker that stopped lately is
still listed, and nothing answers until the query times out."""

CLOSED_REFUSALS_QUERY = {
    **REFUSALS_QUERY,
    "AgentWorkflow": "status",
    "CoordinatorWorkflow": "status",
    "PipelineWorkflow": "pipeline",
}
"""The same for a workflow that completed, whose result holds no refusals."""


async def refused_signals(
    client: Client,
    desc: WorkflowExecutionDescription,
    left: timedelta,
    query: str | None = None,
    unanswered: Callable[[RPCError], object] | None = None,
) -> list[str] | None:
    """The refusals the run `desc` keeps, from `query` (default: its type's in
    REFUSALS_QUERY); None when no worker answers within `left` (`unanswered` is given the
    error)."""
    query = query or REFUSALS_QUERY[desc.workflow_type]
    try:
        run = client.get_workflow_handle(desc.id, run_id=desc.run_id)
        answer = await run.query(query, rpc_timeout=left)
    except RPCError as e:
        if unanswered is not None:
            unanswered(e)
        return None
    except WorkflowQueryFailedError:
        return None
    texts = answer.get("refused_signals") if isinstance(answer, dict) else answer
    return [str(t) for t in texts or []]
