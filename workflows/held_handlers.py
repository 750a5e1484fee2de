"""A pattern that ends while a person's update waits in it answers the update with that end.

temporalio ends a run under an update handler that has not finished, and the update's sender
gets "the Workflow completed before the Update completed", which says nothing of why. A
pipeline's `decide_stage` decided ahead (its stage still runs) and a team's `request_shutdown`
(its member has not answered) wait like that; so the pattern, as it ends, marks how it ended,
which those handlers wait for too, and lets them answer before the run ends. A fork-join's
`task_stop` (a signal: nobody waits for an answer) still sending its cancel finishes too.

Every handler of these patterns finishes once marked: a cancelled run cancels only its main
task, so what a handler awaits (an activity, a signal, a child's start) still completes.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import FailureError

from workflows import versions


def ending_of(e: BaseException) -> str | None:
    """How a pattern that ends by `e` ended: `killed` when it was cancelled (whatever was
    raised then), `failed` when it fails, a child's cancellation that went up included (a
    run that was not cancelled fails with it); None for an exception that fails only the
    task, or the cache's eviction of a run that was not cancelled."""
    if workflow.cancellation_reason() is not None:
        return "killed"
    if isinstance(e, FailureError):
        return "failed"
    return None


def ended_text(ending: str) -> str:
    """`killed` -> `was killed`, for "the pipeline was killed" / "the team failed"."""
    return "was killed" if ending == "killed" else ending


async def answer_held(patch: str, e: BaseException, mark: Callable[[str], None]) -> None:
    """When the run ends by `e` with handlers unfinished: `mark` how it ended (the handlers
    answer with it) and wait for them. The patch is asked only then, so no other run records
    it."""
    if workflow.all_handlers_finished():
        return
    ending = ending_of(e)
    if ending is not None and versions.patched(patch):
        mark(ending)
        await workflow.wait_condition(workflow.all_handlers_finished)
