"""Which unanswered queries of `show`'s tree speak for their whole task queue."""

import asyncio
from types import SimpleNamespace

from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from outlast.silence import NO_POLLER, QUERY_BUFFER_FULL, Silence


def run(queue: str = "q", status=WorkflowExecutionStatus.RUNNING) -> SimpleNamespace:
    return SimpleNamespace(status=status, task_queue=queue)


def error(message: str = "", status=RPCStatusCode.DEADLINE_EXCEEDED) -> RPCError:
    return RPCError(message, status, b"")


async def test_a_query_that_waited_silences_its_queue_and_a_short_one_does_not():
    silence, now = Silence(), asyncio.get_running_loop().time()
    # Given only the end of the tree's time, its deadline says nothing of the worker.
    assert silence.heard_nothing(run(), error(), now - 0.2, failing=False)
    assert not silence.known(run())
    assert silence.heard_nothing(run(), error(), now - 3, failing=False)
    assert silence.known(run()) and not silence.known(run("other"))
    # A closed run is asked by a replay on the same queue's workers: not asked either.
    assert silence.known(run(status=WorkflowExecutionStatus.CANCELED))


async def test_a_workflow_s_own_trouble_does_not_silence_its_queue():
    """A run whose workflow task keeps failing, or whose first task has not run (a full query
    buffer), leaves its queue's other workflows to be asked (a review, 2026-12-07)."""
    silence, long_ago = Silence(), asyncio.get_running_loop().time() - 10
    assert silence.heard_nothing(run(), error(), long_ago, failing=True)
    full = error(f"... {QUERY_BUFFER_FULL} ...", RPCStatusCode.RESOURCE_EXHAUSTED)
    assert silence.heard_nothing(run(), full, long_ago, failing=False)
    assert not silence.known(run())
    # No poller at all is the queue's, at once.
    nobody = error(f"{NO_POLLER} for task queue", RPCStatusCode.FAILED_PRECONDITION)
    assert silence.heard_nothing(run(), nobody, asyncio.get_running_loop().time(), False)
    assert silence.known(run())


async def test_other_errors_say_nothing_and_a_closed_run_s_slow_replay_is_its_own():
    silence, now = Silence(), asyncio.get_running_loop().time()
    assert not silence.heard_nothing(run(), error("boom", RPCStatusCode.INTERNAL), now - 9, False)
    assert not silence.queues
    # A long run's replay may take longer than its share on a live worker.
    closed = run(status=WorkflowExecutionStatus.CANCELED)
    assert silence.heard_nothing(closed, error(), now - 9, False)
    assert not silence.known(run())
    nobody = error(f"{NO_POLLER} for task queue", RPCStatusCode.FAILED_PRECONDITION)
    assert silence.heard_nothing(closed, nobody, now, False) and silence.known(run())
