"""Worker interceptor: an update a workflow's validator refuses is refused as not retryable.

The validators say what is wrong with a `ValueError` (workflows/client_input.py, the plan and
question and team checks). The SDK turns an exception that is no `ApplicationError` into a
retryable one, so `temporal workflow update` printed a refusal as `(type: ValueError,
retryable: true)`, as if sending the same update again could help (a user test, 2026-12-06).
The same update is refused again while nothing changes; the type stays the exception's.

A validator runs only when an update arrives, never on replay, and a refused update leaves
no history: this changes no command.
"""

from __future__ import annotations

from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    HandleUpdateInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)


class UpdateRefusals(Interceptor):
    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        return _Refusals


class _Refusals(WorkflowInboundInterceptor):
    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        try:
            super().handle_update_validator(input)
        except ValueError as e:  # a pydantic ValidationError is one too
            raise ApplicationError(str(e), type=type(e).__name__, non_retryable=True) from None
