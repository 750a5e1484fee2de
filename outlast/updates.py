"""Updates the CLI sends, with an end to the wait when no worker takes them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from temporalio.client import (
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)

UPDATE_WAIT_S = 30.0
"""How long a command waits for a workflow to answer an update before saying so."""


class NoAnswer(Exception):
    """No worker answered an update in time (the worker may be down)."""


class NotYetAnswered(NoAnswer):
    """The workflow took the update (its validator let it through), and its handler still
    waits for something before it answers: a stage's decision held while the stage runs.
    A NoAnswer to callers that do not tell the two apart."""


class Held(NotYetAnswered):
    """Taken, and held by the workflow until something happens (`early` said so)."""


EARLY_EVERY_S = 1.0
"""How often a command that waits for an update's answer asks whether it is held."""


async def update_within(
    handle: WorkflowHandle,
    name: str,
    payload: object,
    early: Callable[[], Awaitable[str | None]] | None = None,
    **kw,
) -> object:
    """`execute_update`, given up on after UPDATE_WAIT_S in all: the SDK asks again and again
    while no worker takes the update (its per-call timeout never ends the wait), so a command
    sent to a workflow whose worker had just died hung for good.

    Raises:
        NoAnswer: in time; the server may still hand the update to a worker that comes up.
        NotYetAnswered: taken, but not answered in time (a decision held until its stage
            ends): a user told "no answer, is a worker running?" then would send it again.
        Held: taken, and `early` (asked every EARLY_EVERY_S while no answer came) said why
            it waits; its message says it. A held decision kept the command waiting 30 s.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + UPDATE_WAIT_S
    try:
        async with asyncio.timeout(UPDATE_WAIT_S):
            started = await handle.start_update(
                name, payload, wait_for_stage=WorkflowUpdateStage.ACCEPTED, **kw
            )
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        raise NoAnswer from None
    answer = asyncio.ensure_future(started.result())
    try:
        async with asyncio.timeout(max(deadline - loop.time(), 1.0)):
            while early is not None:
                done, _ = await asyncio.wait({answer}, timeout=EARLY_EVERY_S)
                if done:
                    break
                if (said := await early()) is not None:
                    raise Held(said)
            return await answer
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        raise NotYetAnswered from None
    finally:
        if not answer.done():
            answer.cancel()
            await asyncio.wait({answer})
        if not answer.cancelled():
            # The SDK turns the cancel into an error of its own: unread, asyncio printed it
            # with a traceback as the command exited (a user test, 2026-12-07).
            answer.exception()


def no_answer_text(workflow_id: str, what: str, check: str | None = None) -> str:
    """`check`: where to see whether the `what` arrived, if not `outlast show` (which shows
    decisions and questions, not a team's messages)."""
    check = check or f"`outlast show {workflow_id}`"
    return (
        f"{workflow_id} did not answer within {UPDATE_WAIT_S:.0f} s: is a worker running "
        f"(`outlast worker`)? The server may still hand it the {what} when one does: "
        f"{check} before you send it again or decide otherwise."
    )


def not_yet_text(workflow_id: str, what: str, held: str = "") -> str:
    """For NotYetAnswered: the update was taken, so no "is a worker running?", which would
    have the person send it again."""
    return (
        f"{workflow_id} took the {what} and has not answered yet{held}; "
        f"`outlast show {workflow_id}` says what became of it"
    )


def handler_missing(error: WorkflowUpdateFailedError, name: str) -> bool:
    """Whether the worker has no handler for update `name` (a worker of an earlier release):
    temporalio refuses it so, before any validator runs, as a RuntimeError, a type none of
    Outlast's handlers or validators fail with. The SDK says so in words only; the words
    matched are the stable part of 1.35's ("Update handler for 'decide_plan' expected but
    not found, ..."), and workflows/test_plan_decisions.py's worker without the update fails
    on an SDK that says it otherwise."""
    cause = error.cause
    said = str(getattr(cause, "message", None) or cause or "")
    return (
        getattr(cause, "type", None) == "RuntimeError"
        and f"'{name}'" in said
        and "not found" in said
    )
