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

import difflib
from collections.abc import Sequence

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    HandleUpdateInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)


class UpdateRefusals(Interceptor):
    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        return _Refusals


class _Refusals(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(outbound)
        # Every workflow type at once: a misspelt update name (`message_membr`) read "Update
        # handler for 'message_membr' expected but not found ... (type: RuntimeError,
        # retryable: true)", where a misspelt signal is refused with the name meant (a user
        # test, 2026-12-07). Refused in the validator, so never in a history. Set here, not
        # as the run starts: an update in the first task is looked up before that (a review).
        workflow.set_dynamic_update_handler(_never, validator=_refuse_unknown_update)

    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        try:
            super().handle_update_validator(input)
        except ValueError as e:  # a pydantic ValidationError is one too
            raise ApplicationError(str(e), type=type(e).__name__, non_retryable=True) from None


def _refuse_unknown_update(name: str, args: Sequence[RawValue]) -> None:
    known = sorted(n for n in _updates_of(workflow.instance()) if n)
    close = difflib.get_close_matches(name, known, n=1)
    meant = f" (did you mean {close[0]}?)" if close else ""
    kind = workflow.info().workflow_type
    raise ValueError(
        f"update `{name}` refused: {kind} has no update of that name{meant}; its updates: "
        f"{', '.join(known) or 'none'}"
    )


def _never(name: str, args: Sequence[RawValue]) -> None:
    """Never run: its validator refuses every update it is given."""
    raise ApplicationError(f"no update {name}", type="UnknownUpdate", non_retryable=True)


def _updates_of(instance: object) -> list[str | None]:
    defn = workflow._Definition.from_class(type(instance))  # noqa: SLF001 - the SDK's own record
    return list(defn.updates) if defn is not None else []
