"""Signalling or cancelling another workflow by id, without swallowing a kill.

The SDK completes an external signal even when the workflow is cancelled meanwhile, and
then returns normally: a TaskStop landing during a SendMessage round trip would be lost.
Shielding the send and awaiting the shield lets the cancellation reach the caller while the
signal still goes out.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow


async def signal_workflow(workflow_id: str, signal: str, arg: Any = None) -> None:
    """Signal the current run of `workflow_id`.

    Raises:
        ApplicationError: the workflow does not exist or has closed.
    """
    handle = workflow.get_external_workflow_handle(workflow_id)
    send = handle.signal(signal) if arg is None else handle.signal(signal, arg)
    await asyncio.shield(asyncio.ensure_future(send))


async def cancel_workflow(workflow_id: str) -> None:
    """Request cancellation of the current run of `workflow_id` (a no-op if it has closed)."""
    cancel = workflow.get_external_workflow_handle(workflow_id).cancel()
    await asyncio.shield(asyncio.ensure_future(cancel))
