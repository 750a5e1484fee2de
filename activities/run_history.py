"""What an agent's closed run left, read from Temporal: its result, or, for a run that ended
without one (killed, terminated, failed), the conversation its history names.

Read by a person's `outlast resume` (outlast/resume.py) and by a resumed agent looking up
the sub-agents of its earlier runs (activities/earlier_agents.py); `workflows.resumed`
turns it into the next run's start. Nothing here imports the workflows (the activities'
place in the import order), so inputs and results stay JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
)

from agents.notifications import mail_text
from agents.transcript import TranscriptRef

MODEL_CALLS = frozenset({"llm.call_model", "llm.compact"})
"""The activities whose result names the conversation as it then was (a compaction's: the
summary the model went on from)."""
READ_BY = "llm.call_model"
"""The activity whose request took the mail that came before it (`RunRecord.read_upto`)."""
PLAN_FILE = "plan.prepare_plan_file"
KEPT = "transcript.append"
"""In an agent's history, only the end's append of the tool results no model call recorded
(`workflows.agent_end.keep_last_results`: a stop, the turn limit, a kill mid-turn): after
the last model call, it is the conversation the run ended with."""
CONVERSATION = MODEL_CALLS | {KEPT}


class _Response(BaseModel):
    """What this reads of a model call's result (`activities.llm.ModelResponse`, whose
    module would import the model SDK into the CLI)."""

    transcript: TranscriptRef


@dataclass
class RunRecord:
    """What `last_results` read of a run's history."""

    last: dict[str, tuple[str, list[Payload]]]
    """By activity type: the type and result payloads of the last completed one."""
    patches: set[str]
    """The patch ids the run recorded."""
    mail: list[list[Payload]]
    """The payloads of every `send_message` signal the run took (its start's included)."""
    mail_events: list[int] = field(default_factory=list)
    """The event id of each of `mail`."""
    read_upto: int = 0
    """Mail after this event id is in no conversation the run's model calls left: the last
    completed model call's scheduled event, whose workflow task drained the mailbox into its
    request; for one made as a local activity, the start of the workflow task it was
    scheduled in (by time: mail delivered in the tasks that heartbeat while it runs was not
    in its request). Not a compaction's: the mailbox is drained after it."""
    start_input: list[Payload] = field(default_factory=list)
    """The payloads of the run's start input: a continued run's carry hands it the mail the
    run before never read."""


async def last_results(handle: WorkflowHandle, names: frozenset[str]) -> RunRecord:
    """The last completed activity of each type in `names`, from the run's history (a regular
    activity's completion, or a local one's marker), by type: its type and result payloads.
    The activities of CONVERSATION count as one, under "conversation": the later wins."""
    scheduled: dict[int, str] = {}
    last: dict[str, tuple[str, list[Payload]]] = {}
    patches: set[str] = set()
    mail: list[list[Payload]] = []
    mail_events: list[int] = []
    read_upto = 0
    task_starts: list[tuple[int, float]] = []

    def keep(name: str | None, payloads) -> None:
        if name in names:
            last["conversation" if name in CONVERSATION else name] = (name, list(payloads))

    start_input: list[Payload] = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            start_input = list(event.workflow_execution_started_event_attributes.input.payloads)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = attrs.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = event.activity_task_completed_event_attributes
            keep(scheduled.get(done.scheduled_event_id), done.result.payloads)
            if scheduled.get(done.scheduled_event_id) == READ_BY:
                read_upto = done.scheduled_event_id
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            task_starts.append((event.event_id, event.event_time.ToNanoseconds() / 1e9))
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == "core_patch":
                patches.add(json.loads(marker.details["patch-data"].payloads[0].data)["id"])
            elif marker.marker_name == "core_local_activity" and "result" in marker.details:
                data = json.loads(marker.details["data"].payloads[0].data)
                keep(data.get("activity_type"), marker.details["result"].payloads)
                if data.get("activity_type") == READ_BY:
                    read_upto = _task_started_before(task_starts, data, event.event_id)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
            signaled = event.workflow_execution_signaled_event_attributes
            if signaled.signal_name == "send_message":
                mail.append(list(signaled.input.payloads))
                mail_events.append(event.event_id)
    return RunRecord(last, patches, mail, mail_events, read_upto, start_input)


def _task_started_before(starts: list[tuple[int, float]], marker: dict, marked: int) -> int:
    """The start of the workflow task a local activity was scheduled in: the last before its
    `original_schedule_time` (the worker's clock against the server's: on one host, the
    same); its marker's own event if the time is missing."""
    at = marker.get("original_schedule_time") or {}
    if not isinstance(at, dict) or "seconds" not in at:
        return marked
    scheduled = int(at["seconds"]) + int(at.get("nanos", 0)) / 1e9
    before = [event_id for event_id, t in starts if t <= scheduled]
    return before[-1] if before else marked


async def conversation_of(
    client: Client, last: dict[str, tuple[str, list[Payload]]]
) -> TranscriptRef | None:
    """The conversation `last_results` found: as the last model call (or compaction) left
    it, or as the end's append after it did; None if there was none."""
    if "conversation" not in last:
        return None
    kind, payloads = last["conversation"]
    if kind == KEPT:
        (ref,) = await client.data_converter.decode(payloads, [TranscriptRef])
        return ref
    (response,) = await client.data_converter.decode(payloads, [_Response])
    return response.transcript


UNDELIVERED_MEMO = "undelivered"
"""The memo key a killed or failed agent names under the ends of its background tasks that
came after its last turn, which it never read (a completed run's result has them as
`undelivered`)."""


class RunEnd(BaseModel):
    """What a closed run of an agent left, as Temporal has it (`workflows.resumed.
    resumed_from` reads it)."""

    model_config = ConfigDict(frozen=True)

    result: dict | None = None
    """A completed run's result (an AgentResult, as JSON)."""
    transcript: TranscriptRef | None = None
    """Any other run's conversation, as its last model call (or its end's append) left it."""
    plan_file: str | None = None
    """The plan file it prepared, if it did."""
    patches: list[str] = []
    """The patch ids it recorded."""
    agent_id: str | None = None
    """Its `AgentId` attribute."""
    permission_mode: str | None = None
    """Its `PermissionMode` attribute (the start value, unless the run kept it)."""
    unanswered: list[str] = []
    """Messages (`send_message`) no conversation holds: all of a run's that ended before any
    model call answered (a resumed run killed in its first call lost its message: a user
    test, 2026-12-06), those of any other run that did not complete that came after its last
    model call (sent during a tool, then a kill), and the last ones of a completed run that
    counts them unread (sent after a stop: the same user test), after its sub-agents'
    notifications it never read (`undelivered`)."""


async def run_end(client: Client, desc: WorkflowExecutionDescription) -> RunEnd:
    """What the closed run `desc` of an agent left."""
    handle = client.get_workflow_handle(desc.id, run_id=desc.run_id, result_type=dict)
    attributes = {pair.key.name: pair.value for pair in desc.typed_search_attributes}
    shown = {"agent_id": attributes.get("AgentId")}
    if desc.status == WorkflowExecutionStatus.COMPLETED:
        result = await handle.result(follow_runs=False)
        unread = result.get("unread_messages") if isinstance(result, dict) else None
        undelivered = result.get("undelivered") if isinstance(result, dict) else None
        # Its sub-agents' ends it never read, then its own mail (`AgentResult.undelivered`).
        unanswered = [t for t in undelivered or [] if isinstance(t, str)]
        if isinstance(unread, int) and unread > 0:
            # The mailbox is read first in, first out: the unread are the last that came.
            record = await last_results(handle, frozenset())
            # Mail its carry handed it, then its own (a continued run stopped before its
            # first call counts both).
            texts = await _mail_texts(client, record, after=-1)
            unanswered += texts[-unread:]
        return RunEnd(result=result, unanswered=unanswered, **shown)
    record = await last_results(handle, CONVERSATION | {PLAN_FILE})
    plan_file = None
    if PLAN_FILE in record.last:
        (plan_file,) = await client.data_converter.decode(record.last[PLAN_FILE][1], [str])
    transcript = await conversation_of(client, record.last)
    # What came after its last model call (a message sent during a tool, then a kill: lost,
    # a user test, 2026-12-07); with none of its own, all of it, its carry's too.
    after = record.read_upto or -1
    # Its background tasks' ends it never read, then its own mail, as a completed run's.
    ends = (await desc.memo()).get(UNDELIVERED_MEMO)
    unanswered = [t for t in ends if isinstance(t, str)] if isinstance(ends, list) else []
    unanswered += await _mail_texts(client, record, after)
    return RunEnd(
        transcript=transcript,
        unanswered=unanswered,
        plan_file=plan_file,
        patches=sorted(record.patches),
        permission_mode=attributes.get("PermissionMode"),
        **shown,
    )


async def _mail_texts(client: Client, record: RunRecord, after: int) -> list[str]:
    """The texts of the mail a run took, as the agent took it, that came after the event
    `after` (-1: all of it): first what its carry handed it (a continued run's, which came
    before any of its events: none once a model call of its own read it, a review,
    2026-12-07), then its `send_message` signals. One that is no message (the signal takes
    any payload, and refuses it in the workflow) is left out, as is a repeated id (dropped
    there too)."""
    messages: list[tuple[int, object]] = [(0, m) for m in await _carried(client, record)]
    for event_id, payloads in zip(record.mail_events, record.mail, strict=True):
        try:
            (message,) = await client.data_converter.decode(payloads[:1], [dict])
        except Exception:  # noqa: BLE001 - not JSON, or not an object: refused when sent
            continue
        messages.append((event_id, message))
    texts: list[str] = []
    ids: set[str] = set()
    for event_id, message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("text"), str):
            continue
        if (mail_id := message.get("id")) is not None:
            if str(mail_id) in ids:
                continue
            ids.add(str(mail_id))
        if message["text"].strip() and event_id > after:
            # As the agent would have read it: another agent's under its name, so that going
            # first in someone else's message it is not taken for theirs (a review).
            sender = message.get("sender")
            texts.append(mail_text(sender if isinstance(sender, str) else "user", message["text"]))
    return texts


async def _carried(client: Client, record: RunRecord) -> list[object]:
    """The mail a continued run's carry handed it (`AgentCarry.mailbox`; a coordinator's
    agent is its input's `agent`); none for any other run, or an input that does not
    decode."""
    try:
        (inp,) = await client.data_converter.decode(record.start_input[:1], [dict])
    except Exception:  # noqa: BLE001 - no input, or not an object: nothing carried
        return []
    if not isinstance(inp, dict):
        return []
    agent = inp.get("agent") if isinstance(inp.get("agent"), dict) else inp
    carry = agent.get("carry")
    mailbox = carry.get("mailbox") if isinstance(carry, dict) else None
    return list(mailbox) if isinstance(mailbox, list) else []
