"""Background commands as durable tasks (design.md: Bash `run_in_background` is a child
workflow `ShellTaskWorkflow` wrapping one long heartbeating activity).

The agent launches one per call (`launch`): its output file is made on the host first, so the
call's result can name it; the command then runs in a workflow of its own, visible in the Web
UI, stopped by cancellation (TaskStop, the agent's end), which kills its process group on the
host at once. It tells the agent's workflow id how it ended (signal `shell_notification`), so
an agent that continued as new still hears of it; the run that launched it also watches the
handle, in case the shell workflow could not tell (terminated).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from datetime import timedelta

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import RawValue, RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    WorkflowAlreadyStartedError,
    is_cancelled_exception,
)
from temporalio.workflow import ActivityCancellationType, ParentClosePolicy

from agents.config import OutlastConfig
from agents.messages import ToolResultBlock

with workflow.unsafe.imports_passed_through():
    from activities.errors import InvalidAgentInput
    from activities.tools.base import ToolContext
    from activities.tools.bash import BashInput, kill_bash_runs
    from activities.tools.bash_background import (
        ShellLaunchRequest,
        ShellOutcome,
        ShellRunRequest,
        capped_text,
        launch_shell,
        run_background,
    )

from workflows.child_endings import describe_runs
from workflows.client_input import given_input, named_unknown
from workflows.loop_tools import killable
from workflows.registry import ChildRegistry
from workflows.shells import (
    ShellEnd,
    ShellTask,
    ShellTaskInput,
    launch_text,
    person_kill_note,
    shell_description,
    status_of,
)
from workflows.signal_input import Refusals, unknown_signal, why
from workflows.signals import cancel_workflow, signal_workflow
from workflows.turns import ValidCall, error_result

RUN_LIMIT = timedelta(days=7)
"""The longest a background command without a timeout of its own may run (a server an agent
left running is stopped by the agent's end long before)."""
PARENT_CHECK_MAX = timedelta(minutes=30)
"""The longest between two checks that its agent still runs (~11 events each)."""
KILL_ROOM = timedelta(seconds=30)
"""Beyond a command's own timeout: time to kill it and report."""
LAUNCH_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}
RUN_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=6)
"""As a foreground command's: one more attempt after a lost worker, which kills what the
first left and says so; the others are for graceful worker stops, which the activity gives
back (`bash_runs.crash_reruns_spent`)."""


def _tool_context(ctx: dict) -> ToolContext:
    """The command's `ToolContext`. One a client sent (no parent) that does not fit: its
    ValidationError failed the workflow task on every attempt (a user test, 2026-12-05). No
    patch: such a run never completed a task. An agent's that does not fit comes from newer
    code (a rolling deploy): that still fails the task, for a worker that knows it.

    Raises:
        InvalidAgentInput: not retryable, so the workflow fails with the sentence.
        ValidationError: an agent's command.
    """
    try:
        return ToolContext.model_validate(ctx)
    except ValidationError as e:
        if workflow.info().parent is not None:
            raise
        # ToolContext drops a field it does not have: a misspelt required one
        # (`workspace_rot`) would be refused as missing, and the key typed not named.
        unknown = [str(k) for k in ctx if k not in ToolContext.model_fields]
        also = f"; {named_unknown(unknown, list(ToolContext.model_fields))}" if unknown else ""
        raise InvalidAgentInput(f"ShellTaskWorkflow input refused: ctx: {why(e)}{also}") from e


@workflow.defn(name="ShellTaskWorkflow")
class ShellTaskWorkflow:
    def __init__(self) -> None:
        self._refusals = Refusals()

    @workflow.signal(dynamic=True)
    def unknown_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """It takes no signal: a `stop` sent by hand was taken without a word and never
        read (a user test, 2026-12-07). Refused, in `refused_signals` and the Web UI's
        details; no command depends on it, so a run that buffered one replays the same."""
        hint = "a cancel (`outlast kill`, or TaskStop from its agent) stops the command"
        self._refusals.keep(unknown_signal("ShellTaskWorkflow", name, (), hint))
        workflow.set_current_details(refusals_details(self._refusals.texts))

    @workflow.query(name="refused_signals")
    def refused_signals(self) -> list[str]:
        """The latest signals refused, newest last, each saying why."""
        return self._refusals.texts

    @workflow.run
    async def run(self, inp: ShellTaskInput | None = None) -> ShellEnd:
        inp = given_input("ShellTaskWorkflow", inp, ShellTaskInput)
        ctx = _tool_context(inp.ctx)
        heartbeat = timedelta(seconds=inp.heartbeat_timeout_s)
        limit = timedelta(milliseconds=inp.timeout_ms) + KILL_ROOM if inp.timeout_ms else RUN_LIMIT
        handle = workflow.start_activity(
            run_background,
            ShellRunRequest(
                command=inp.command,
                ctx=ctx,
                output_file=inp.output_file,
                timeout_ms=inp.timeout_ms,
                max_output_bytes=inp.max_output_bytes,
            ),
            task_queue=inp.host_queue,
            summary=f"Bash (background): {inp.description}",
            # Across attempts: a retry after a lost worker does not get a limit of its own.
            schedule_to_close_timeout=limit,
            heartbeat_timeout=heartbeat,
            retry_policy=RUN_RETRY,
            # A stop must not report done while the command's processes still run.
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        run = asyncio.ensure_future(killable(handle, kill_bash_runs, inp.host_queue, heartbeat))
        orphaned, check = False, timedelta(seconds=inp.parent_check_s)
        try:
            while not run.done():
                try:
                    await workflow.wait_condition(
                        run.done, timeout=check, timeout_summary="is its agent still running?"
                    )
                except TimeoutError:
                    # Less often as it goes on: a command of days stays far below the
                    # history's event limit.
                    check = min(check * 2, PARENT_CHECK_MAX)
                    if not await _parent_running(inp):
                        # Its agent ended without stopping it (terminated): nobody is left to
                        # hear of it, or to stop it.
                        orphaned = True
                        run.cancel()
                        break
            outcome = await run
        except BaseException as e:
            if not is_cancelled_exception(e):
                if isinstance(e, ActivityError):
                    cause = e.cause.message if isinstance(e.cause, ApplicationError) else e.cause
                    end = _end(inp, status="failed", error=f"it could not run: {cause}")
                    await _tell(inp, end)
                    return end
                raise
            if not run.done():
                run.cancel()  # this workflow was cancelled: the command goes with it
            with contextlib.suppress(BaseException):
                await run
            if orphaned:
                return _end(inp, status="killed", error="its agent had ended")
            end = _end(inp, status="killed")
            # A person's kill (`outlast kill --reason`): the reason, for the agent to read.
            if reason := workflow.cancellation_reason():
                end = end.model_copy(update={"stop_reason": person_kill_note(reason)})
            await _tell(inp, end)
            raise
        if outcome.output_capped:
            # Only a run on this code can report it, so older histories never come here.
            end = _end(inp, status="killed", outcome=outcome)
            end = end.model_copy(update={"stop_reason": capped_text(inp.max_output_bytes)})
        else:
            status = status_of(outcome.exit_code, outcome.timed_out, outcome.error)
            end = _end(inp, status=status, outcome=outcome)
        await _tell(inp, end)
        return end


async def _parent_running(inp: ShellTaskInput) -> bool:
    """Whether the agent that launched it still runs (any run of its workflow id); True when
    that cannot be told now (the check is tried again later)."""
    try:
        (state,) = await describe_runs([inp.parent_workflow_id])
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        return True
    return state.status == "RUNNING"


def refusals_details(refused: list[str]) -> str:
    """The Web UI's details of a command's workflow once it refused a signal."""
    return "\n".join(["Refused signals:", *(f"- {text}" for text in refused)])


def _end(
    inp: ShellTaskInput,
    *,
    status: str,
    outcome: ShellOutcome | None = None,
    error: str | None = None,
) -> ShellEnd:
    outcome = outcome or ShellOutcome(error=error)
    return ShellEnd(
        shell_id=inp.shell_id,
        status=status,  # type: ignore[arg-type]
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        timeout_ms=inp.timeout_ms,
        error=outcome.error,
        note=outcome.note,
        output_file=inp.output_file,
        tool_use_id=inp.tool_use_id,
    )


async def _tell(inp: ShellTaskInput, end: ShellEnd) -> None:
    try:
        await signal_workflow(inp.parent_workflow_id, "shell_notification", end)
    except ApplicationError:
        # The agent has closed (it stops its commands before it ends, so this one was
        # stopped as it ended); the result stays on this workflow for anyone who looks.
        workflow.logger.info("%s: its agent has closed; not told", inp.shell_id)


async def launch(
    registry: ChildRegistry,
    call: ValidCall,
    ctx: ToolContext,
    host_queue: str,
    config: OutlastConfig,
    can_stop: bool,
    on_task_dir: Callable[[str], None],
) -> ToolResultBlock:
    """Start a `ShellTaskWorkflow` for the call; the result that names its ID and output."""
    inp: BashInput = call.input  # type: ignore[assignment]
    owner = workflow.info().workflow_id
    shell_id = registry.shells.new_id(workflow.random().getrandbits)
    try:
        output_file: str = await workflow.execute_activity(
            launch_shell,
            ShellLaunchRequest(owner=owner, shell_id=shell_id),
            task_queue=host_queue,
            summary=f"output file for {shell_id}",
            **LAUNCH_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        return error_result(call.block, f"Bash could not start it in the background: {e.cause}")
    on_task_dir(output_dir_of(output_file))
    description = shell_description(inp.description, inp.command)
    workflow_id = f"{owner}/{shell_id}"
    task = ShellTask(
        shell_id=shell_id,
        description=description,
        workflow_id=workflow_id,
        output_file=output_file,
        tool_use_id=call.block.id,
    )
    # In the table before it starts: a kill of the agent meanwhile stops it with the others.
    registry.shells.add(task)
    try:
        handle = await workflow.start_child_workflow(
            ShellTaskWorkflow.run,
            ShellTaskInput(
                shell_id=shell_id,
                command=inp.command,
                description=description,
                ctx=ctx.model_dump(mode="json"),
                output_file=output_file,
                host_queue=host_queue,
                parent_workflow_id=owner,
                tool_use_id=call.block.id,
                timeout_ms=inp.timeout,
                heartbeat_timeout_s=config.tools.heartbeat_timeout_s,
                parent_check_s=config.agents.liveness_check_s,
                max_output_bytes=config.tools.background_output_max_bytes,
            ),
            id=workflow_id,
            # It outlives a continue-as-new; the agent's end stops it (`stop_shells`).
            parent_close_policy=ParentClosePolicy.ABANDON,
            static_summary=f"Bash (background): {description}",
        )
    except WorkflowAlreadyStartedError:
        registry.shells.forget(shell_id)
        return error_result(call.block, f"A task with workflow id {workflow_id} already runs.")

    async def watch() -> None:
        try:
            end = await handle
        except ChildWorkflowError as e:
            killed = is_cancelled_exception(e)
            cause = getattr(e.cause, "message", None) or str(e.cause or e)
            end = ShellEnd(
                shell_id=shell_id,
                status="killed" if killed else "failed",
                error=None if killed else cause,
                output_file=output_file,
                tool_use_id=call.block.id,
            )
        registry.record_shell_end(end)

    asyncio.create_task(watch())
    wait_s = config.agents.background_command_wait_s
    return ToolResultBlock(
        tool_use_id=call.block.id, content=launch_text(shell_id, output_file, can_stop, wait_s)
    )


def output_dir_of(output_file: str) -> str:
    """The directory of an output file (a path string: no filesystem call)."""
    return output_file.rsplit("/", 1)[0]


async def stop_shell(task: ShellTask, reason: str = "") -> None:
    task.stop_requested, task.stop_reason = True, reason
    await cancel_workflow(task.workflow_id)


async def stop_shells(registry: ChildRegistry, reason: str = "") -> list[str]:
    """Stop every background command still running (an agent's end, R477); their IDs."""
    # One stopped already keeps the reason it was stopped for.
    running = [t for t in registry.shells.running() if not t.stop_requested]
    stops = (stop_shell(t, reason) for t in running)
    outcomes = await asyncio.gather(*stops, return_exceptions=True)
    for task, failed in zip(running, outcomes, strict=True):
        if isinstance(failed, Exception):
            workflow.logger.warning("could not stop %s: %s", task.workflow_id, failed)
    return [t.shell_id for t in running]


class TurnEndDeadline:
    """How long an agent whose turn has ended waits for its background commands: at most
    `wait_s` from the end of the turn, then they are stopped (a server it left running must
    not hold the agent for good). Only an agent that has commands running looks at it."""

    def __init__(self, registry: ChildRegistry, wait_s: float) -> None:
        self._registry = registry
        self._wait_s = wait_s
        self._until = workflow.now() + timedelta(seconds=wait_s)
        self._shells = False

    def next_wait(self, interval: timedelta) -> timedelta:
        """`interval`, or less when commands are running that are due to be stopped sooner."""
        self._shells = any(not t.stop_requested for t in self._registry.shells.running())
        return min(interval, self._until - workflow.now()) if self._shells else interval

    async def stop_due(self) -> bool:
        """After a wait that `next_wait` timed: stops the commands if their time is up (their
        notifications start the next turn); whether it did."""
        if not (self._shells and workflow.now() >= self._until):
            return False
        await stop_shells(
            self._registry, f"still running {self._wait_s:g} s after the turn had ended"
        )
        return True
