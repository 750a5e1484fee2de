"""Steering running work from the command line: `approve`, `reject`, `stop`, `kill`,
`background`, `send`."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import typer
from rich.markup import escape
from temporalio.api.enums.v1 import PendingWorkflowTaskState
from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError

from activities.resume import AGENT_TYPES
from agents.permissions import RESUME_MODES
from outlast.cli_base import (
    app,
    check_id,
    connect_or_fail,
    console,
    describe_or_fail,
    fail,
    no_worker_note,
    server_said,
)
from outlast.inspect import unanswered
from outlast.patterns import WORKFLOW_TYPES
from outlast.question_view import waiting_question
from outlast.retries import FAILING_TASK_ATTEMPTS
from outlast.updates import (
    NoAnswer,
    NotYetAnswered,
    handler_missing,
    no_answer_text,
    not_yet_text,
    update_within,
)
from workflows.contracts import (
    AgentStatus,
    BackgroundRequest,
    MailMessage,
    PlanDecision,
    PlanView,
    StopRequest,
)
from workflows.pattern_contracts import PipelineView, StageDecision, TeamMail

UPDATE_TIMEOUT = timedelta(seconds=30)
ATTEMPT_HELP = (
    "Pipeline: decide only if this attempt of the stage is the one waiting (a re-run is the "
    "next attempt), so a decision on output you read cannot land on a re-run you did not."
)
STOPPABLE = ("AgentWorkflow", "CoordinatorWorkflow", "PipelineWorkflow", "TeamWorkflow")
"""The workflow types with a graceful stop (`stop`, a team's `shutdown`)."""


@app.command()
def approve(
    workflow_id: str = typer.Argument(..., help="The agent (or pipeline) waiting for approval."),
    stage: str = typer.Argument(None, help="For a pipeline: the stage waiting for approval."),
    mode: str = typer.Option(None, help="Plan approval: the permission mode to continue in."),
    attempt: int = typer.Option(None, min=1, help=ATTEMPT_HELP),
) -> None:
    """Approve the plan an agent waits with at ExitPlanMode (or a pipeline stage)."""
    asyncio.run(
        _decide(
            workflow_id, stage, approve=True, feedback="", rerun=False, mode=mode, attempt=attempt
        )
    )


@app.command()
def reject(
    workflow_id: str = typer.Argument(..., help="The agent (or pipeline) waiting for approval."),
    stage: str = typer.Argument(None, help="For a pipeline: the stage waiting for approval."),
    feedback: str = typer.Option("", help="What to change; the agent (or stage) reads it."),
    rerun: bool = typer.Option(False, "--rerun", help="Pipeline: run the stage again."),
    attempt: int = typer.Option(None, min=1, help=ATTEMPT_HELP),
) -> None:
    """Send a plan back with feedback (the agent keeps planning), or reject a pipeline stage."""
    asyncio.run(
        _decide(workflow_id, stage, approve=False, feedback=feedback, rerun=rerun, attempt=attempt)
    )


async def _decide(
    workflow_id: str,
    stage: str | None,
    *,
    approve: bool,
    feedback: str,
    rerun: bool,
    mode: str | None = None,
    attempt: int | None = None,
) -> None:
    if rerun and stage is None:
        fail("--rerun is for a pipeline stage: name the stage.")
    if attempt is not None and stage is None:
        fail("--attempt is for a pipeline stage: name the stage.")
    if mode is not None and mode not in RESUME_MODES:
        fail(f"--mode {mode}: choose one of {', '.join(RESUME_MODES)}.")
    if mode is not None and stage is not None:
        fail("--mode is the mode an approved plan continues in; a pipeline stage has none.")
    # A closed workflow has nothing waiting; asking it would wait ~30 s for a worker to
    # answer the query of a run that no worker holds any more.
    waiting = "a plan" if stage is None else f"stage {stage}"
    # A plan's decision is a signal, which waits in history for a worker; a stage's is an
    # update, which needs one to answer.
    handle, kind = await running_workflow(
        workflow_id, f"; nothing in it waits for a decision on {waiting}", asks=stage is not None
    )
    if (why := decision_refusal(workflow_id, kind, stage)) is not None:
        if stage is None and kind == "PipelineWorkflow":
            why = await _name_the_stage(handle, workflow_id, approve) or why
        fail(why)  # asked, the workflow would answer with the SDK's words for a missing handler
    if stage is not None:
        decision = StageDecision(
            stage=stage, approve=approve, rerun=rerun, feedback=feedback, attempt=attempt
        )
        console.print(await run_update(handle, workflow_id, "decide_stage", decision))
        return
    try:
        # A live worker answers in moments; a dead one the server still lists never does.
        view = await handle.query("plan", result_type=PlanView, rpc_timeout=PLAN_QUERY_TIMEOUT)
    except RPCError as e:
        if not unanswered(e):
            fail(server_said(workflow_id, e))
        # No worker to ask which plan waits: the decision is queued for whichever does when
        # one takes the agent up (nothing can have changed it meanwhile), and the agent
        # refuses it, where `show` says so, if none does.
        name = "approve_plan" if approve else "reject_plan"
        try:
            await handle.signal(name, PlanDecision(feedback=feedback, target_mode=mode))
        except RPCError as sent:
            fail(server_said(workflow_id, sent))
        verb = "approval" if approve else "rejection"
        console.print(
            f"no worker answered for {workflow_id} within {PLAN_QUERY_TIMEOUT.seconds} s "
            f"({e.message}): the {verb} is queued, for the plan waiting when a worker takes "
            f"the agent up; `outlast show {workflow_id}` says what became of it. If no worker "
            "runs, start one with `outlast worker`."
        )
        return
    except WorkflowQueryFailedError as e:
        fail(f"{workflow_id} has no plan to decide on ({e}); for a pipeline, name the stage.")
    if view.pending is None:
        # Nothing is sent: a decision with nothing pending would only clutter the history.
        last = f"; plan {view.last_decided}" if view.last_decided else ""
        fail(
            f"no plan is waiting for approval in {workflow_id} (mode: "
            f"{view.mode or 'default'}{last})."
        )
    request = view.pending.request_id
    decision = PlanDecision(
        request_id=request, approve=approve, feedback=feedback, target_mode=mode
    )
    await _send_plan_decision(handle, workflow_id, decision)
    given = "with your feedback" if feedback else "with no feedback (the agent is told no reason)"
    verb = "approved" if approve else f"sent back {given}"
    console.print(f"plan {request} of {workflow_id} {verb}")


PLAN_QUERY_TIMEOUT = timedelta(seconds=10)


async def _send_plan_decision(handle, workflow_id: str, decision: PlanDecision) -> None:
    """As the update `decide_plan`, which says whether the decision was taken: another
    person's may have come first since the query (both were told theirs was). A worker of an
    earlier release has no such update: the signal then, as before."""
    try:
        await update_within(handle, "decide_plan", decision, result_type=str)
        return
    except WorkflowUpdateFailedError as e:
        if not handler_missing(e, "decide_plan"):
            fail(f"{workflow_id}: {getattr(e.cause, 'message', None) or e.cause or e}")
    except (NoAnswer, NotYetAnswered):
        fail(no_answer_text(workflow_id, "decision"))
    except RPCError as e:
        fail(server_said(workflow_id, e))
    try:
        await handle.signal("approve_plan" if decision.approve else "reject_plan", decision)
    except RPCError as e:
        fail(server_said(workflow_id, e))


async def _name_the_stage(handle, workflow_id: str, approve: bool) -> str | None:
    """For a pipeline decision without a stage: the command with the stage that waits (it
    said to look it up with `show`, a user test, 2026-12-06); None if none waits or no worker
    answers in time."""
    try:
        view = await handle.query(
            "pipeline", result_type=PipelineView, rpc_timeout=timedelta(seconds=3)
        )
    except (RPCError, WorkflowQueryFailedError):
        return None
    if not view.awaiting_approval:
        return None
    stage, attempt = view.awaiting_approval, view.awaiting_attempt or 1
    verb = "approve" if approve else "reject"
    return (
        f"{workflow_id} is a pipeline: name the stage. Stage {stage} (attempt {attempt}) "
        f"waits: outlast {verb} {workflow_id} {stage} --attempt {attempt}"
    )


PLANNERS = AGENT_TYPES
"""The workflow types whose agent may wait with a plan (`plan` query, `approve_plan`)."""


def decision_refusal(workflow_id: str, kind: str, stage: str | None) -> str | None:
    """Why `workflow_id`, a workflow of type `kind`, cannot take this decision, or None."""
    if stage is None and kind == "PipelineWorkflow":
        return (
            f"{workflow_id} is a pipeline: name the stage waiting for approval "
            f"(`outlast show {workflow_id}` shows it)."
        )
    if kind not in PLANNERS and kind != "PipelineWorkflow":
        return (
            f"{workflow_id} is {_a(kind)}, which has no stages and no plan of its own; approve "
            "the plan of the agent that waits with it (its workflow id is in `outlast show "
            f"{workflow_id}`)."
        )
    if stage is not None and kind != "PipelineWorkflow":
        return (
            f"{workflow_id} is {_a(kind)}, which has no stages; to decide on its plan, leave "
            "the stage out."
        )
    return None


def _a(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "AEIOU" else f"a {kind}"


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
            fail(f"{workflow_id} is a {workflow_type}, which has no graceful stop; use kill.")
        await handle.signal(name, StopRequest(reason=reason))
        console.print(
            f"asked {workflow_id} to stop after its current turn (a tool running now "
            "finishes first; `outlast kill` stops at once)"
        )

    asyncio.run(_main())


@app.command()
def kill(workflow_id: str = typer.Argument(..., help="The workflow to kill.")) -> None:
    """Cancel at once: running tools are killed, cleanup still runs."""

    async def _main() -> None:
        handle, kind = await running_workflow(workflow_id)
        if kind not in KILLABLE:
            fail(
                f"{workflow_id} is a {kind}, not an Outlast workflow; cancel it with "
                f"`temporal workflow cancel -w {workflow_id}` if that is what you mean."
            )
        await handle.cancel()
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
        console.print(f"{escape(which)} of {workflow_id} goes on in the background")

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
        ended = (
            f": a message reaches only a running agent. For an agent you started, `outlast "
            f'resume {workflow_id} "..."` goes on with it from the conversation it ended '
            f"with, which `outlast transcript {workflow_id}` shows"
        )
        handle, workflow_type = await running_workflow(workflow_id, ended)
        if to is not None and workflow_type != "TeamWorkflow":
            fail(f"--to names a team's member; {workflow_id} is {_a(workflow_type)}.")
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
                fail(no_answer_text(workflow_id, "message"))
            console.print(f"{workflow_id}: {said}", markup=False, highlight=False)
            return
        if workflow_type in ("AgentWorkflow", "CoordinatorWorkflow"):
            await handle.signal("send_message", MailMessage(text=text))
        else:
            fail(f"{workflow_id} is {_a(workflow_type)}; messages go to agents and teams.")
        console.print(f"message sent to {workflow_id}")
        if waits := await waits_for_the_person(handle, workflow_id):
            console.print(f"[yellow]{escape(waits)}[/]")

    asyncio.run(_main())


WAIT_QUERY = timedelta(seconds=1)


async def waits_for_the_person(handle, workflow_id: str) -> str | None:
    """What an agent a message was sent to waits for first, where that is the person: the
    message is read only once it goes on, which nothing had said (a user test). None too
    when no worker answers at once: the message was sent, and said so."""
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
    try:
        return await update_within(handle, name, payload, result_type=str)
    except WorkflowUpdateFailedError as e:
        fail(str(getattr(e.cause, "message", None) or e.cause or e))
    except NotYetAnswered:
        held = ": a decision on a stage that still runs applies when the stage ends"
        what = UPDATE_WHAT.get(name, "request")
        return not_yet_text(workflow_id, what, held if name == "decide_stage" else "")
    except NoAnswer:
        fail(no_answer_text(workflow_id, UPDATE_WHAT.get(name, "request")))
    except RPCError as e:
        fail(server_said(workflow_id, e))
    raise AssertionError("fail() exits")


async def running_workflow(workflow_id: str, closed_note: str = "", *, asks: bool = False):
    """The handle and type of a running workflow, or a clear refusal (`closed_note` added to
    the one for a closed workflow). With no worker polling its task queue: refused when the
    command `asks` the workflow (a query or an update waits for a worker's answer); said,
    and done anyway, for a signal or a cancel, which the workflow reads once one runs."""
    check_id(workflow_id)
    client = await connect_or_fail()
    handle = client.get_workflow_handle(workflow_id)
    desc = await describe_or_fail(handle)
    if desc.status is None or desc.status.name != "RUNNING":
        state = desc.status.name.lower() if desc.status else "unknown"
        fail(f"{workflow_id} is not running ({state}){closed_note}.")
    if note := await no_worker_note(client, desc):
        if asks:
            fail(f"{note} Then try again.")
        console.print(f"[yellow]{escape(note)}[/]")
    return handle, desc.workflow_type
