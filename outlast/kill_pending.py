"""Whether a run will read a message sent to it now. One being killed (its cancel requested,
its cleanup running) reads no more mail: a message signalled to it was lost while the sender
was told it was sent, so `outlast send` and `Task.send` refuse it (`outlast kill` says a
second kill adds nothing). One whose stop is pending ends after its current turn without
reading it: both warn."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio.client import (
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError

from workflows.contracts import AgentStatus
from workflows.pattern_contracts import TeamView

STOP_QUERY = timedelta(seconds=2)
"""For whether a stop is pending: a replay of the agent's history on a loaded machine."""
STOP_PENDING = (
    "a stop is pending: it ends after its current turn without reading this message (its end "
    "counts it unread)"
)


async def kill_pending(handle: WorkflowHandle) -> bool:
    """True if `handle`'s run is running with a cancel requested (False if it cannot tell:
    the message is then sent, as before)."""
    try:
        return being_killed(await handle.describe())
    except RPCError:
        return False


def being_killed(desc: WorkflowExecutionDescription) -> bool:
    """Whether `desc` is of a running run whose cancel was requested."""
    running = desc.status == WorkflowExecutionStatus.RUNNING
    return running and desc.raw_description.workflow_extended_info.cancel_requested


def no_mail_while_killed(workflow_id: str, resume: str) -> str:
    """The refusal of a message to a run being killed; `resume`: how to go on with it once it
    has ended."""
    return (
        f"{workflow_id} is being killed (its cleanup is running) and reads no more mail; "
        f"nothing was sent. Once it has ended, {resume}"
    )


async def stop_pending(handle: WorkflowHandle) -> bool:
    """Whether the agent was asked to stop already (False when no worker answers in time)."""
    try:
        status = await handle.query("status", result_type=AgentStatus, rpc_timeout=STOP_QUERY)
    except (RPCError, WorkflowQueryFailedError):
        return False
    return status.stop_requested


async def members_stopping(team: WorkflowHandle, to: str | None) -> list[str]:
    """The members a team's message to `to` (None: `lead`; `*`: every member) went to whose
    stop is pending; none when no worker answers in time. `send TEAM --to NAME` said "sent"
    where `send TEAM/NAME` warned (a user test, 2026-12-07)."""
    try:
        view = await team.query("team", result_type=TeamView, rpc_timeout=STOP_QUERY)
    except (RPCError, WorkflowQueryFailedError):
        return []
    members = [m for m in view.members if m.state != "ended"]
    if to != "*":  # by name, as the team takes `TeamMail.to` (None: "lead")
        members = [m for m in members if m.name == (to or "lead")]
    client = team._client  # noqa: SLF001 - the team's own client
    handles = [client.get_workflow_handle(m.workflow_id) for m in members]
    pending = await asyncio.gather(*map(stop_pending, handles))
    return [m.name for m, stopping in zip(members, pending, strict=True) if stopping]
