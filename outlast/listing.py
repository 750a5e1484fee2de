"""The listing behind `outlast ls`: Outlast's workflows, a row each (a resumed agent once, as
its latest run). Plain data (pydantic), so `--json` prints exactly this."""

from __future__ import annotations

import asyncio
from datetime import datetime

from pydantic import BaseModel
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionDescription
from temporalio.service import RPCError, RPCStatusCode

from outlast.patterns import WORKFLOW_TYPES
from outlast.run_chain import chain_starts
from workflows import search_attributes as sa

PATTERN_OF_TYPE = {v: k for k, v in WORKFLOW_TYPES.items()} | {"ShellTaskWorkflow": "shell"}
STATUSES = ("running", "completed", "failed", "canceled", "terminated", "timed_out")


class Row(BaseModel):
    workflow_id: str
    pattern: str
    workflow_type: str
    status: str
    started: datetime | None = None
    closed: datetime | None = None
    parent: str | None = None
    outcome: str | None = None
    """How a completed workflow's task ended, where that is not `completed`: a pipeline, team
    or verified task `failed` (or `partial`, ...), an agent `stopped` or out of turns: its
    `AgentStatus` attribute. Temporal's status says only that the workflow completed."""
    run: int = 1
    """Which run of its agent this is: 2 and on, it was resumed (`outlast resume`, a message
    to an ended sub-agent, a verified task's next round); `ls` lists the latest only. 1 too
    for a run no worker has taken up yet (its attributes are set then)."""
    run_id: str | None = None
    agent_id: str | None = None
    resumed_since: bool = False
    """A later run of the same id exists (`ls --status` listed an earlier run it matched)."""


def row_of(w: WorkflowExecution) -> Row:
    status = w.status.name.lower() if w.status else "unknown"
    return Row(
        workflow_id=w.id,
        # A coordinator's worker or a teammate is an AgentWorkflow of the session's pattern.
        pattern=w.typed_search_attributes.get(sa.PATTERN)
        or PATTERN_OF_TYPE.get(w.workflow_type, w.workflow_type),
        workflow_type=w.workflow_type,
        status=status,
        started=w.start_time,
        closed=w.close_time,
        parent=w.parent_id,
        outcome=_outcome(status, w.typed_search_attributes.get(sa.AGENT_STATUS)),
        run=w.typed_search_attributes.get(sa.RUN_GENERATION) or 1,
        run_id=w.run_id,
        agent_id=w.typed_search_attributes.get(sa.AGENT_ID),
    )


def _outcome(status: str, agent_status: str | None) -> str | None:
    if status == "running" and agent_status in (sa.WAITING_FOR_APPROVAL, sa.WAITING_FOR_ANSWER):
        # What waits on a person, as `waiting` and `show` say: `ls` read plain `running` (a
        # user test, 2026-12-06).
        return agent_status.replace("_", " ")
    if status != "completed" or agent_status in (None, "completed", "running", "idle"):
        return None
    return agent_status


def list_query(
    status: str | None, pattern: str | None, include_children: bool, by_attribute: bool = True
) -> str:
    """The visibility query for `outlast ls`; without `by_attribute`, a pattern is known by
    its workflow type only, and a failed one by Temporal's status (for a server that has no
    `Pattern` and `AgentStatus` attributes)."""
    types = sorted(set(WORKFLOW_TYPES.values()))
    if include_children and pattern is None:
        types.append("ShellTaskWorkflow")  # an agent's background commands (`show` has them)
    parts = ["WorkflowType IN (" + ", ".join(f"'{t}'" for t in types) + ")"]
    if pattern is not None and not by_attribute:
        parts[0] = f"WorkflowType = '{WORKFLOW_TYPES[pattern]}'"
    elif pattern is not None:
        # By the pattern the workflow carries: a coordinator started as an AgentWorkflow, a
        # coordinator's workers and a pattern's members are AgentWorkflows of their session's
        # pattern. A workflow that records no attributes is known by its type.
        parts.append(
            f"(Pattern = '{pattern}' OR (Pattern IS NULL"
            f" AND WorkflowType = '{WORKFLOW_TYPES[pattern]}'))"
        )
    if status == "failed" and by_attribute:
        # A pattern that failed its task completes its workflow (`completed (failed)`): it
        # was not listed as failed (a user test, 2026-12-07).
        parts.append(
            "(ExecutionStatus = 'Failed' OR (ExecutionStatus = 'Completed' AND "
            "AgentStatus = 'failed'))"
        )
    elif status is not None:
        parts.append(f"ExecutionStatus = '{status.title().replace('_', '')}'")
    else:
        # A run that continued as new is not a task of its own: its latest run is listed.
        parts.append("ExecutionStatus != 'ContinuedAsNew'")
    if not include_children:
        parts.append("ParentWorkflowId IS NULL")
    return " AND ".join(parts)


async def list_rows(
    client: Client,
    *,
    status: str | None = None,
    pattern: str | None = None,
    include_children: bool = False,
    limit: int = 50,
) -> list[Row]:
    try:
        query = list_query(status, pattern, include_children)
        rows = await _list(client, query, include_children, limit)
    except RPCError as e:
        if (pattern is None and status != "failed") or e.status != RPCStatusCode.INVALID_ARGUMENT:
            raise
        # A cluster Outlast's search attributes were never registered on.
        query = list_query(status, pattern, include_children, by_attribute=False)
        rows = await _list(client, query, include_children, limit)
    if status not in (None, "running"):  # a running run is its id's latest
        await _mark_resumed_since(client, rows)
    return rows


async def _list(client: Client, query: str, include_children: bool, limit: int) -> list[Row]:
    listed: list[WorkflowExecution] = []
    agents: set[tuple[str, str | None]] = set()
    async for w in client.list_workflows(query):
        if not include_children and not _session_root(w):
            continue
        agent = (w.id, w.typed_search_attributes.get(sa.AGENT_ID))
        if agent in agents:
            # An earlier run of a resumed agent: a row each read as several agents of one id
            # (a user test, 2026-12-06). The latest is listed before it: Temporal lists the
            # running first, then by close time, and an id's earlier run closed before its
            # next began. Another agent started under the id again has its own AgentId.
            continue
        agents.add(agent)
        listed.append(w)
        if len(listed) == limit:
            break
    rows = [row_of(w) for w in listed]
    for row, started in zip(rows, await chain_starts(client, listed), strict=True):
        row.started = started
    return rows


RESUMED_SINCE_ASKED = 20
"""Describes at once, for `ls --status`'s check that a listed run is its agent's latest."""


async def _mark_resumed_since(client: Client, rows: list[Row]) -> None:
    """A run listed by its status (`ls --status canceled`) may have been resumed since, its
    agent now running: say so, rather than list it as where the agent stands."""
    limit = asyncio.Semaphore(RESUMED_SINCE_ASKED)

    async def latest_run(row: Row) -> WorkflowExecutionDescription | None:
        async with limit:
            try:
                return await client.get_workflow_handle(row.workflow_id).describe()
            except RPCError:
                return None

    for row, latest in zip(rows, await asyncio.gather(*map(latest_run, rows)), strict=True):
        # By run id, not generation: a run no worker has taken up has no attributes yet.
        # The latest of the same agent only (another one under the id is not its resume).
        row.resumed_since = (
            latest is not None
            and latest.run_id != row.run_id
            and latest.typed_search_attributes.get(sa.AGENT_ID) in (None, row.agent_id)
        )


def _session_root(w: WorkflowExecution) -> bool:
    """Whether the workflow began its own session, rather than going on in another's: a
    resumed sub-agent or pattern member (a verified task's implementer from its second round)
    runs as a workflow of its own, which no server parent link ties to its session."""
    session = w.typed_search_attributes.get(sa.SESSION_ID)
    return session is None or session == w.id
