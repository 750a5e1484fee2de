"""Steering running work from the command line: `stop`, `kill`, `background`, `send`
(deciding on plans and stages is `outlast/cli_decide.py`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from datetime import timedelta

import typer
from rich.markup import escape
from temporalio.api.enums.v1 import PendingWorkflowTaskState
from temporalio.client import (
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError

from activities.resume import AGENT_TYPES
from outlast.api_errors import a_workflow
from outlast.cli_base import (
    app,
    check_id,
    connect_or_fail,
    console,
    describe_or_fail,
    fail,
    no_worker_note,
    not_answered,
    server_said,
)
from outlast.end_reasons import cancel_requests
from outlast.kill_pending import (
    STOP_PENDING,
    kill_pending,
    members_stopping,
    no_mail_while_killed,
    stop_pending,
)
from outlast.patterns import WORKFLOW_TYPES
from outlast.question_view import waiting_question
from outlast.retries import FAILING_TASK_ATTEMPTS, failing_task
from outlast.updates import (
    Held,
    NoAnswer,
    NotYetAnswered,
    no_answer_text,
    not_yet_text,
    update_within,
)
from workflows.contracts import (
    AgentStatus,
    BackgroundRequest,
    MailMessage,
    PlanView,
    StopRequest,
)
from workflows.pattern_contracts import PipelineView, StageDecision, TeamMail

UPDATE_TIMEOUT = timedelta(seconds=30)
STAGE_ASK = timedelta(seconds=5)
"""How long `stop` asks a pipeline whether a stage runs, to say when it will end."""
STOPPABLE = ("AgentWorkflow", "CoordinatorWorkflow", "PipelineWorkflow", "TeamWorkflow")
"""The workflow types with a graceful stop (`stop`, a team's `shutdown`)."""
PLANNERS = AGENT_TYPES
"""The workflow types whose agent may wait with a plan (`plan` query, `approve_plan`)."""


@app.command()
def stop(
    workflow_id: str = typer.Argument(..., help="The agent, pattern or team to stop."),
    reason: str = typer.Option("", help="Why; recorded with the signal."),
) -> None:
    """Graceful stop: the agent finishes its current turn (a sync sub-agent it waits on, a
    pipeline's stage, a team's members theirs) and ends. `outlast kill` stops at once."""

    async def _main() -> None:
        handle, workflow_type = await running_workflow(workflow_id)
        name = "shutdown" if workflow_type == "TeamWorkflow" else "stop"
        if workflow_type not in STOPPABLE:
            # Anything else has no handler for it: Temporal would keep the signal unread.
            hint = ""
            if workflow_type == "VerifiedTaskWorkflow":
                # The README's way (a user test: the refusal named only kill).
                hint = (
                    f" To stop it after the implementer's current turn, stop the implementer: "
                    f"`outlast stop {workflow_id}/implementer` (the task ends failed, "
                    "unverified)."
                )
            elif workflow_type == "ForkJoinWorkflow":
                # Its forks are agents, which stop (a user test: only kill was named).
                hint = (
                    f" A fork stops after its current turn: `outlast stop {workflow_id}/fork-1` "
                    "(`outlast show` lists them); the join reports it stopped, with what it had "
                    "said."
                )
            fail(
                f"{workflow_id} is a {workflow_type}, which has no graceful stop; use kill." + hint
            )
        # What it will do is asked before the stop goes: a pipeline that waits for a decision
        # ends at once, one whose stage runs ends with that stage (not after its turn: the
        # stage went on for a minute while this said so; a user test).
        pipeline = workflow_type == "PipelineWorkflow"
        waits = await _stage_waiting(handle) if pipeline else None
        again = workflow_type in AGENT_TYPES and await stop_pending(handle)
        # A stop ends a question's wait at once: "after its current turn (a tool running
        # now finishes first ...)" told a person to wait for nothing (a user test).
        asks = (
            workflow_type in AGENT_TYPES
            and not again
            and await waiting_question(handle, rpc_timeout=STAGE_ASK) is not None
        )
        await handle.signal(name, StopRequest(reason=reason))
        if again:
            # A second stop said what the first had (a user test, 2026-12-06).
            said = (
                "to stop again: a stop was requested already, and it still ends after its "
                "current turn (its reason is now this one's, if given; `outlast kill` stops "
                "at once)"
            )
        elif waits:
            said = f"to stop: no stage runs ({waits}), so it ends now"
        elif asks:
            said = "to stop: it waits for answers to its questions, so it ends now, unanswered"
        elif pipeline:
            said = (
                "to stop when its running stage ends (no later stage starts; `outlast stop "
                f"{workflow_id}/STAGE` ends the stage after its current turn, `outlast kill` "
                "stops at once)"
            )
        else:
            said = (
                "to stop after its current turn (a tool running now finishes first; "
                "`outlast kill` stops at once)"
            )
        console.print(f"asked {workflow_id} {said}")
        await _warn_if_failing(handle, "the stop")

    asyncio.run(_main())


async def _warn_if_failing(handle: WorkflowHandle, what: str) -> None:
    """Said after a signal to a workflow whose workflow task keeps failing: the signal was
    taken, and is read only once a task of it runs, which may be never (`sent` alone read as
    done; a user test, 2026-12-07)."""
    try:
        line = await failing_task(await connect_or_fail(), await handle.describe())
    except RPCError:
        return
    if line is not None:
        console.print(
            f"[yellow]{escape(handle.id)}: {escape(line)}; {what} waits until one runs[/]"
        )


async def _stage_waiting(handle: WorkflowHandle) -> str | None:
    """What a pipeline waits for instead of a running stage (a decision), if it does: its
    stop then ends it at once. None when a stage runs, or it cannot tell."""
    try:
        view = await handle.query("pipeline", result_type=PipelineView, rpc_timeout=STAGE_ASK)
    except (RPCError, WorkflowQueryFailedError):
        return None
    if view.current is None and view.awaiting_approval:
        return f"stage {view.awaiting_approval} waits for a decision"
    return None


@app.command()
def kill(
    workflow_id: str = typer.Argument(..., help="The workflow to kill."),
    reason: str = typer.Option(
        "", help="Why; recorded with the cancel, and told to a sub-agent's parent."
    ),
) -> None:
    """Cancel at once: running tools are killed, cleanup still runs."""

    async def _main() -> None:
        handle, kind = await running_workflow(workflow_id)
        if kind not in KILLABLE:
            fail(
                f"{workflow_id} is a {kind}, not an Outlast workflow; cancel it with "
                f"`temporal workflow cancel -w {workflow_id}` if that is what you mean."
            )
        # A second kill while the first's cleanup runs said "killed" as if it were the first
        # (a user test, 2026-12-06); the server takes it without a word, its reason dropped.
        # The describe says; the history, read only then, has its reason.
        if await kill_pending(handle):
            try:  # the reason is in the history only: read when there is one to find
                earlier = await cancel_requests(handle)
            except RPCError:
                earlier = []
            why = f" (reason: {earlier[0]})" if earlier and earlier[0] else ""
            console.print(
                escape(
                    f"a kill of {workflow_id} was requested already{why}: this one adds "
                    "nothing, its reason is not recorded"
                )
            )
        await handle.cancel(reason=reason)
        console.print(escape(await kill_outcome(handle, KILL_WAIT_S)))

    asyncio.run(_main())


KILLABLE = (*WORKFLOW_TYPES.values(), "ShellTaskWorkflow")
"""Outlast's workflow types: `kill` cancels only these, as `stop` and `send` steer only
theirs (a cancel is not undone)."""
KILL_WAIT_S = 10.0
"""How long `kill` waits to say the workflow ended (its cleanup, a worktree's removal, may
take longer: then it says the kill is under way)."""


async def kill_outcome(handle, wait_s: float) -> str:
    """What became of a cancelled workflow: ended, still cleaning up, waiting for a worker, or
    unable to act on the cancel at all because its workflow task keeps failing (then only
    terminating ends it). A task that failed once (a worker lost mid-task) is given the
    wait to recover before terminate, which skips the cleanup, is suggested."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    first_attempt = None
    while True:
        desc = await handle.describe()
        if desc.status != WorkflowExecutionStatus.RUNNING:
            state = desc.status.name.lower() if desc.status else "closed"
            return f"killed {handle.id} ({state})"
        task = desc.raw_description.pending_workflow_task
        first_attempt = task.attempt if first_attempt is None else first_attempt
        failing = task.attempt >= FAILING_TASK_ATTEMPTS or (
            loop.time() >= deadline and task.attempt > max(first_attempt, 1)
        )
        if failing:
            return (
                f"cancel requested, but {handle.id} cannot act on it: its workflow task has "
                f"failed {task.attempt - 1} times (the worker's log says why). "
                f"`temporal workflow terminate -w {handle.id}` ends it, without its cleanup; "
                "its running sub-agents go on until a worker's reaper cancels them (within "
                "$OUTLAST_REAP_INTERVAL_S seconds; `outlast reap` does it at once)."
            )
        if loop.time() >= deadline:
            if task.state == PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED:
                return f"cancel requested: {handle.id} ends once a worker takes it up"
            return (
                f"cancel requested: {handle.id} is ending (running tools are killed, cleanup "
                f"runs); `outlast show {handle.id}` shows when it has"
            )
        await asyncio.sleep(0.2)


@app.command()
def background(
    workflow_id: str = typer.Argument(..., help="The agent waiting on a sub-agent."),
    agent_id: str = typer.Argument(
        None, help="The sub-agent, by id or name (default: every one it waits on)."
    ),
) -> None:
    """Stop waiting on a sub-agent: it goes on in the background and its end comes as a
    notification (the live tree's hint names this command when it has waited a while)."""

    async def _main() -> None:
        handle, kind = await running_workflow(workflow_id)
        if kind not in PLANNERS:
            fail(f"{workflow_id} is a {kind}; only an agent waits on sub-agents.")
        if await _is_teammate(handle):
            # The workflow refuses it too, into its refused signals; said here at once.
            fail(f"{workflow_id} is a teammate: its sub-agents run synchronously (R73).")
        waiting = await _sync_children(handle)
        if waiting is not None and agent_id is not None and agent_id not in waiting:
            named = ", ".join(waiting) or "none"
            fail(f"{workflow_id} waits on no sub-agent {agent_id} (it waits on: {named}).")
        if waiting == []:
            fail(f"{workflow_id} waits on no sub-agent now.")
        await handle.signal("background", BackgroundRequest(agent_id=agent_id))
        which = agent_id or "every sub-agent it waits on"
        if waiting is None:
            # Nothing answered: it said the sub-agents went on in the background, which no
            # worker had done (a user test, 2026-12-06).
            not_answered(
                f"{workflow_id} did not answer: the request for {which} to go on in the "
                "background is queued for when a worker takes the agent up (is one running? "
                f"`outlast worker`); `outlast show {workflow_id}` says what became of it."
            )
        # "every sub-agent it waits on of ID goes on" (a user test, 2026-12-06).
        said = (
            f"{agent_id} of {workflow_id} goes on in the background"
            if agent_id
            else f"every sub-agent {workflow_id} waited on goes on in the background"
        )
        console.print(escape(said))

    asyncio.run(_main())


async def _is_teammate(handle) -> bool:
    """Whether the agent is a team's member: its parent is a TeamWorkflow."""
    parent = (await handle.describe()).parent_id
    if not parent:
        return False
    client = await connect_or_fail()
    try:
        return (await client.get_workflow_handle(parent).describe()).workflow_type == "TeamWorkflow"
    except RPCError:
        return False


async def _sync_children(handle) -> list[str] | None:
    """The running sync sub-agents the agent waits on; None when it does not answer."""
    try:
        status = await handle.query("status", result_type=AgentStatus, rpc_timeout=UPDATE_TIMEOUT)
    except (RPCError, WorkflowQueryFailedError):
        return None
    running = [c for c in status.children if c.status == "running" and c.mode == "sync"]
    return [c.agent_id for c in running] + [c.name for c in running if c.name]


@app.command()
def send(
    workflow_id: str = typer.Argument(..., help="The agent (or team) to message."),
    text: str = typer.Argument(..., help="The message; read at the agent's next turn."),
    to: str = typer.Option(None, help="For a team: the member to message (default: lead)."),
) -> None:
    """Send a message to a running agent (or to a member of a team)."""
    if not text.strip():
        fail("the message is empty.")
    if to is not None and not to.strip():
        # An empty name is a slip, not a choice of the lead: that is what leaving it out means.
        fail("--to is empty: name a member, or `*` for all of them (leave --to out for the lead).")

    async def _main() -> None:
        # A user test (2026-12-05): "is not running (completed)" left a person with a long
        # task stopped no way to go on, and no word of what there is.
        def ended(desc) -> str:
            # Only what `outlast resume` takes is pointed to it (it refused the others).
            if "/" in workflow_id or desc.parent_id:
                return (
                    ": a message reaches only a running agent, and this one is its parent's "
                    "or its pattern's to go on with (a sub-agent's parent continues it with "
                    f"SendMessage; `outlast resume` takes top-level agents only). `outlast "
                    f"transcript {workflow_id}` shows what it said"
                )
            if desc.workflow_type not in ("AgentWorkflow", "CoordinatorWorkflow"):
                return (
                    f": a message reaches only a running agent or team. `outlast show "
                    f"{workflow_id}` says how it ended; a new `outlast run` starts the task over"
                )
            return (
                f": a message reaches only a running agent. `outlast resume {workflow_id} "
                f'"..."` goes on with it from the conversation it ended with, which `outlast '
                f"transcript {workflow_id}` shows"
            )

        handle, workflow_type = await running_workflow(workflow_id, ended)
        if to is not None and workflow_type != "TeamWorkflow":
            fail(f"--to names a team's member; {workflow_id} is {a_workflow(workflow_type)}.")
        if workflow_type == "TeamWorkflow":
            mail = TeamMail(to="lead" if to is None else to, text=text)
            try:
                # The team's answer names who it reached (`Message sent to a, c.`).
                said = await update_within(handle, "message_member", mail, result_type=str)
            except WorkflowUpdateFailedError as e:
                fail(str(getattr(e.cause, "message", None) or e.cause))
            except NotYetAnswered:
                said = not_yet_text(workflow_id, "message")
                console.print(said, markup=False, highlight=False)
                return
            except NoAnswer:
                # `show` does not list messages: it pointed there (a user test, 2026-12-07).
                member = {None: "<lead>", "*": "<member>"}.get(to, to)
                check = (
                    f"check `outlast transcript {workflow_id}/{member}` (it shows the message "
                    "once delivered)"
                )
                not_answered(no_answer_text(workflow_id, "message", check))
            console.print(f"{workflow_id}: {said}", markup=False, highlight=False)
            for name in await members_stopping(handle, to):
                console.print(f"[yellow]{escape(name)}: {STOP_PENDING}[/]")
            return
        if workflow_type in ("AgentWorkflow", "CoordinatorWorkflow"):
            if await kill_pending(handle):
                sub = "/" in workflow_id
                resume = (
                    "its parent continues it with SendMessage."
                    if sub
                    else f'`outlast resume {workflow_id} "..."` goes on with it.'
                )
                fail(no_mail_while_killed(workflow_id, resume))
            await handle.signal("send_message", MailMessage(text=text))
        else:
            forks = (
                f" Its forks are agents: `outlast send {workflow_id}/fork-1 ...` (`outlast show` "
                "lists them)."
                if workflow_type == "ForkJoinWorkflow"
                else ""
            )
            fail(
                f"{workflow_id} is {a_workflow(workflow_type)}; messages go to agents and teams."
                + forks
            )
        console.print(f"message sent to {workflow_id}")
        await _warn_if_failing(handle, "the message")
        if waits := await waits_for_the_person(handle, workflow_id):
            console.print(f"[yellow]{escape(waits)}[/]")

    asyncio.run(_main())


WAIT_QUERY = timedelta(seconds=1)


async def waits_for_the_person(handle, workflow_id: str) -> str | None:
    """What an agent a message was sent to waits for first, where that is the person: the
    message is read only once it goes on, which nothing had said (a user test). None too
    when no worker answers at once: the message was sent, and said so."""
    if await stop_pending(handle):
        # It ends at its turn's end and reads no more mail: `send` said only "message sent"
        # (a user test, 2026-12-06).
        said = STOP_PENDING
        if "/" in workflow_id:  # a sub-agent or a member: its parent or pattern goes on
            return said
        return f'{said}; once it has ended, `outlast resume {workflow_id} "..."` sends it first'
    try:
        plan = await handle.query("plan", result_type=PlanView, rpc_timeout=WAIT_QUERY)
    except (RPCError, WorkflowQueryFailedError):
        return None
    if plan.pending is not None and plan.pending.approver == "the user":
        return (
            f"it waits for its plan's approval first (`outlast approve {workflow_id}` or "
            "`outlast reject`): the message is read once it goes on"
        )
    if await waiting_question(handle, WAIT_QUERY):
        return (
            f"it waits for answers to its questions first (`outlast answer {workflow_id}`): "
            "the message is read once it goes on"
        )
    return None


UPDATE_WHAT = {"decide_stage": "decision", "answer_question": "answers"}


async def run_update(handle, workflow_id: str, name: str, payload: object) -> str:
    """The update's answer, or a one-sentence refusal: what the workflow's validator said,
    or that no worker answered in time."""
    early = None
    if name == "decide_stage":
        early = functools.partial(held_note, handle, workflow_id, payload)
    try:
        return await update_within(handle, name, payload, early, result_type=str)
    except WorkflowUpdateFailedError as e:
        fail(str(getattr(e.cause, "message", None) or e.cause or e))
    except Held as e:
        return str(e)
    except NotYetAnswered:
        held = (
            ": a decision on a stage that still runs is taken when the stage ends, if the "
            "stage then waits for one (an approval stage, or one a person stopped)"
        )
        what = UPDATE_WHAT.get(name, "request")
        return not_yet_text(workflow_id, what, held if name == "decide_stage" else "")
    except NoAnswer:
        not_answered(no_answer_text(workflow_id, UPDATE_WHAT.get(name, "request")))
    except RPCError as e:
        fail(server_said(workflow_id, e))
    raise AssertionError("fail() exits")


async def held_note(handle, workflow_id: str, decision: StageDecision) -> str | None:
    """What a pipeline does with `decision` while its stage still runs: holds it (None when
    it does not, or cannot tell)."""
    try:
        view = await handle.query("pipeline", result_type=PipelineView, rpc_timeout=WAIT_QUERY)
    except (RPCError, WorkflowQueryFailedError):
        return None
    if view.current != decision.stage or not view.held_decisions:
        return None
    return (
        f"{workflow_id}: stage {decision.stage} still runs; the decision is held and taken "
        f"when it ends (`outlast show {workflow_id}` says what became of it)"
    )


async def running_workflow(
    workflow_id: str,
    closed_note: str | Callable[[WorkflowExecutionDescription], str] = "",
    *,
    asks: bool = False,
):
    """The handle and type of a running workflow, or a clear refusal (`closed_note`, or what
    it makes of the workflow's description, added to the one for a closed workflow). With no
    worker polling its task queue: refused when the command `asks` the workflow (a query or
    an update waits for a worker's answer); said, and done anyway, for a signal or a cancel,
    which the workflow reads once one runs."""
    check_id(workflow_id)
    client = await connect_or_fail()
    handle = client.get_workflow_handle(workflow_id)
    desc = await describe_or_fail(handle)
    if desc.status is None or desc.status.name != "RUNNING":
        state = desc.status.name.lower() if desc.status else "unknown"
        note = closed_note(desc) if callable(closed_note) else closed_note
        fail(f"{workflow_id} is not running ({state}){note}.")
    if note := await no_worker_note(client, desc):
        if asks:
            fail(f"{note} Then try again.")
        console.print(f"[yellow]{escape(note)}[/]")
    return handle, desc.workflow_type
