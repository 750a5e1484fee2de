"""Resuming a top-level agent that ended: a new run of its workflow id that goes on from the
conversation it ended with, the person's message its next turn.

A parent resumes its sub-agent so with SendMessage (R66, `workflows/agent_control.py`); this is
the same for the agent a person started, as Claude Code's `--resume` continues a session.
Its run records none of this: everything is read from the ended run's history (its input, its
result or last model call), so the resume needs no worker until the new run starts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError, RPCStatusCode

from agents.transcript import TranscriptRef
from outlast.orphans import stop_orphans
from outlast.start_metadata import start_metadata
from workflows import search_attributes as sa
from workflows.contracts import AgentInput, AgentResult, MailMessage
from workflows.pattern_contracts import CoordinatorInput
from workflows.resumed import Resumed

MODEL_CALLS = frozenset({"llm.call_model", "llm.compact"})
"""The activities whose result names the conversation as it then was (a compaction's: the
summary the model went on from)."""


class ResumeRefused(ValueError):
    """Nothing was started; the message says why and what there is instead."""


class _Response(BaseModel):
    """What this reads of a model call's result (`activities.llm.ModelResponse`, whose
    module would import the model SDK into the CLI)."""

    transcript: TranscriptRef


PLAN_FILE = "plan.prepare_plan_file"
KEPT = "transcript.append"
"""In an agent's history, only the end's append of the tool results no model call recorded
(`workflows.agent_end.keep_last_results`: a stop, the turn limit, a kill mid-turn): after
the last model call, it is the conversation the run ended with."""
CONVERSATION = MODEL_CALLS | {KEPT}


@dataclass
class RunRecord:
    """What `last_results` read of a run's history."""

    last: dict[str, tuple[str, list[Payload]]]
    """By activity type: the type and result payloads of the last completed one."""
    patches: set[str]
    """The patch ids the run recorded."""


async def last_results(handle: WorkflowHandle, names: frozenset[str]) -> RunRecord:
    """The last completed activity of each type in `names`, from the run's history (a regular
    activity's completion, or a local one's marker), by type: its type and result payloads.
    The activities of CONVERSATION count as one, under "conversation": the later wins."""
    scheduled: dict[int, str] = {}
    last: dict[str, tuple[str, list[Payload]]] = {}
    patches: set[str] = set()

    def keep(name: str | None, payloads) -> None:
        if name in names:
            last["conversation" if name in CONVERSATION else name] = (name, list(payloads))

    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = attrs.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = event.activity_task_completed_event_attributes
            keep(scheduled.get(done.scheduled_event_id), done.result.payloads)
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == "core_patch":
                patches.add(json.loads(marker.details["patch-data"].payloads[0].data)["id"])
            elif marker.marker_name == "core_local_activity" and "result" in marker.details:
                data = json.loads(marker.details["data"].payloads[0].data)
                keep(data.get("activity_type"), marker.details["result"].payloads)
    return RunRecord(last, patches)


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


async def last_model_call(client: Client, handle: WorkflowHandle) -> TranscriptRef | None:
    """The conversation as the run left it, from its history: as its last model call (or
    compaction) left it, with the tool results its end kept after it; None if it made no
    model call."""
    return await conversation_of(client, (await last_results(handle, CONVERSATION)).last)


RESUMABLE = {"AgentWorkflow": AgentInput, "CoordinatorWorkflow": CoordinatorInput}
"""The workflow types a person resumes, with their start inputs' types."""


@dataclass(frozen=True)
class Ended:
    """What an agent's last run left for the next."""

    workflow_type: str
    started: AgentInput | CoordinatorInput
    """The last run's start input."""
    agent: AgentInput
    """The agent as that run ran it (a coordinator's, made from its input)."""
    task_queue: str
    run_id: str
    """The run that ended."""
    resumed: Resumed


def resume_input(ended: Ended) -> AgentInput | CoordinatorInput:
    """The new run's input: the agent as it was started, going on from its conversation in
    the mode it ended in, with the files it had read still read (R27), one generation on.
    The message comes as mail (the start's signal), as a parent's SendMessage does."""
    if isinstance(ended.started, CoordinatorInput):
        # Its own continue-as-new's agent stays behind: the run makes its agent from this.
        return ended.started.model_copy(update={"agent": None, "resumed": ended.resumed})
    return ended.resumed.applied_to(ended.agent)


def refusal_for_kind(workflow_id: str, desc: WorkflowExecutionDescription) -> str | None:
    """Why `workflow_id` cannot be resumed from the CLI, before its history is read."""
    if desc.workflow_type not in RESUMABLE:
        return (
            f"{workflow_id} is a {desc.workflow_type}: resume goes on with an agent (an "
            "AgentWorkflow or a CoordinatorWorkflow); a new `outlast run` starts the task over"
        )
    if desc.status == WorkflowExecutionStatus.RUNNING:
        return f"{workflow_id} is running: `outlast send {workflow_id} ...` messages it"
    return None


def refusal_for_input(workflow_id: str, inp: AgentInput) -> str | None:
    """Why the agent started with `inp` is not the CLI's to resume: a sub-agent or a
    teammate, whose parent or team would never hear of the new run."""
    if inp.team is not None:
        return (
            f"{workflow_id} is a member of the team {inp.team.team_name}: its team messages it "
            "(`outlast send TEAM --to NAME` while the team runs)"
        )
    parent = inp.parent.workflow_id if inp.parent else inp.lineage.parent_workflow_id
    if parent:
        return f"{workflow_id} is a sub-agent of {parent}: its parent resumes it with SendMessage"
    return None


async def ended_run(client: Client, workflow_id: str) -> Ended:
    """What the agent's last run left.

    Raises:
        ResumeRefused: no such agent, one still running, not a top-level agent, or one
            that left no conversation to go on from.
    """
    try:
        desc = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            raise ResumeRefused(f"no workflow with id {workflow_id}") from None
        raise
    if (why := refusal_for_kind(workflow_id, desc)) is not None:
        raise ResumeRefused(why)
    # Every read is of the run just described: one a concurrent resume starts meanwhile
    # would mix two runs' ends (`resume_agent` refuses, should that happen).
    handle = client.get_workflow_handle(workflow_id, run_id=desc.run_id, result_type=AgentResult)
    started = await _started_input(client, handle, workflow_id, RESUMABLE[desc.workflow_type])
    agent = _agent_of(started)
    if (why := refusal_for_input(workflow_id, agent)) is not None:
        raise ResumeRefused(why)
    agent_id = desc.typed_search_attributes.get(sa.AGENT_ID) or agent.lineage.agent_id
    kept = {"workflow_type": desc.workflow_type, "started": started, "agent": agent}
    if desc.status == WorkflowExecutionStatus.COMPLETED:
        result = await handle.result(follow_runs=False)
        resumed = Resumed(
            transcript=result.transcript,
            run_generation=result.run_generation,
            agent_id=result.agent_id or agent_id,
            permission_mode=result.permission_mode,
            plan_file=result.plan_file,
            read_state_ref=result.read_state_ref,
        )
    else:
        shown = desc.typed_search_attributes.get(sa.PERMISSION_MODE)
        resumed = await _from_history(client, handle, agent, agent_id, shown)
    if resumed.transcript.head is None:
        # A stop, a kill or a failure before the model first answered: the task is in no
        # conversation yet, and a run from an empty one would have the message only.
        raise ResumeRefused(
            f"{workflow_id} ended before its first model call answered: there is no "
            "conversation to go on from; a new `outlast run` starts the task over"
        )
    return Ended(**kept, task_queue=desc.task_queue, run_id=desc.run_id, resumed=resumed)


async def _from_history(
    client: Client,
    handle: WorkflowHandle,
    agent: AgentInput,
    agent_id: str,
    shown_mode: str | None = None,
) -> Resumed:
    """A killed, terminated, failed or timed-out run's end, which no result names: the
    conversation as its last model call left it, its plan file (a plan it wrote is the plan
    it goes on with), and its mode: `shown_mode`, its `PermissionMode` attribute, where the
    run changed it (plan mode, an approved plan's mode: `sa.WaitMarks`)."""
    record = await last_results(handle, CONVERSATION | {PLAN_FILE})
    last = record.last
    transcript = await conversation_of(client, last)
    if sa.WAITS_MARKED not in record.patches:
        shown_mode = None  # its attribute kept the start value: the run never set it
    plan_file = None
    if last.get(PLAN_FILE):
        (plan_file,) = await client.data_converter.decode(last[PLAN_FILE][1], [str])
    # Here only: its module imports the agent loop's, which `outlast ls` need not wait for.
    from workflows.carry import AgentCarry

    carry = AgentCarry.model_validate(agent.carry) if agent.carry else None
    if carry is not None:  # a run that continued as new: what the chain had till then
        transcript = transcript or carry.state.transcript
        plan_file = plan_file or carry.state.plan_file
    return Resumed(
        transcript=transcript or agent.resume_from or TranscriptRef(),
        run_generation=agent.run_generation,
        agent_id=agent_id,
        permission_mode=_mode(agent, carry.state.mode if carry else "", shown_mode),
        plan_file=plan_file or agent.plan_file,
    )


def _mode(agent: AgentInput, carried: str, shown: str | None) -> str | None:
    """The mode an ended run was in: its attribute, where the run kept it (patched
    `waits-marked`; a run of an earlier release kept its start value, and a killed run
    resumed after an approved plan went back to `default`); else the mode a continue-as-new
    carried, else the one it was started (or resumed) in."""
    return shown or (carried or agent.permission_mode) or None


def _agent_of(started: AgentInput | CoordinatorInput) -> AgentInput:
    if isinstance(started, AgentInput):
        return started
    # Here only, as the carry's module.
    from workflows.coordinator import coordinator_agent_input

    return coordinator_agent_input(started)


async def _started_input(
    client: Client, handle: WorkflowHandle, workflow_id: str, kind: type
) -> AgentInput | CoordinatorInput:
    async for event in handle.fetch_history_events():
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        try:
            (inp,) = await client.data_converter.decode(payloads, [kind])
        except (ValidationError, ValueError, TypeError) as e:
            raise ResumeRefused(
                f"{workflow_id} never started: its input did not decode ({e})"
            ) from None
        return inp
    raise ResumeRefused(f"{workflow_id} has no history to resume from")


@dataclass(frozen=True)
class Resumption:
    handle: WorkflowHandle
    pattern: str
    """single or coordinator."""
    cancelled: list[str]
    """Sub-agents the ended run had left running, cancelled (`outlast.orphans`)."""


async def resume_agent(client: Client, workflow_id: str, message: str) -> Resumption:
    """Start the next run of the ended agent `workflow_id`, `message` its next turn.

    The sub-agents its ended run left running (a terminated or timed-out run stops none) are
    cancelled first, as the reaper would: the new run does not know them, and would hear of
    their ends as of strangers'. It is a signal-with-start: should another resume start a run
    between the last look and the start, the message goes to that run, as to any running one.

    Raises:
        ResumeRefused: an empty message, an agent `ended_run` refuses, or one that another
            resume started again meanwhile. Nothing was started.
    """
    if not message.strip():
        raise ResumeRefused("the message is empty: say what the agent should go on with")
    ended = await ended_run(client, workflow_id)
    cancelled = await stop_orphans(client, parents={workflow_id})
    if (await client.get_workflow_handle(workflow_id).describe()).run_id != ended.run_id:
        raise ResumeRefused(
            f"{workflow_id} was started again while this resume read it: `outlast show "
            f"{workflow_id}` shows it"
        )
    pattern = "coordinator" if ended.workflow_type == "CoordinatorWorkflow" else "single"
    root = ended.agent.workspace.root
    summary, details = start_metadata(pattern, message, root)
    handle = await client.start_workflow(
        ended.workflow_type,
        resume_input(ended),
        id=workflow_id,
        task_queue=ended.task_queue,
        result_type=AgentResult,
        start_signal="send_message",
        start_signal_args=[MailMessage(text=message)],
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        memo={"pattern": pattern, "workspace": root},
        static_summary=summary,
        static_details=details,
    )
    return Resumption(handle, pattern, [o.workflow_id for o in cancelled if o.cancelled])
