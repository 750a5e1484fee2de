"""A worker interceptor that holds some of a workflow's outgoing commands for a while (workflow
time), as a loaded server or a slow network would: it opens, on purpose, the races a test
must reach. Replaying a history recorded with one needs the same one (its timers are in the
history)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from temporalio import workflow
from temporalio.worker import (
    Interceptor,
    SignalExternalWorkflowInput,
    StartChildWorkflowInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)


def _always(args: Sequence[Any]) -> bool:
    return True


def _nothing() -> None:
    return None


class Hold(Interceptor):
    """Holds external signals named `signal` (those whose arguments pass `when`), or starts of
    child workflows whose id ends with `child_suffix`, for `seconds`; `on_hold` runs as each
    hold begins (in the worker's process: a test can wait for it). `after_start`: a child's
    start is held once the child has started, before the parent hears of it."""

    def __init__(
        self,
        seconds: float,
        *,
        signal: str | None = None,
        child_suffix: str | None = None,
        when: Callable[[Sequence[Any]], bool] = _always,
        on_hold: Callable[[], None] = _nothing,
        after_start: bool = False,
    ) -> None:
        self.seconds, self.signal, self.child_suffix = seconds, signal, child_suffix
        self.when, self.on_hold, self.after_start = when, on_hold, after_start

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        hold = self

        class Inbound(WorkflowInboundInterceptor):
            def init(self, outbound: WorkflowOutboundInterceptor) -> None:
                super().init(_Outbound(outbound, hold))

        return Inbound

    async def wait(self) -> None:
        self.on_hold()
        await workflow.sleep(self.seconds)


class _Outbound(WorkflowOutboundInterceptor):
    def __init__(self, next: WorkflowOutboundInterceptor, hold: Hold) -> None:
        super().__init__(next)
        self._hold = hold

    async def signal_external_workflow(self, input: SignalExternalWorkflowInput) -> Any:
        if input.signal == self._hold.signal and self._hold.when(input.args):
            await self._hold.wait()
        return await super().signal_external_workflow(input)

    async def start_child_workflow(self, input: StartChildWorkflowInput) -> Any:
        suffix = self._hold.child_suffix
        held = suffix is not None and input.id.endswith(suffix)
        if held and not self._hold.after_start:
            await self._hold.wait()
        handle = await super().start_child_workflow(input)
        if held and self._hold.after_start:
            await self._hold.wait()
        return handle
