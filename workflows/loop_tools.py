"""The agent loop's tool round (workflows/agent_loop.py): a response's tool calls, checked,
batched (read-only ones together) and run, each as a local activity on the workspace's host,
a regular activity on its queue, or by the workflow itself (Agent, SendMessage, ...)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception
from temporalio.workflow import ActivityCancellationType

from agents.activity_summaries import tool_summary
from agents.config import OutlastConfig
from agents.messages import ToolResultBlock
from agents.paths import normalize_path
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.llm import ModelResponse
    from activities.local_tools import (
        LOCAL_TOOLS,
        HostLocalRequest,
        LocalToolResult,
        local_activity_name,
    )
    from activities.tools import TOOLS
    from activities.tools.base import KillRequest, ToolContext, ToolOutput

from workflows.loop_types import LoopHooks, LoopSetup, LoopState
from workflows.new_calls import gate_new_calls
from workflows.turns import CONTEXT_FULL, ValidCall, batch_calls, error_result, plan_calls


def tool_options(call: ValidCall, config: OutlastConfig) -> dict[str, Any]:
    """A tool request's fields from the config, beyond its context and input (only those
    that differ from the tool's default, so a call's input stays as small as it was)."""
    if call.block.name == "Glob" and config.tools.glob_sort == "mtime_desc":
        return {"newest_first": True}
    return {}


LOCAL_READ_TOOLS_PATCH = "local-read-tools"
"""Read, Glob and Grep run as local activities on the workspace's host (issue 9)."""
KILL_ON_HOST = "kill-on-host"
"""A killed run also kills its running Bash command on the host (`killable`)."""
BASH_BACKGROUND = "bash-background"
"""Bash with `run_in_background` starts a `ShellTaskWorkflow` (the first releases refused it
in the Bash activity)."""
CONTEXT_FULL_CUTS_CALLS = "context-full-cuts-calls"
"""A response the context window ended (`model_context_window_exceeded`) had its last tool
call cut off, as max_tokens does: it is refused, not run with what had arrived (a partial
Bash command ran)."""
MESSAGES_AFTER_SPAWNS = "messages-after-spawns"
"""A SendMessage or TaskStop waits for the Agent call before it in the same response that
spawns the agent it names (`turns.batch_calls`): run beside it, it found no such agent."""
LOCAL_TOOL_TIMEOUT = timedelta(seconds=30)
"""Longer than this, the call is run again as a regular activity, which can heartbeat."""


def input_models(setup: LoopSetup) -> dict[str, type[BaseModel]]:
    models = {name: TOOLS[name].input_model for name in setup.tools if name in TOOLS}
    models.update({name: tool.input_model for name, tool in setup.workflow_tools.items()})
    return models


MODE_TOOLS = frozenset(
    {"EnterPlanMode", "ExitPlanMode", "AskUserQuestion", "EnterWorktree", "ExitWorktree"}
)
"""They change what the calls after them may do (or where they run), or wait for a person
whose answer may change them: each runs alone, in order."""


def concurrency_safe(setup: LoopSetup) -> Callable[[str], bool]:
    return lambda n: (
        n not in MODE_TOOLS and (n in setup.workflow_tools or (n in TOOLS and TOOLS[n].read_only))
    )


def tool_context(setup: LoopSetup, state: LoopState, call: ValidCall) -> ToolContext:
    """Where and as whom this agent's tool call runs, now."""
    file_path = getattr(call.input, "file_path", None) or getattr(call.input, "notebook_path", None)
    stamp = state.read_state.get(normalize_path(state.cwd, file_path)) if file_path else None
    planning = state.mode == "plan"
    return ToolContext(
        # In a worktree session its tools are held to the worktree (a `cd ..` cannot leave
        # it), as an agent started in one is to its own.
        workspace_root=state.worktree.info.worktree_path
        if state.worktree
        else setup.workspace.root,
        cwd=state.cwd,
        agent_id=setup.agent_id,
        # R76: in plan mode the shell is read-only whatever the agent's tools, and the only
        # file a write may touch is the plan (checked again inside the write activity).
        sandbox="read_only" if planning else setup.sandbox,
        plan_file=state.plan_file,
        plan_mode=planning,
        read_stamp=stamp,
        extra_roots=setup.extra_roots,
        write_scope=setup.write_scope,
        # Its background commands' output files are read where they are written.
        read_roots=(state.task_dir,) if state.task_dir else (),
    )


async def run_activity_tool(setup: LoopSetup, state: LoopState, call: ValidCall) -> ToolResultBlock:
    spec = TOOLS[call.block.name]
    ctx = tool_context(setup, state, call)
    summary = tool_summary(
        setup.label, state.turns, call.block.name, call.input, setup.workspace.root
    )
    request = spec.request_model(input=call.input, ctx=ctx, **tool_options(call, setup.config))
    out = None
    local = setup.config.tools.local_tools and call.block.name in LOCAL_TOOLS
    if local and versions.patched(LOCAL_READ_TOOLS_PATCH):
        out = await run_here(setup, call.block.name, request, summary)
    if out is None:
        out = await run_on_host(setup, call, request, summary)
        if isinstance(out, ToolResultBlock):
            return out  # the activity failed: an error result
    state.read_state.update(out.stamps)
    state.unseen_stamps.extend(p for p in out.stamps if p not in state.unseen_stamps)
    if ref := out.stored_ref():
        state.result_refs[call.block.id] = ref
    if out.images and not out.is_error:
        state.result_images[call.block.id] = out.images
    if out.cwd:
        state.cwd = out.cwd
    return ToolResultBlock(tool_use_id=call.block.id, content=out.content, is_error=out.is_error)


async def run_on_host(
    setup: LoopSetup, call: ValidCall, request: BaseModel, summary: str
) -> ToolOutput | ToolResultBlock:
    """The tool's output from a regular activity on the workspace's host queue, or the
    error result for the model when the activity failed."""
    spec = TOOLS[call.block.name]
    heartbeat_timeout = timedelta(seconds=setup.config.tools.heartbeat_timeout_s)
    try:
        handle = workflow.start_activity(
            spec.activity,
            request,
            task_queue=setup.workspace.host_queue,
            summary=summary,
            # Kill must not report done while the tool's processes still run.
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            **{**spec.activity_options(call.input), "heartbeat_timeout": heartbeat_timeout},
        )
        if spec.kill is None:
            return await handle
        return await killable(handle, spec.kill, setup.workspace.host_queue, heartbeat_timeout)
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        cause = e.cause.message if isinstance(e.cause, ApplicationError) else str(e.cause or e)
        return error_result(call.block, f"{call.block.name} could not run: {cause}")


async def killable(
    handle: workflow.ActivityHandle[ToolOutput],
    kill: Callable[[KillRequest], Awaitable[int]],
    host_queue: str,
    heartbeat_timeout: timedelta,
) -> ToolOutput:
    """`await handle`; if this run is killed meanwhile, the tool's processes are killed on the
    host at once by `kill`, rather than when the activity hears of the cancel at its next
    heartbeat, and the cancellation goes on up."""
    try:
        return await asyncio.shield(handle)
    except asyncio.CancelledError as cancelled:
        if handle.done():
            raise  # it ended as the cancel came: the cancel wins, as it did over a plain await
        if not versions.patched(KILL_ON_HOST):
            handle.cancel()  # what the shield held back: a run from before kills as it did
            return await handle
        info = workflow.info()
        stop = workflow.start_activity(
            kill,
            KillRequest(workflow_id=info.workflow_id, run_id=info.run_id),
            task_queue=host_queue,
            summary="kill the running command",
            # A host that is gone cannot kill anything; the tool's heartbeat timeout then ends
            # the wait for both.
            schedule_to_close_timeout=heartbeat_timeout,
            retry_policy=RetryPolicy(maximum_attempts=1),
        )
        handle.cancel()
        # Until the activity is over, so no process of it is left: cancelled, or ended as the
        # kill ended its command, or failed (its host gone). This run is being killed anyway.
        with contextlib.suppress(ActivityError, asyncio.CancelledError):
            await handle
        with contextlib.suppress(ActivityError, asyncio.CancelledError):
            await stop
        raise cancelled


async def run_here(
    setup: LoopSetup, tool: str, request: BaseModel, summary: str
) -> ToolOutput | None:
    """The tool's output from a local activity, or None where it cannot run as one (this
    worker is not the workspace's host, or it failed or took too long): the caller then runs
    it as a regular activity on the host queue, as every other tool."""
    try:
        result = await workflow.execute_local_activity(
            local_activity_name(tool),
            HostLocalRequest(
                host_queue=setup.workspace.host_queue,
                request=request.model_dump(mode="json", by_alias=True),
            ),
            result_type=LocalToolResult,
            summary=summary,
            start_to_close_timeout=LOCAL_TOOL_TIMEOUT,
            retry_policy=RetryPolicy(maximum_attempts=1),
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        return None
    return result.output


async def run_one(setup: LoopSetup, state: LoopState, item: ValidCall | ToolResultBlock):
    if isinstance(item, ToolResultBlock):
        return item
    tool = setup.workflow_tools.get(item.block.name)
    if tool is not None:
        return await tool.run(item)
    if (
        item.block.name == "Bash"
        and setup.background_bash is not None
        and getattr(item.input, "run_in_background", False)
        # Asked only for such a call: before it, the activity refused it.
        and versions.patched(BASH_BACKGROUND)
    ):
        return await setup.background_bash(item, tool_context(setup, state, item))
    return await run_activity_tool(setup, state, item)


async def run_finished(setup: LoopSetup, state: LoopState, item: ValidCall | ToolResultBlock):
    """`run_one`, its result noted as the call finishes (`LoopState.finished_calls`)."""
    if isinstance(item, ValidCall):
        state.started_calls.append(item.block.id)
    result = await run_one(setup, state, item)
    state.finished_calls.append(result)
    return result


async def run_tools(
    setup: LoopSetup, state: LoopState, response: ModelResponse, hooks: LoopHooks
) -> list[ToolResultBlock]:
    stop_reason = response.stop_reason
    # Asked only by such a response: the call it cut off had run with what had arrived.
    if stop_reason == CONTEXT_FULL and not versions.patched(CONTEXT_FULL_CUTS_CALLS):
        stop_reason = None
    planned = gate_new_calls(plan_calls(response.message, stop_reason, input_models(setup)))
    results: list[ToolResultBlock] = []
    state.finished_calls = []
    state.turn_calls = [i.block.id if isinstance(i, ValidCall) else i.tool_use_id for i in planned]
    safe = concurrency_safe(setup)
    batches = batch_calls(planned, safe)
    # Asked only where the order differs, so no other run records it.
    if batches != (unordered := batch_calls(planned, safe, after_spawns=False)):
        batches = batches if versions.patched(MESSAGES_AFTER_SPAWNS) else unordered
    for batch in batches:
        # The policy is asked per batch, as it runs: an EnterPlanMode earlier in the same
        # response already binds the calls after it.
        batch = [
            error_result(item.block, denial)
            if isinstance(item, ValidCall) and (denial := hooks.tool_policy(item))
            else item
            for item in batch
        ]
        hooks.on_phase("running_tools", [i.block.name for i in batch if isinstance(i, ValidCall)])
        results.extend(await asyncio.gather(*(run_finished(setup, state, i) for i in batch)))
    state.finished_calls = []  # the caller holds them now, for the next model call
    state.turn_calls, state.started_calls = [], []
    return results
