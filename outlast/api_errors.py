"""The errors the Python API (`outlast.api`) raises besides `StartError`, importable from
there too: what a caller catches to tell a refusal from a task that ended or went unanswered."""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import WorkflowUpdateFailedError


class NotSupported(ValueError):
    """An operation the task's pattern does not have; nothing was sent."""


class TaskEnded(RuntimeError):
    """The task's workflow is not running (it ended, or there is none by that id): a signal
    sent now would reach no one; nothing was sent."""


class NotAnswered(TimeoutError):
    """No worker answered in time (none runs, or none has taken the task up yet). A query
    asked nothing; an update was sent and waits on the server for a worker, which may still
    apply it when one comes: `status()` says, once a worker runs. Before, an update with no
    worker waited for good, and a query raised the server's bare RPCError (a user test,
    2026-12-07)."""


ANSWER_TIMEOUT = timedelta(seconds=30)
"""How long an update waits for a worker's answer (`Task.answer_timeout`); as `outlast`'s
steering commands wait."""


class Refused(WorkflowUpdateFailedError):
    """The task refused the request (no such member, no stage waiting, ...): `str()` says
    why. Temporal's own error said only "Workflow update failed", its reason in `.cause`,
    which this keeps; code that catches WorkflowUpdateFailedError still catches it."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(cause)
        self.args = (getattr(cause, "message", "") or str(cause),)


def a_workflow(kind: str) -> str:
    """`an AgentWorkflow`, `a TeamWorkflow`: how a refusal names a workflow's type."""
    return f"{'an' if kind[:1] in 'AEIOU' else 'a'} {kind}"
