"""A query no worker answered: how to tell, and what `show`'s tree keeps of it. Each running
workflow of a tree asked one after another waited out what was left of the tree's time once
one had gone unanswered, so past the first they said nothing at all: a team's members read
just `running` with its worker dead (a user test, 2026-12-07)."""

from __future__ import annotations

import asyncio

from temporalio.client import WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

NO_POLLER = "no poller seen"
"""What the server says when no worker has polled a workflow's task queue lately."""
QUERY_BUFFER_FULL = "consistent query buffer is full"
"""What the server says, after some 15 s, of a query to a workflow no worker has taken up
yet (its first task not done), when another query waits for it already."""

NO_WORKER_ANSWER = (
    "its worker did not answer: none runs (`outlast worker`), or the one that ran it has just "
    "stopped and another takes it up within about 10 s"
)
"""What `show` says of a running workflow whose query no worker answered. Not "is one
running?" alone: with two workers, for the ~10 s after the one that ran it died (the server
waits that long on the dead one's sticky queue), it read so while the other ran (a chaos
test, 2026-12-07). A just-died worker's poller is listed for minutes, so `show` cannot tell
which it is."""
NOT_ASKED = "its turns, tokens and unread mail are not known: `show` ran out of time to ask"
"""What `show` says of an agent that ended without a result when the tree's time for queries
had run out before it was asked."""
NO_WORKER_REPLAY = (
    "its turns, tokens and unread mail need a worker to replay it, and none did in time (is "
    "one running? `outlast worker`)"
)
"""What `show` says of an agent that ended without a result (killed, failed) when no worker
answered the query that replays it: it read as if it had spent nothing (a user test)."""


def unanswered(error: RPCError) -> bool:
    """A query no worker took: none polls, or none answered before the deadline (the
    client's own deadline reads CANCELLED, the server's DEADLINE_EXCEEDED)."""
    timed_out = (RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED)
    said = error.message
    return NO_POLLER in said or QUERY_BUFFER_FULL in said or error.status in timed_out


QUEUE_SILENT_AFTER_S = 1.0
"""A query that waited this long and was not answered speaks for its whole task queue; one
that had less of the tree's time left says nothing of the others."""


class Silence:
    """The task queues where a query went unanswered (a running workflow's, or the replay
    of a closed one's): the tree's other workflows there are not asked, and say so at once."""

    def __init__(self) -> None:
        self.queues: set[str] = set()

    def heard_nothing(
        self, desc: WorkflowExecutionDescription, error: RPCError, began: float, failing: bool
    ) -> bool:
        """Whether `error`, of a query to `desc` sent at `began` (the event loop's clock), is
        an unanswered one (a closed run's too: a worker replays it to answer). Its queue is
        kept as silent when no worker polls it, or when the query waited long enough,
        unless the workflow's own tasks fail (`failing`) or have not run yet (a full query
        buffer): those are its own, and its queue's other workflows were read as workerless
        (a review, 2026-12-07)."""
        if not unanswered(error):
            return False
        waited = asyncio.get_running_loop().time() - began
        # A closed run's replay may outlast its share of time on a live worker (a long run).
        closed = desc.status != WorkflowExecutionStatus.RUNNING
        own = failing or closed or QUERY_BUFFER_FULL in error.message
        if NO_POLLER in error.message or (not own and waited >= QUEUE_SILENT_AFTER_S):
            self.queues.add(desc.task_queue)
        return True

    def known(self, desc: WorkflowExecutionDescription) -> bool:
        """Whether `desc`'s queue is one where a query went unanswered already."""
        return desc.task_queue in self.queues
