"""Worker interceptor: what an activity's expected ends put in the worker's log, one line
each, where the SDK logs a warning with a full traceback as for a fault.

- A refusal of what it was asked (`OutlastError.refusal`: a missing workspace, an unknown
  agent type, a worktree that cannot be made) is the asker's to fix and reaches them in the
  workflow's failure. The error's BENIGN category makes the SDK's line a DEBUG one; this
  puts back the one line an operator reads.
- A cancel of an attempt the server no longer has (its workflow was terminated or ended, or
  the attempt timed out and another runs): the SDK logged ~80 lines of a `CancelledError`
  traceback per agent terminated during a model call (a user test, 2026-12-05). Its end
  goes nowhere, so it ends as a BENIGN (retryable) error, said in one INFO line.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from activities.errors import OutlastError


class ActivityLog(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivityLog(next)


class _ActivityLog(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        try:
            return await super().execute_activity(input)
        except OutlastError as e:
            if e.refusal:
                # The activity logger adds the activity's type, ids and attempt.
                activity.logger.warning("Refused (%s): %s", e.type, e.message)
            raise
        except asyncio.CancelledError:
            gone = _gone()
            if gone is None:
                raise
            activity.logger.info("Stopped: %s", gone)
            # Retryable, as the SDK's own failure for it was: where the server has not timed
            # the attempt out yet (its timer late under load), it retries it as before.
            raise ApplicationError(
                f"stopped: {gone}", type="AttemptGone", category=ApplicationErrorCategory.BENIGN
            ) from None


def _gone() -> str | None:
    """Why the server no longer has this attempt, if that is why it was cancelled."""
    details = activity.cancellation_details()
    if details is None:
        return None
    # Timed out first: Core's own timers set both.
    if details.timed_out:
        return "the attempt timed out (another attempt takes over)"
    if details.not_found:
        return "the server no longer has this attempt (its workflow was terminated or ended)"
    return None
