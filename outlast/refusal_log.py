"""Worker interceptor: an activity's refusal of what it was asked goes to the worker's log
as one line.

A refusal (`OutlastError.refusal`: a missing workspace, an unknown agent type, a worktree
that cannot be made) is the asker's to fix and reaches them in the workflow's failure. The
SDK would log it as a warning with a full traceback, as for a fault; the error's BENIGN
category turns that into a DEBUG line, and this puts back the one line an operator reads.
"""

from __future__ import annotations

from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from activities.errors import OutlastError


class RefusalLog(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _RefusalLogActivity(next)


class _RefusalLogActivity(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        try:
            return await super().execute_activity(input)
        except OutlastError as e:
            if e.refusal:
                # The activity logger adds the activity's type, ids and attempt.
                activity.logger.warning("Refused (%s): %s", e.type, e.message)
            raise
