"""Heartbeats of an activity that takes time: Temporal delivers a cancellation (a kill) to an
activity only in a heartbeat's response, so blocking work runs in a thread while a task
beats."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import TypeVar

from temporalio import activity

T = TypeVar("T")

HEARTBEAT_INTERVAL_S = 5.0
"""Spec R93's default. Each heartbeat is a server request and a billed action; a killed run's
Bash command does not wait for one (`tool.bash_kill`), other tools are short."""


def heartbeat_interval(timeout: timedelta | None) -> float:
    """Seconds between heartbeats: `HEARTBEAT_INTERVAL_S` (read here, so a test can shorten
    it), or a third of a shorter heartbeat timeout, so that one late beat is no timeout."""
    if not timeout:
        return HEARTBEAT_INTERVAL_S
    return min(HEARTBEAT_INTERVAL_S, timeout.total_seconds() / 3)


@contextlib.asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat from a background task for as long as the block runs.

    Temporal delivers a cancellation to an activity only in a heartbeat response, so anything
    that can take time must run inside this. Outside an activity (plain unit tests) it does
    nothing.
    """
    if not activity.in_activity() or activity.info().is_local:
        yield  # a local activity cannot heartbeat: it lives inside its workflow task
        return

    interval = heartbeat_interval(activity.info().heartbeat_timeout)

    async def beat() -> None:
        # The first beat waits one interval: most tool calls are over by then, and every
        # heartbeat sent is a server request (and a billed action on Temporal Cloud).
        while True:
            await asyncio.sleep(interval)
            activity.heartbeat()

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def run_blocking(fn: Callable[..., T], *args: object) -> T:
    """Run blocking file work in a thread while heartbeating, so a cancel is not held up."""
    async with heartbeating():
        return await asyncio.to_thread(fn, *args)
