"""How an ended agent's sub-agents ended, from their own workflows.

An agent's `status` lists each child as its table has it. The children its own end stops
(R92: a stop, a kill, a failure, the turn limit) end after it has, and one it leaves (a
terminate) ends later still: their ends never reach it, so its `status` lists them running
for good. `outlast attach` of a coordinator stopped or killed showed its killed workers
running (a user test); the follows ask those children's own workflows instead."""

from __future__ import annotations

import asyncio

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from workflows.contracts import AgentStatus, ChildSummary

CLOSING_WAIT_S = 5.0
"""How long a follow's last frame waits for the children an ended agent still lists as
running to close: its end cancelled them, and they close once their running tool has gone.
One still running after that (its parent was terminated) is shown running, as it is."""
POLL_S = 0.2
ENDS = ("completed", "failed", "killed")
STOPPED = "stopped"
"""`child_end` of a child that was stopped: its table's `killed`, with `stopped` set."""


def child_end(status: WorkflowExecutionStatus | None, result: object = None) -> str | None:
    """A child's end as its parent's table would record it (workflows/registry.py), from its
    workflow's status and, if it completed, its result (decoded without its type); None while
    it runs. A child that was stopped reads `stopped` (its table's `killed`, with `stopped`
    set: the parent's notice reads `killed`)."""
    if status is None or status == WorkflowExecutionStatus.RUNNING:
        return None
    if status == WorkflowExecutionStatus.CANCELED:
        return "killed"
    if status != WorkflowExecutionStatus.COMPLETED:
        return "failed"  # failed, terminated or timed out: as the parent's liveness check
    said = result if isinstance(result, dict) else {}
    if said.get("stopped"):
        return STOPPED
    return said["status"] if said.get("status") in ENDS else "completed"


async def with_child_ends(client: Client, status: AgentStatus, wait_s: float = 0.0) -> AgentStatus:
    """`status`, of an agent that has ended, with each child it lists as running that has
    ended since as it ended; waiting up to `wait_s` for those still closing."""
    ends: dict[str, str] = {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        running = [
            c for c in status.children if c.status == "running" and c.workflow_id not in ends
        ]
        found = await asyncio.gather(*(_end_of(client, c) for c in running))
        ends |= {c.workflow_id: end for c, end in zip(running, found, strict=True) if end}
        if all(found) or loop.time() >= deadline:
            break
        await asyncio.sleep(POLL_S)
    if not ends:
        return status
    children = [
        c.model_copy(update=_ended(ends[c.workflow_id])) if c.workflow_id in ends else c
        for c in status.children
    ]
    return status.model_copy(update={"children": children})


def _ended(end: str) -> dict:
    return {"status": "killed", "stopped": True} if end == STOPPED else {"status": end}


def shown_status(child: ChildSummary) -> str:
    """A child's state as a follow shows it: `stopped` where its table says `killed` of a
    stop (a user test, 2026-12-06: `run` said `killed`, `show` `completed, stopped`)."""
    return "stopped" if child.stopped else child.status


async def _end_of(client: Client, child: ChildSummary) -> str | None:
    try:
        desc = await client.get_workflow_handle(child.workflow_id).describe()
        result = None
        if desc.status == WorkflowExecutionStatus.COMPLETED:
            run = client.get_workflow_handle(child.workflow_id, run_id=desc.run_id)
            result = await run.result(follow_runs=False)
    except RPCError:
        return None  # gone from the server, or the server is away: as the parent says
    return child_end(desc.status, result)
