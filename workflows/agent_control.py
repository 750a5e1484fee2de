"""`SendMessage` and `TaskStop` as the workflow carries them out (R64-R67).

A running target gets a `send_message` signal and reads it at its next turn boundary; a
finished one is resumed as a new run of the same workflow id, from its transcript. TaskStop
is Temporal cancellation of the target, which reaches its tools through heartbeats; so is an
ending agent's stop of the background sub-agents it leaves running (R92).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents.control_tools import SendMessageInput, TaskStopInput
from agents.messages import ToolResultBlock
from agents.spawn import definitions_for_child
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.resume import AgentControl, ResumeRequest, ResumeResult

from workflows.contracts import MailMessage, ParentLink
from workflows.earlier_children import earlier_child
from workflows.phases import STOP_STARTING_WORKER
from workflows.registry import ChildTask
from workflows.shell_task import stop_shell, stop_shells
from workflows.signals import cancel_workflow, signal_workflow
from workflows.subagents import SubAgents
from workflows.turns import ValidCall, error_result

END_STOPS_CHILDREN = "end-stops-children"
"""Patch id: an agent that is killed, fails, is stopped or spends its turns stops the
background sub-agents it leaves running (R92). Started with ABANDON (so a continue-as-new
keeps them), they had gone on working, editing the checkout, for a parent that was gone."""
END_WAITS_FOR_STARTS = "end-waits-for-starts"
"""Patch id: an agent that ends with a sub-agent's start under way (a coordinator's queued
worker leaving the queue) waits until it is registered and stops it with the others; it
ended first, and the worker, started all the same, ran on for no one."""

START_WAIT = timedelta(minutes=3)
"""How long an ending agent waits for a sub-agent's start under way (a worktree's creation
takes up to two minutes an attempt)."""

MAIL_AFTER_STOP = "mail-after-stop-resumes"
"""Patch: SendMessage to an agent that TaskStop is stopping waits for its end and resumes it
with the message (R66), as after any end; the message went to the ending run, which never
reads mail again, and the tool said it was queued."""
STOPPING_WAIT = timedelta(minutes=1)
"""How long SendMessage waits for a stopped agent's end (its kill reaches tools at once)."""

RESUME_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}


def _ok(call: ValidCall, text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=call.block.id, content=text)


async def task_stop(agents: SubAgents, call: ValidCall) -> ToolResultBlock:
    inp: TaskStopInput = call.input  # type: ignore[assignment]
    if (shell := agents.registry.shells.find(inp.target)) is not None:
        if shell.status != "running":
            return _ok(
                call,
                f"Background command {shell.shell_id} is not running (status: {shell.status}); "
                "nothing to stop.",
            )
        await stop_shell(shell)
        return _ok(
            call,
            f'Stopped background command {shell.shell_id} ("{shell.description}"). Its '
            f"notification will follow; its output so far is in {shell.output_file}",
        )
    if queued := agents.phases.cancel(inp.target):
        return _ok(
            call,
            f'Removed queued worker {queued.agent_id} ("{queued.label}") from the queue; it '
            "had not started, so nothing ran and no notification will follow.",
        )
    task = agents.registry.find(inp.target)
    if task is None and (starting := agents.phases.starting_claim(inp.target)) is not None:
        if versions.patched(STOP_STARTING_WORKER):
            agents.phases.stop_at_start.add(starting.agent_id)
            return _ok(
                call,
                f'Worker {starting.agent_id} ("{starting.label}") was starting: it is stopped '
                "as soon as it has started. Its notification will follow; you can continue it "
                "later with SendMessage.",
            )
    if task is None:
        return error_result(call.block, f"No task found with ID: {inp.target}")
    if task.status != "running":
        return _ok(
            call, f"Task {task.agent_id} is not running (status: {task.status}); nothing to stop."
        )
    task.stop_requested = True
    await cancel_workflow(task.workflow_id)
    return _ok(
        call,
        f'Stopped agent {task.agent_id} ("{task.description}"). Its notification will follow; '
        "you can continue it later with SendMessage.",
    )


async def stop_background_children(agents: SubAgents) -> list[str]:
    """Cancel every background sub-agent and command still running, as TaskStop would, before
    the agent ends for good, and name them (for its result); each cancels its own in turn,
    so the whole tree goes. Sync children are not here: a cancelled wait cancels its child
    (`SubAgents`), and no other end leaves one running."""
    agents.phases.closing = True
    # Asked only when a start is under way, so other agents record no marker.
    if agents.starting() and versions.patched(END_WAITS_FOR_STARTS):
        try:
            # Bounded: a start held up by a worktree whose host is gone must not hold the
            # end up for good.
            await workflow.wait_condition(lambda: not agents.starting(), timeout=START_WAIT)
        except TimeoutError:
            workflow.logger.warning("ending with starts still under way: %s", agents.starting())
    # Background commands exist only in runs that know to stop them (`bash-background`).
    shells = await stop_shells(agents.registry)
    running = [t for t in agents.registry.running() if t.mode == "background"]
    # Asked only when there is something to stop, so other agents record no marker.
    if not running or not versions.patched(END_STOPS_CHILDREN):
        return shells
    for task in running:
        task.stop_requested = True
    cancels = [cancel_workflow(t.workflow_id) for t in running]
    # One that cannot be sent must not keep the others from going, nor this agent's end.
    outcomes = await asyncio.gather(*cancels, return_exceptions=True)
    for task, failed in zip(running, outcomes, strict=True):
        if isinstance(failed, Exception):
            workflow.logger.warning("could not stop %s: %s", task.workflow_id, failed)
    return [*shells, *(t.name or t.agent_id for t in running)]


async def send_message(agents: SubAgents, call: ValidCall, sender: str) -> ToolResultBlock:
    inp: SendMessageInput = call.input  # type: ignore[assignment]
    ctx = agents.ctx
    assert ctx is not None
    mail = MailMessage(text=inp.text, sender=sender, summary=inp.summary, id=call.block.id)
    parent = ctx.parent
    if parent is not None and inp.to in ("main", parent.agent_id):
        try:
            await signal_workflow(parent.workflow_id, "send_message", mail)
        except ApplicationError:
            return error_result(call.block, f"{inp.to} has ended; nobody is there to read it.")
        return _ok(call, f"Message queued for delivery to {inp.to} at its next tool round.")
    task = agents.registry.find(inp.to) or await earlier_child(agents, inp.to)
    if isinstance(task, str):
        return error_result(call.block, task)
    if task is None:
        names = [t.name or t.agent_id for t in agents.registry.tasks.values()]
        if ctx.team is not None:  # a teammate's misspelt peer: its team is who it can reach
            names = [*(m for m in ctx.team.members if m != sender), "*", *names]
        known = ", ".join(names) or "none"
        return error_result(
            call.block, f"No agent named or with ID '{inp.to}'. Known agents: {known}"
        )
    if task.status == "running" and task.stop_requested:
        # Asked only then: TaskStop has been sent, so the run is ending and reads no more mail.
        if versions.patched(MAIL_AFTER_STOP):
            return await _after_its_end(agents, call, task, mail)
    if task.status == "running":
        try:
            await signal_workflow(task.workflow_id, "send_message", mail)
            return _ok(call, f"Message queued for delivery to {inp.to} at its next tool round.")
        except ApplicationError:
            workflow.logger.info("%s ended before the message; resuming it", task.agent_id)
    return await _resume(agents, call, task, mail)


async def _after_its_end(agents: SubAgents, call: ValidCall, task: ChildTask, mail: MailMessage):
    """A message for an agent being stopped: resumes it once its end is in."""
    try:
        await workflow.wait_condition(lambda: task.status != "running", timeout=STOPPING_WAIT)
    except TimeoutError:
        return error_result(
            call.block,
            f'Agent "{call.input.to}" is being stopped and has not ended yet; send the message '
            "again once its notification has come (it continues the agent then).",
        )
    return await _resume(agents, call, task, mail)


async def _resume(agents: SubAgents, call: ValidCall, task: ChildTask, mail: MailMessage):
    """R66: a new run of the same workflow id continues the stopped agent's conversation."""
    previous = task.status
    output = task.end.output_file if task.end is not None else None
    if task.transcript is None:
        return error_result(
            call.block,
            f'Agent "{call.input.to}" is stopped ({previous}) and could not be resumed: its '
            "conversation is not known yet; try again after its notification.",
        )
    if agents.ctx.coordinator and (busy := agents.phases.resume_conflicts(task.agent_id)):
        # R59 holds for a continued worker too: its files may be in use by another.
        names = "; ".join(f"{c.label or c.agent_id} ({', '.join(f)})" for c, f in busy)
        return error_result(
            call.block,
            f'Agent "{call.input.to}" works on files other workers are changing or waiting '
            f"for: {names}. Continue it after they have finished.",
        )
    generation = task.run_generation + 1
    # It goes on in the mode it ended in: a worker whose plan was approved does not plan
    # again (launched with `mode: plan`, it would have started over in plan mode).
    ended_in = task.end.permission_mode if task.end is not None else None
    spawn = task.spawn.model_copy(
        update={
            "permission_mode": ended_in or task.spawn.permission_mode,
            # Its plan so far is in that file: a new one would make it plan from scratch.
            # An end made up for a run that died tells none: the run before it had it then
            # (a plan file, once made, is the agent's for good).
            "plan_file": (task.end.plan_file if task.end is not None else None)
            or task.spawn.plan_file,
            "prompt": "",
            "resume_from": task.transcript,
            "run_generation": generation,
            "background": True,
            "parent": ParentLink(
                workflow_id=agents.ctx.workflow_id,
                agent_id=agents.ctx.agent_id,
                tool_use_id=call.block.id,
                sender=agents.ctx.name or agents.ctx.agent_id,
            ),
            "read_file_state": {},
            "read_state_ref": task.read_state_ref,
            "definitions": definitions_for_child(task.spawn.tools, agents.ctx.definitions),
        }
    )
    # R76: a planning agent's helpers only read, a resumed one too (for this run only: the
    # kept input, for later resumes, keeps what it was launched with).
    run = spawn.model_copy(update={"write_scope": []}) if agents.ctx.planning() else spawn
    try:
        started: ResumeResult = await workflow.execute_activity_method(
            AgentControl.resume_agent,
            ResumeRequest(
                workflow_id=task.workflow_id,
                task_queue=workflow.info().task_queue,
                input=run.model_dump(mode="json"),
                message=mail.model_dump(mode="json"),
                known_run_id=task.run_id,
            ),
            **RESUME_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        return error_result(
            call.block,
            f'Agent "{call.input.to}" is stopped ({previous}) and could not be resumed: {e.cause}',
        )
    if not started.started:
        return _ok(call, f"Message queued for delivery to {call.input.to} at its next tool round.")
    task.spawn = spawn.model_copy(update={"definitions": None})
    task.run_id = started.run_id
    over = generation in task.notified or (
        task.end is not None and task.end.run_generation >= generation
    )
    if not over:  # its end may already be in (a retried start): never un-finish it
        task.run_generation, task.status, task.mode = generation, "running", "background"
        task.end, task.stop_requested, task.tool_use_id = None, False, call.block.id
        task.transcript = None  # the new run's, once it reports; never the old one
        task.read_state_ref = None
    return _ok(
        call,
        f'Agent "{call.input.to}" was stopped ({previous}); resumed it in the background with '
        "your message. You'll be notified when it finishes."
        # R64: its output file (the same path for every run of the agent).
        + (f" Output: {output}" if output else ""),
    )
