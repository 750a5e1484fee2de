"""The error tree. Each class name is the Temporal failure type that shows in history.

Only infrastructure faults and requests the model cannot fix are raised; anything the model
can fix is returned as an `is_error` tool result instead. A class decides its retry
behaviour in one place, `retryable`: its errors carry `non_retryable`, which Temporal honours
under any retry policy. Setup and worktree policies also list the non-retryable types by name
(`NON_RETRYABLE`); the model call's policy does not, as it would go into every turn's history.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from temporalio.exceptions import ApplicationError, ApplicationErrorCategory


class OutlastError(ApplicationError):
    """Base of every error Outlast raises across an activity or workflow boundary."""

    retryable: ClassVar[bool] = True
    benign: ClassVar[bool] = False
    """An expected outcome, not a fault: the SDK logs it at DEBUG, not as a warning with a
    traceback (ApplicationErrorCategory.BENIGN)."""
    refusal: ClassVar[bool] = False
    """A refusal of what was asked, for the asker to fix, not a fault: BENIGN too, and the
    worker logs it as one warning line, without a traceback (outlast/activity_log.py)."""

    def __init__(
        self,
        message: str,
        *,
        next_retry_delay: timedelta | None = None,
        **fields: Any,
    ) -> None:
        super().__init__(
            message,
            fields or None,
            type=type(self).__name__,
            non_retryable=not self.retryable,
            next_retry_delay=next_retry_delay,
            category=(
                ApplicationErrorCategory.BENIGN
                if self.benign or self.refusal
                else ApplicationErrorCategory.UNSPECIFIED
            ),
        )
        self.fields = fields


class ModelRequestRejected(OutlastError):
    """The model API refused the request itself (400/401/403/404/413/422), or said not to
    retry it (`x-should-retry: false`): retrying cannot help.

    Fields: `status`, `error_type`, `request_id`, `api_message`.
    """

    retryable = False


class ModelUnavailable(OutlastError):
    """The model API is overloaded, rate-limited or failing (408/409/429/5xx/529), or said to
    retry (`x-should-retry: true`)."""


class ModelConnectionFailed(OutlastError):
    """The model API could not be reached or the connection broke mid-response."""


class LocalModelCallTimedOut(OutlastError):
    """A model call made as a local activity ran past its limit. Temporal has already timed
    it out and ignores what the activity raises, so this only tells the worker's log: one
    line from `activities.llm.call_model` (through the activity logger, `temporalio.activity`,
    with the activity's details) instead of the SDK's warning with a traceback: under
    `model.local_activity: auto` the give-up at `LOCAL_TRY_LIMIT` is the design, not a fault."""

    benign = True


class StoreMissing(OutlastError):
    """A referenced blob is not in the payload store (wrong store configured, or deleted)."""

    retryable = False


class StoreCorrupt(StoreMissing):
    """A blob is in the store but its bytes are not what its name says: what the reference
    stood for is gone as surely as a missing blob, and no retry brings it back."""


class AgentTypeNotFound(OutlastError):
    """The requested agent type is not among the loaded definitions."""

    retryable = False
    refusal = True


class InvalidAgentInput(OutlastError):
    """A workflow was started with an input it cannot run (unknown tool, bad workspace)."""

    retryable = False
    refusal = True


NON_RETRYABLE: list[str] = [
    cls.__name__
    for cls in (ModelRequestRejected, StoreMissing, AgentTypeNotFound, InvalidAgentInput)
]
