"""The timers a parent keeps for its sync sub-agents (R21's background hint, R22's auto-
background), shared by the children that start waiting at the same instant.

A response's parallel Agent calls start their children together, and each child's wait used to
start its own 2 s hint timer: twenty children, twenty timers, each a billed action and two
events. Children whose wait starts in the same workflow task have the same deadline, so the
first one's timer serves them all; it is cancelled once none of them waits any more. Patched
`shared-child-timers` (listed after the baseline in workflows/versions.py), asked only when a
second child finds a timer to share: a lone child's timer is what it was, and a run from
before keeps one timer per child, each cancelled when its own child stops waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from temporalio import workflow

from workflows import versions

SHARED_CHILD_TIMERS = "shared-child-timers"


@dataclass(eq=False)  # removed from the list by identity
class _Timer:
    key: tuple[str, datetime]
    owner: asyncio.Task[None]
    on_fire: dict[str, Callable[[], None]]
    """Waiter -> what the timer firing does for it; the waiters still waiting."""


def _may_share() -> bool:
    return versions.patched(SHARED_CHILD_TIMERS)


class ChildTimers:
    """One parent run's open child timers (not carried: a parent continues as new only with no
    sync child waiting).

    `share`: whether a child may join a timer already open for its deadline (a test can
    answer as a run from before the patch does).
    """

    def __init__(self, share: Callable[[], bool] = _may_share) -> None:
        self._open: list[_Timer] = []
        self._share = share

    def start(self, kind: str, waiter: str, after: timedelta, on_fire: Callable[[], None]) -> None:
        """`on_fire` runs `after` from now unless `waiter` stops first."""
        key = (kind, workflow.now() + after)
        shared = next((t for t in self._open if t.key == key and not t.owner.done()), None)
        if shared is not None and self._share():
            shared.on_fire[waiter] = on_fire
            return
        waiting: dict[str, Callable[[], None]] = {waiter: on_fire}

        async def run() -> None:
            # Sleeps as the first step of its own task, as each child's timer did before it
            # was shared: a history from before sees the same commands in the same order.
            await workflow.sleep(after)
            for fire in list(waiting.values()):
                fire()

        self._open.append(_Timer(key, asyncio.create_task(run()), waiting))

    def stop(self, waiter: str) -> None:
        """`waiter` waits no more: a timer nobody else waits on is cancelled (in the order the
        timers were started, as the code before sharing cancelled a child's own)."""
        for timer in list(self._open):
            if timer.on_fire.pop(waiter, None) is not None and not timer.on_fire:
                timer.owner.cancel()
                self._open.remove(timer)
