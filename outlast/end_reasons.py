"""Why a run ended, as `outlast show`, `transcript` and `run` say it: a failure's message, a
terminate's reason, and a kill's, read from the cancel request in its history (a workflow's
request named by that workflow). Moved out of `outlast/inspect.py`, the tree, which had
grown past one concept."""

from __future__ import annotations

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent, WorkflowExecutionCancelRequestedEventAttributes
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryReverseRequest
from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowHistoryEventFilterType,
)
from temporalio.service import RPCError

from outlast.question_view import plain

REASON = "reason: "
"""How a node's error gives the reason its kill or stop was given."""

BY_WORKFLOW = "stopped by workflow "
"""How a cancel a workflow requested (a parent's TaskStop or end) begins."""

UNDECODED_INPUT = "InvalidWorkflowInput"
"""The failure of a run whose input never decoded (outlast/converter.py): no query can be
answered by replaying it (the SDK logs "Expected workflow input" with a traceback)."""


async def why_it_ended(
    handle: WorkflowHandle, status: WorkflowExecutionStatus
) -> tuple[str | None, str | None]:
    """The failure's message (decoded, as the SDK gives it) or the reason a terminate gave,
    and the failure's type; `show` said `failed` and nothing more (a user test, 2026-12-05)."""
    why = kind = None
    try:
        if status == WorkflowExecutionStatus.CANCELED:
            reason = await cancel_reason(handle)
            why = f"{REASON}{reason}" if reason else None
        elif status == WorkflowExecutionStatus.TERMINATED:
            async for event in handle.fetch_history_events(
                event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT
            ):
                why = event.workflow_execution_terminated_event_attributes.reason
        elif status in (WorkflowExecutionStatus.FAILED, WorkflowExecutionStatus.TIMED_OUT):
            await handle.result(follow_runs=False)
    except WorkflowFailureError as e:
        cause = e.cause
        why = str(getattr(cause, "message", None) or cause)
        kind = getattr(cause, "type", None)
    except RPCError:
        return None, None  # its history is gone, or the server is away: the status says enough
    return (" ".join(plain(why).split()) if why else None), kind


REASON_EVENTS = 200
"""How far back from a killed run's end its cancel request is looked for first: its cleanup
(a tool killed, results kept, a worktree removed) is a few dozen events."""


async def cancel_reason(handle: WorkflowHandle) -> str:
    """The reason a kill gave (`outlast kill --reason`, `Task.kill(reason=)`), from the
    cancel request in the closed run's history; "" if it gave none. Read from the end, a page
    of events, so each killed agent of a tree can say why (a child's read the whole history,
    and so only the agent asked about was: a kill of a stage, a lead or a worker said no
    reason in `show`; a user test, 2026-12-07)."""
    return (await cancel_request(handle))[0]


async def cancel_request(handle: WorkflowHandle) -> tuple[str, int | None, str]:
    """`cancel_reason`, and, of a cancel another workflow requested, the id of the event in
    that workflow's history that requested it (None otherwise) and the run id of that
    workflow's run ("" otherwise): a resume may have started another run of it since."""
    for event in await _last_events(handle):
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
            attrs = event.workflow_execution_cancel_requested_event_attributes
            requester = attrs.external_workflow_execution.run_id
            return _request_said(attrs), attrs.external_initiated_event_id or None, requester
    return next(iter(await cancel_requests(handle)), ""), None, ""


END_SIGNALS = ("stop", "shutdown")
"""The signals that ask a run to end after its turn: an agent's or a pipeline's, a team's."""


def _asks_to_end(event: HistoryEvent, signals_only: bool = False) -> bool:
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        return event.workflow_execution_signaled_event_attributes.signal_name in END_SIGNALS
    cancel = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED
    return not signals_only and event.event_type == cancel


async def _first_asking_to_end(
    handle: WorkflowHandle, signals_only: bool = False, whole: bool = True
) -> HistoryEvent | None:
    """The run's first kill or stop request (`signals_only`: stop), looked for in the last
    page of its history, then, if that page holds none and is not the whole history, in all
    of it: a team's members' ends may fill a page after its shutdown (a review)."""
    page = await _last_events(handle)
    found = [e for e in page if _asks_to_end(e, signals_only)]
    if not found and whole and len(page) >= REASON_EVENTS:
        found = [e async for e in handle.fetch_history_events() if _asks_to_end(e, signals_only)]
        found.reverse()
    return found[-1] if found else None  # the last first: the first is kept


async def end_requested_at(handle: WorkflowHandle) -> int | None:
    """The id of the event in which the closed run was first asked to end, by a kill or by a
    stop: None if by neither. An event id, not a time: a request another workflow made just
    before a kill came has a smaller id in that workflow's history, whatever the clocks."""
    first = await _first_asking_to_end(handle)
    return first.event_id if first is not None else None


async def asked_to_end(handle: WorkflowHandle) -> str | None:
    """`kill` or `stop`: the first request to end the running run, if any, among its last
    events (one sent while no worker runs is among them: nothing has happened since)."""
    first = await _first_asking_to_end(handle, whole=False)
    if first is None:
        return None
    signalled = first.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    return "stop" if signalled else "kill"


async def end_words(handle: WorkflowHandle) -> tuple[str, str]:
    """The words a closed run's kill or first stop was given, and `killed` or `stopped`:
    ("", "") when it had neither, or no words."""
    status = (await handle.describe()).status
    if status == WorkflowExecutionStatus.CANCELED:
        words = " ".join(plain(await cancel_reason(handle)).split())
        return (words, "killed") if words else ("", "")
    words = await stop_words(handle)
    return (words, "stopped") if words else ("", "")


async def stop_words(handle: WorkflowHandle) -> str:
    """The reason the first stop (or a team's shutdown) of the closed run was given: a
    team's result keeps none, and `show` said only `stopped` of a team stopped with one (a
    user test, 2026-12-07)."""
    first = await _first_asking_to_end(handle, signals_only=True)
    if first is None:
        return ""
    payloads = list(first.workflow_execution_signaled_event_attributes.input.payloads)
    try:
        (value,) = await handle._client.data_converter.decode(payloads[:1])  # noqa: SLF001
    except Exception:  # noqa: BLE001 - a payload this client cannot read says nothing
        return ""
    reason = value.get("reason") if isinstance(value, dict) else None
    return " ".join(plain(reason).split()) if isinstance(reason, str) else ""


async def _last_events(handle: WorkflowHandle) -> list[HistoryEvent]:
    """The run's last REASON_EVENTS events, the last first."""
    request = GetWorkflowExecutionHistoryReverseRequest(
        namespace=handle._client.namespace,  # noqa: SLF001 - the handle's own client
        execution=WorkflowExecution(workflow_id=handle.id, run_id=handle.run_id or ""),
        maximum_page_size=REASON_EVENTS,
    )
    service = handle._client.workflow_service  # noqa: SLF001
    page = await service.get_workflow_execution_history_reverse(request)
    return list(page.history.events)


def _request_said(attrs: WorkflowExecutionCancelRequestedEventAttributes) -> str:
    """A cancel request's reason as a person reads it: a person's own words; a workflow's
    request (its parent's TaskStop or end) by that workflow's id, and the reason it gave.
    The server words those "Cancel requested by workflow with run id ... with reason:"."""
    cause = " ".join(plain(attrs.cause).split())
    requester = attrs.external_workflow_execution.workflow_id
    if not requester:
        return cause
    # The server's wording when it has one; a cancel made through a child's handle gives
    # the bare reason (a review, 2026-12-07).
    given = cause.split("with reason:", 1)[1].strip() if "with reason:" in cause else cause
    return f"{BY_WORKFLOW}{plain(requester)}" + (f": {given}" if given else "")


async def cancel_requests(handle: WorkflowHandle) -> list[str]:
    """The reason of each cancel request in the run's history ("" for none given): none
    while nobody asked to kill it, one after (the server takes a second request while the
    first is pending without a word, or an event)."""
    reasons = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
            reasons.append(
                _request_said(event.workflow_execution_cancel_requested_event_attributes)
            )
    return reasons
