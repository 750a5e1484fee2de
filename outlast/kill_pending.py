"""Whether a run is being killed: its cancel was requested and its cleanup still runs. Such a
run reads no more mail, so a message signalled to it is lost while the sender is told it was
sent; `outlast send` and `Task.send` refuse it instead (`outlast kill` says a second kill
adds nothing)."""

from __future__ import annotations

from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError


async def kill_pending(handle: WorkflowHandle) -> bool:
    """True if `handle`'s run is running with a cancel requested (False if it cannot tell:
    the message is then sent, as before)."""
    try:
        desc = await handle.describe()
    except RPCError:
        return False
    running = desc.status == WorkflowExecutionStatus.RUNNING
    return running and desc.raw_description.workflow_extended_info.cancel_requested


def no_mail_while_killed(workflow_id: str, resume: str) -> str:
    """The refusal of a message to a run being killed; `resume`: how to go on with it once it
    has ended."""
    return (
        f"{workflow_id} is being killed (its cleanup is running) and reads no more mail; "
        f"nothing was sent. Once it has ended, {resume}"
    )
