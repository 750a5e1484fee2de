"""When a workflow began, for `ls` and `show`: a run that continued as new starts as the one
before hands on, and they gave an agent's start as its latest run's (a user test, 2026-12-06:
4 s after its first, its sub-agents listed as starting before it). A list gives no run's first
run id; a describe does."""

from __future__ import annotations

import asyncio
from datetime import datetime

from temporalio.client import Client, WorkflowExecution, WorkflowExecutionDescription
from temporalio.service import RPCError


async def chain_starts(client: Client, listed: list[WorkflowExecution]) -> list[datetime | None]:
    """Each listed run's chain start, in order: a run whose id has runs that continued as new
    may be their last, and its describe names its chain's first run."""
    continued = await _continued_runs(client, listed)
    later = [w for w in listed if w.id in continued]
    found = await asyncio.gather(*(_chain_started(client, w, continued[w.id]) for w in later))
    by_run = {w.run_id: started for w, started in zip(later, found, strict=True)}
    return [by_run.get(w.run_id, w.start_time) for w in listed]


MAX_CONTINUED_LISTED = 1000
"""Runs that continued as new read for one `ls` (a long team's chain may have hundreds)."""
IDS_PER_QUERY = 100
CONTINUING_TYPES = ("AgentWorkflow", "CoordinatorWorkflow", "TeamWorkflow")
"""The workflow types that continue as new (a cron's later runs aside)."""


async def _continued_runs(
    client: Client, listed: list[WorkflowExecution]
) -> dict[str, dict[str, datetime]]:
    """For `listed`'s ids, their runs that continued as new: id -> run id -> start. Only the
    types that continue as new are asked of, IDS_PER_QUERY ids a query."""
    ids = sorted(
        {
            w.id
            for w in listed
            if w.workflow_type in CONTINUING_TYPES and "'" not in w.id and "\\" not in w.id
        }
    )
    runs: dict[str, dict[str, datetime]] = {}
    seen = 0
    for at in range(0, len(ids), IDS_PER_QUERY):
        quoted = ", ".join(f"'{i}'" for i in ids[at : at + IDS_PER_QUERY])
        query = f"ExecutionStatus = 'ContinuedAsNew' AND WorkflowId IN ({quoted})"
        try:
            async for w in client.list_workflows(query, limit=MAX_CONTINUED_LISTED - seen):
                seen += 1
                if w.start_time is not None:
                    runs.setdefault(w.id, {})[w.run_id] = w.start_time
        except RPCError:
            return {}  # a store that cannot answer it: each row's own start, as before
        if seen >= MAX_CONTINUED_LISTED:
            break
    return runs


def chain_start(
    own: datetime | None, run_id: str, first_run_id: str, continued: dict[str, datetime]
) -> datetime | None:
    """When a run's workflow began: a run that continued as new starts as the one before
    hands on, and `ls` and `show` gave an agent's start as its latest run's (a user test,
    2026-12-06: 4 s after its first, its sub-agents listed as starting before it). A resumed
    run (a new start after the one before closed) is the first of its own chain. None: the
    first run is not among `continued` (past retention, or past the list's limit)."""
    if not first_run_id or first_run_id == run_id:
        return own
    return continued.get(first_run_id)


async def _chain_started(
    client: Client, w: WorkflowExecution, continued: dict[str, datetime]
) -> datetime | None:
    try:
        desc = await client.get_workflow_handle(w.id, run_id=w.run_id).describe()
    except RPCError:
        return w.start_time
    started = chain_start(w.start_time, w.run_id, desc.raw_info.first_run_id, continued)
    return started or await first_run_started(client, desc)


async def first_run_started(client: Client, desc: WorkflowExecutionDescription) -> datetime:
    """`chain_start` for a described run, whose first run id the describe gives."""
    first = desc.raw_info.first_run_id
    if not first or first == desc.run_id:
        return desc.start_time
    try:
        return (await client.get_workflow_handle(desc.id, run_id=first).describe()).start_time
    except RPCError:
        return desc.start_time  # its first run is past the namespace's retention
