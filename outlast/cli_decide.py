"""Deciding from the command line: `approve` and `reject`, of a plan an agent waits with (the
update `decide_plan`) or of a pipeline stage (`decide_stage`)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import typer
from temporalio.client import WorkflowQueryFailedError, WorkflowUpdateFailedError
from temporalio.service import RPCError

from agents.permissions import RESUME_MODES
from outlast.api_errors import a_workflow
from outlast.cli_base import app, console, fail, not_answered, server_said
from outlast.cli_steer import PLANNERS, run_update, running_workflow
from outlast.silence import unanswered
from outlast.updates import (
    NoAnswer,
    NotYetAnswered,
    handler_missing,
    no_answer_text,
    not_yet_text,
    update_within,
)
from workflows.contracts import PlanDecision, PlanView
from workflows.pattern_contracts import PipelineView, StageDecision

ATTEMPT_HELP = (
    "Pipeline: decide only if this attempt of the stage is the one waiting (a re-run is the "
    "next attempt), so a decision on output you read cannot land on a re-run you did not."
)


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
        workflow_id, f"; nothing in it waits for a decision on {waiting}"
    )
    if (why := decision_refusal(workflow_id, kind, stage)) is not None:
        if stage is None and kind == "PipelineWorkflow":
            why = await _name_the_stage(handle, workflow_id, approve) or why
        fail(why)  # asked, the workflow would answer with the SDK's words for a missing handler
    if stage is not None:
        decision = StageDecision(
            stage=stage, approve=approve, rerun=rerun, feedback=feedback, attempt=attempt
        )
        if await _answers(handle, workflow_id):
            console.print(await run_update(handle, workflow_id, "decide_stage", decision))
            return
        # No worker to take an update, which the server holds in memory only (a restart
        # lost it): the signal waits in the history (`PipelineWorkflow.stage_decision`).
        try:
            await handle.signal("stage_decision", decision)
        except RPCError as sent:
            fail(server_said(workflow_id, sent))
        not_answered(queued_text(workflow_id, "approval" if approve else "rejection", stage))
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
        # Sent, not answered: 3, as every steering command the workflow has not answered.
        not_answered(queued_text(workflow_id, "approval" if approve else "rejection"))
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
    # The mode the agent goes on in, as the workflow decides it (`PlanControl.exit`).
    goes = mode or view.pre_plan_mode or "default"
    verb = f"approved; it goes on in {goes} mode" if approve else f"sent back {given}"
    console.print(f"plan {request} of {workflow_id} {verb}")


PLAN_QUERY_TIMEOUT = timedelta(seconds=10)


def queued_text(workflow_id: str, verb: str, stage: str | None = None) -> str:
    """A decision no worker answered for, sent as a signal: it waits in the history."""
    what = f"stage {stage}" if stage is not None else "the plan"
    return (
        # Not "within 10 s": a server that has seen no worker poll says so at once.
        f"no worker answered for {workflow_id}: the "
        f"{verb} is queued, for {what} waiting when a worker takes the "
        f"{'pipeline' if stage is not None else 'agent'} up; `outlast show {workflow_id}` says "
        "what became of it. If no worker runs, start one with `outlast worker`."
    )


async def _answers(handle, workflow_id: str) -> bool:
    """Whether a worker answers for the pipeline (its `pipeline` query) within the limit."""
    try:
        await handle.query("pipeline", result_type=PipelineView, rpc_timeout=PLAN_QUERY_TIMEOUT)
    except RPCError as e:
        if not unanswered(e):
            fail(server_said(workflow_id, e))
        return False
    except WorkflowQueryFailedError:
        return True  # a worker answered, if not this query: the update says what it has
    return True


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
    except NotYetAnswered:
        # Taken: "is a worker running?" would have the person send it again.
        console.print(not_yet_text(workflow_id, "decision"), markup=False, highlight=False)
        return
    except NoAnswer:
        not_answered(no_answer_text(workflow_id, "decision"))
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


def decision_refusal(workflow_id: str, kind: str, stage: str | None) -> str | None:
    """Why `workflow_id`, a workflow of type `kind`, cannot take this decision, or None."""
    if stage is None and kind == "PipelineWorkflow":
        return (
            f"{workflow_id} is a pipeline: name the stage waiting for approval "
            f"(`outlast show {workflow_id}` shows it)."
        )
    if kind not in PLANNERS and kind != "PipelineWorkflow":
        return (
            f"{workflow_id} is {a_workflow(kind)}, which has no stages and no plan of its own; "
            "approve the plan of the agent that waits with it (its workflow id is in `outlast show "
            f"{workflow_id}`)."
        )
    if stage is not None and kind != "PipelineWorkflow":
        return (
            f"{workflow_id} is {a_workflow(kind)}, which has no stages; to decide on its plan, "
            "leave the stage out."
        )
    return None
