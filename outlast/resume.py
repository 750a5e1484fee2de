"""Resuming a top-level agent that ended: a new run of its workflow id that goes on from the
conversation it ended with, the person's message its next turn.

A parent resumes its sub-agent so with SendMessage (R66, `workflows/agent_control.py`); this is
the same for the agent a person started, as Claude Code's `--resume` continues a session.
Its run records none of this: everything is read from the ended run's history (its input, its
result or last model call), so the resume needs no worker until the new run starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import os
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
)
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from activities import run_history as history
from activities.run_history import CONVERSATION, conversation_of, last_results
from activities.store import default_store
from activities.transcripts import load
from agents.spawn import not_found_message
from agents.transcript import TranscriptRef
from outlast.end_reasons import why_it_ended
from outlast.orphans import stop_orphans
from outlast.runner import local_definitions
from outlast.start_metadata import start_metadata
from outlast.stopped_with_it import (
    stopped_by_the_end,
    stopped_note,
    unstarted_note,
    unstarted_of,
)
from outlast.worktree_left import left_worktree_note
from workflows import search_attributes as sa
from workflows.contracts import AgentInput, AgentResult, MailMessage, host_task_queue
from workflows.pattern_contracts import CoordinatorInput
from workflows.resumed import Resumed, resumed_from

logger = logging.getLogger(__name__)


class ResumeRefused(ValueError):
    """Nothing was started; the message says why and what there is instead."""


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
    closed_at: datetime | None = None
    """When that run closed."""
    stopped_children: list[str] | None = None
    """The sub-agents a completed run's result says its end stopped; None for a run that
    ended with no result (killed, failed, terminated)."""
    unanswered: tuple[str, ...] = ()
    """Messages that run never read (`RunEnd.unanswered`): the next run's message carries
    them first."""
    unstarted: tuple[str, ...] = ()
    """A coordinator's workers that were queued when that run ended and never started."""


def resume_input(ended: Ended, max_turns: int | None = None) -> AgentInput | CoordinatorInput:
    """The new run's input: the agent as it was started, going on from its conversation in
    the mode it ended in, with the files it had read still read (R27), one generation on;
    with `max_turns` its own turn limit, else the ended run's. The message comes as mail
    (the start's signal), as a parent's SendMessage does."""
    turns = {} if max_turns is None else {"max_turns": max_turns}
    if isinstance(ended.started, CoordinatorInput):
        # Its own continue-as-new's agent stays behind: the run makes its agent from this.
        return ended.started.model_copy(update={"agent": None, "resumed": ended.resumed, **turns})
    return ended.resumed.applied_to(ended.agent).model_copy(update=turns)


def max_turns_refusal(max_turns: object) -> str | None:
    """Why `max_turns` is no turn limit for a resumed run (None: it is one, or not given)."""
    if max_turns is None or (
        isinstance(max_turns, int) and not isinstance(max_turns, bool) and max_turns >= 1
    ):
        return None
    return f"max_turns: a whole number of turns, 1 or more, not {max_turns!r}"


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
        # It named no team nor member, and sent to a team that had ended (a user test).
        team, name = inp.team.workflow_id, inp.name or workflow_id.rsplit("/", 1)[-1]
        return (
            f"{workflow_id} is a member of team {inp.team.team_name!r} ({team}), which steers "
            f"it: `outlast send {team} --to {name} ...` messages it while both run; a member "
            f"that has ended goes on no more (`outlast show {team}` has what each did, and a "
            "new `outlast run` starts the task over)"
        )
    parent = inp.parent.workflow_id if inp.parent else inp.lineage.parent_workflow_id
    if parent and inp.lineage.pattern == "fork-join":
        # A fork-join has no SendMessage (a user test, 2026-12-07).
        return (
            f"{workflow_id} is a fork of fork-join {parent}, which goes on with none of its "
            f"forks; `outlast show {parent}` has what each did, and a new `outlast run` "
            "starts the task over"
        )
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
    started = await started_input(client, handle, workflow_id, RESUMABLE[desc.workflow_type])
    agent = _agent_of(started)
    if (why := refusal_for_input(workflow_id, agent)) is not None:
        raise ResumeRefused(why)
    return await run_end(client, desc, started)


REFUSED_STARTS = ("InvalidAgentInput", "InvalidWorkflowInput")
"""The failures of a run whose input was refused: it "ended before its first model call
answered" said nothing of why (a user test, 2026-12-07)."""


async def _start_refused(client: Client, desc: WorkflowExecutionDescription) -> str | None:
    """The refusal's words, if the run failed because its input was refused."""
    if desc.status != WorkflowExecutionStatus.FAILED:
        return None
    handle = client.get_workflow_handle(desc.id, run_id=desc.run_id)
    why, kind = await why_it_ended(handle, desc.status)
    return why if kind in REFUSED_STARTS and why else None


async def run_end(
    client: Client,
    desc: WorkflowExecutionDescription,
    started: AgentInput | CoordinatorInput,
) -> Ended:
    """What the closed run `desc` (started with `started`) left for the next.

    Raises:
        ResumeRefused: it left no conversation to go on from."""
    agent = _agent_of(started)
    end = await history.run_end(client, desc)
    resumed = resumed_from(end, agent)
    if resumed.transcript.head is None:
        if refused := await _start_refused(client, desc):
            raise ResumeRefused(
                f"{desc.id} was refused at its start ({refused}): there is no conversation "
                "to go on from; start it again with an input that fits"
            )
        # A stop, a kill or a failure before the model first answered: the task is in no
        # conversation yet, and a run from an empty one would have the message only.
        raise ResumeRefused(
            f"{desc.id} ended before its first model call answered: there is no "
            "conversation to go on from; a new `outlast run` starts the task over"
        )
    return Ended(
        workflow_type=desc.workflow_type,
        started=started,
        agent=agent,
        task_queue=desc.task_queue,
        run_id=desc.run_id,
        resumed=resumed,
        closed_at=desc.close_time,
        stopped_children=_stopped_children(end.result),
        unanswered=tuple(end.unanswered),
        unstarted=tuple(unstarted_of(end.result, await desc.memo())),
    )


def _stopped_children(result: object) -> list[str] | None:
    if not isinstance(result, dict):
        return None
    said = result.get("stopped_children") or []
    return [str(name) for name in said] if isinstance(said, list) else []


def _agent_of(started: AgentInput | CoordinatorInput) -> AgentInput:
    if isinstance(started, AgentInput):
        return started
    # Here only, as the carry's module.
    from workflows.coordinator import coordinator_agent_input

    return coordinator_agent_input(started)


async def started_input(
    client: Client, handle: WorkflowHandle, workflow_id: str, kind: type
) -> AgentInput | CoordinatorInput:
    async for event in handle.fetch_history_events():
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        try:
            (inp,) = await client.data_converter.decode(payloads, [kind])
        except ApplicationError as e:
            # Outlast's converter refuses an input that does not fit as this, to end the
            # workflow with it: it reached `outlast resume` as a traceback (a user test).
            raise ResumeRefused(
                f"{workflow_id} never started: its input did not decode ({e.message})"
            ) from None
        except (ValidationError, ValueError, TypeError) as e:
            raise ResumeRefused(
                f"{workflow_id} never started: its input did not decode ({e})"
            ) from None
        return inp
    raise ResumeRefused(f"{workflow_id} has no history to resume from")


CHILDREN_CLOSE_S = 30.0
"""How long a resume waits for the sub-agents it cancelled to close (their cleanup: a tool
killed, a worktree removed); after that it starts anyway."""


async def closed(client: Client, workflow_ids: list[str], within_s: float) -> None:
    """Returns once every one of `workflow_ids` has closed, however it ended, or after
    `within_s`: each run's end is long-polled, as `agents.await_closed` does (a poll that
    fails, the server away, counts as closed: the resume goes on)."""

    async def one(workflow_id: str) -> None:
        with contextlib.suppress(Exception):
            await client.get_workflow_handle(workflow_id).result(follow_runs=False)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*map(one, workflow_ids)), within_s)


def carried_line(text: str) -> str:
    """How `resume` says that `text`, which the ended run never read, goes first in the next
    run's message: its own mail, or a sub-agent's or background command's end
    (`AgentResult.undelivered`)."""
    said = " ".join(text.split())
    if said.startswith("<task-notification>"):
        task = said.split("<task-id>", 1)[-1].split("</task-id>", 1)[0]
        kind = "background command" if "<summary>Background command" in said else "sub-agent"
        summary = said.split("<summary>", 1)[-1].split("</summary>", 1)[0]
        if kind == "sub-agent" and summary.startswith('Agent "') and '" ' in summary:
            # By what it was asked too: its id alone said little (a user test, 2026-12-07).
            task += f" ({html.unescape(summary[6 : summary.rindex(chr(34)) + 1])})"
        return (
            f"the ended run had not read {kind} {task}'s end: it goes first in this run's message"
        )
    said = said if len(said) <= 80 else said[:77] + "..."
    return f"the ended run had not read its message {said!r}: it goes first in this run's message"


@dataclass(frozen=True)
class Resumption:
    handle: WorkflowHandle
    pattern: str
    """single or coordinator."""
    cancelled: list[str]
    """Sub-agents the ended run had left running, cancelled (`outlast.orphans`)."""
    carried: tuple[str, ...] = ()
    """The ended run's messages it never read, sent first in the new run's."""
    unstarted: tuple[str, ...] = ()
    """Its queued workers the ended run never started, named in the new run's message."""


async def worktree_note(ended: Ended) -> str | None:
    """Where the resumed agent works, if its last run ended in a worktree session; None
    too where its conversation is not in this machine's store, or cannot be read: a note,
    never a reason to refuse. (Not after a compaction that summed the session up.)"""
    try:
        messages = await asyncio.to_thread(load, default_store(), ended.resumed.transcript)
        here = ended.agent.workspace.host_queue == this_host_queue()
        return left_worktree_note(messages, ended.agent.workspace.root, here)
    except Exception as e:  # noqa: BLE001 - a store of another release, a damaged blob
        logger.info("no worktree note for the resume: %s", e)
        return None


def this_host_queue() -> str:
    return host_task_queue(os.environ.get("OUTLAST_HOST_ID") or socket.gethostname())


def definition_gone(workflow_id: str, agent: AgentInput) -> str | None:
    """Why the ended agent cannot go on here: its type is defined by no file any more (its
    `.claude/agents/*.md` was removed, renamed or broken), where its checkout's host is
    this machine. The new run was started and failed at once, and `transcript` then showed
    no conversation (a user test, 2026-12-07). None where it can, or where this cannot
    tell: a definition carried in its input, a coordinator's own, a checkout elsewhere."""
    root = Path(agent.workspace.root)
    here = this_host_queue()
    carried = agent.definition is not None or agent.definitions is not None
    if carried or agent.mode == "coordinator" or agent.workspace.host_queue != here:
        return None
    if not root.is_dir() or agent.agent_type in {d.agent_type for d in agent.session_definitions}:
        return None
    definitions = local_definitions(root, agent.config)
    if agent.agent_type in definitions.names():
        return None
    why = not_found_message(agent.agent_type, definitions.names(), definitions.errors)
    return (
        f"{workflow_id} cannot go on as a {agent.agent_type} agent: {why.rstrip('.')}. Restore "
        "or fix its definition, then resume it"
    )


async def resume_agent(
    client: Client,
    workflow_id: str,
    message: str,
    ended: Ended | None = None,
    *,
    max_turns: int | None = None,
) -> Resumption:
    """Start the next run of the ended agent `workflow_id`, `message` its next turn, with
    `max_turns` its turn limit (None: the ended run's; one that ran out of turns had no
    other way to get more).

    The sub-agents its ended run left running (a terminated or timed-out run stops none) are
    cancelled first, as the reaper would: the new run does not know them, and would hear of
    their ends as of strangers'. The message ends with a note naming them, and those its
    end stopped, whose notifications will not come (outlast/stopped_with_it.py). It is a
    signal-with-start: should another resume start a run
    between the last look and the start, the message goes to that run, as to any running one.

    Raises:
        ResumeRefused: an empty message, an agent `ended_run` refuses, or one that another
            resume started again meanwhile. Nothing was started.
    """
    if not message.strip():
        raise ResumeRefused("the message is empty: say what the agent should go on with")
    if refusal := max_turns_refusal(max_turns):
        raise ResumeRefused(refusal)
    # `ended`: read already (`outlast resume` reads it before it asks for the model's key);
    # a run started since is refused below, as for any other resume.
    ended = ended or await ended_run(client, workflow_id)
    if not isinstance(ended.started, CoordinatorInput) and (
        gone := definition_gone(workflow_id, ended.agent)
    ):
        raise ResumeRefused(gone)
    # Before anything changes: it only reads.
    left_worktree = await worktree_note(ended)
    cancelled = await stop_orphans(client, parents={workflow_id})
    # Closed before the new run can look them up: one still cleaning up was found running,
    # and a SendMessage to it was refused or queued to a dying agent (CI, 2026-12-06).
    await closed(client, [o.workflow_id for o in cancelled if o.cancelled], CHILDREN_CLOSE_S)
    if (await client.get_workflow_handle(workflow_id).describe()).run_id != ended.run_id:
        raise ResumeRefused(
            f"{workflow_id} was started again while this resume read it: `outlast show "
            f"{workflow_id}` shows it"
        )
    stopped = await stopped_by_the_end(
        client,
        workflow_id,
        ended.closed_at,
        [o.workflow_id for o in cancelled if o.cancelled],
        told=ended.stopped_children,
    )
    notes = [
        stopped_note(stopped),
        unstarted_note(list(ended.unstarted)),
        left_worktree,
    ]
    told = "\n\n".join([message, *filter(None, notes)])
    # Its own mail, which it ended without answering: before this, as it came first.
    told = "\n\n".join([*ended.unanswered, told])
    pattern = "coordinator" if ended.workflow_type == "CoordinatorWorkflow" else "single"
    root = ended.agent.workspace.root
    summary, details = start_metadata(pattern, message, root)
    # Its attributes from the start, as `outlast run` starts a pattern with its own: until a
    # worker took it up, `ls` read the new run as another agent, not as run N of this one.
    # Those the ended run settled only: the rest (its session's id among them) are drawn by
    # the workflow, which upserts them all.
    attributes = None
    if ended.agent.config.search_attributes:
        attributes = TypedSearchAttributes(
            [
                SearchAttributePair(sa.PATTERN, pattern),
                SearchAttributePair(sa.AGENT_ID, ended.resumed.agent_id),
                SearchAttributePair(sa.AGENT_TYPE, ended.agent.agent_type),
                SearchAttributePair(sa.RUN_GENERATION, ended.resumed.run_generation + 1),
            ]
        )
    handle = await client.start_workflow(
        ended.workflow_type,
        resume_input(ended, max_turns),
        search_attributes=attributes,
        id=workflow_id,
        task_queue=ended.task_queue,
        result_type=AgentResult,
        start_signal="send_message",
        start_signal_args=[MailMessage(text=told)],
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        memo={"pattern": pattern, "workspace": root},
        static_summary=summary,
        static_details=details,
    )
    return Resumption(
        handle,
        pattern,
        [o.workflow_id for o in cancelled if o.cancelled],
        ended.unanswered,
        ended.unstarted,
    )
