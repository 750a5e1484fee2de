"""The one model <-> tool loop, shared by every workflow that runs an agent.

A plain async function over explicit state: the workflow that owns it supplies the fixed
setup (`LoopSetup`), the state to carry across continue-as-new (`LoopState`) and a few hooks
(stop flag, inbox, progress). Decisions are in `workflows/turns.py`; this module only awaits
activities and records what they return.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception
from temporalio.workflow import ActivityCancellationType

from agents import compaction
from agents.activity_summaries import model_summary, tool_summary
from agents.config import OutlastConfig
from agents.messages import Message, ToolResultBlock, merge_user_messages
from agents.paths import normalize_path
from agents.todos import TodoItem
from agents.transcript import TranscriptRef
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.llm import ModelRequest, ModelResponse, compact
    from activities.local_tools import (
        LOCAL_TOOLS,
        HostLocalRequest,
        LocalToolResult,
        local_activity_name,
    )
    from activities.tools import TOOLS
    from activities.tools.base import FileStamp, ImageRef, KillRequest, ToolContext, ToolOutput

from workflows.contracts import AgentUsage, Workspace
from workflows.model_call import ModelCalls, call_the_model, model_activity_options
from workflows.new_calls import gate_new_calls
from workflows.turns import (
    CONTEXT_FULL,
    CONTEXT_FULL_NOTE,
    ValidCall,
    add_usage,
    batch_calls,
    by_reference,
    error_result,
    plan_calls,
)
from workflows.worktree_session import EnteredWorktree

LoopEnd = Literal["end_turn", "max_turns", "stopped", "continue_as_new"]


@dataclass(frozen=True)
class WorkflowTool:
    """A tool the workflow carries out itself (Agent, SendMessage, TaskStop)."""

    input_model: type[BaseModel]
    run: Callable[[ValidCall], Awaitable[ToolResultBlock]]


class LoopState(BaseModel):
    """Everything the loop needs to go on from a turn boundary; carried by continue-as-new."""

    transcript: TranscriptRef = TranscriptRef()
    pending: list[Message] = Field(default_factory=list)
    """Messages for the next model call (the task, tool results, queued messages)."""
    turns: int = 0
    usage: AgentUsage = AgentUsage()
    read_state: dict[str, FileStamp] = Field(default_factory=dict)
    unseen_stamps: list[str] = Field(default_factory=list)
    """Files stamped by tools whose results the model has not been sent yet (`pending`)."""
    cwd: str = ""
    last_text: str = ""
    round_tool_use_ids: list[str] = Field(default_factory=list)
    """The tool_use ids of the assistant message whose tools are running (a fork clones it)."""
    mode: str = ""
    """The permission mode now (`plan` while planning, R75); "" = the agent's own."""
    plan_file: str | None = None
    """The agent's plan file, once it has entered plan mode (R76)."""
    pre_plan_mode: str = ""
    plan_turns: int = 0
    """User turns taken in plan mode since entering it (reminder cadence, R78)."""
    plan_attachments: int = 0
    plan_exited: bool = False
    """The plan was just approved: the next turn gets the one-time exit note."""
    plan_requests: int = 0
    result_refs: dict[str, str] = Field(default_factory=dict)
    """tool_use_id -> blob of that result's content, for the next model request (issue 9)."""
    result_images: dict[str, tuple[ImageRef, ...]] = Field(default_factory=dict)
    """tool_use_id -> the images that result shows the model, for the next model request."""
    model_calls: ModelCalls = Field(default_factory=ModelCalls)
    """What decides the next model call's mode under `model.local_activity: auto`."""
    task_dir: str = ""
    """Where its background commands' output files are, once it has launched one."""
    todos: list[TodoItem] = Field(default_factory=list)
    """The agent's todo list, as its last TodoWrite left it (T7)."""
    questions_asked: int = 0
    """AskUserQuestion calls so far: the next one's request id (T16)."""
    worktree: EnteredWorktree | None = None
    """The worktree EnterWorktree moved the session into, until ExitWorktree (T18)."""
    max_tokens_resumes: int = 0
    """Answers cut off by max_tokens in a row that the model was asked to go on from."""
    resuming_cut: bool = False
    """The next answer goes on from one max_tokens cut off: `last_text` is both."""
    context_tokens: int = 0
    """How much of the context window the last model call's conversation took, its answer
    included; 0 before the first call and after a compaction."""
    compact_failures: int = 0
    """Compactions in a row whose answer had no summary (agents/compaction.py)."""
    compacted: list[TranscriptRef] = Field(default_factory=list)
    """The conversations as they were when compacted, oldest first, for the output file."""


def tool_options(call: ValidCall, config: OutlastConfig) -> dict[str, Any]:
    """A tool request's fields from the config, beyond its context and input (only those
    that differ from the tool's default, so a call's input stays as small as it was)."""
    if call.block.name == "Glob" and config.tools.glob_sort == "mtime_desc":
        return {"newest_first": True}
    return {}


def seen_read_state(state: LoopState) -> dict[str, FileStamp]:
    """The stamps of what the model has seen: a run that ends between its tools and its next
    model call leaves results a resume never shows it (the repair drops their calls), so the
    files those tools stamped must be read again before they are edited."""
    return {p: s for p, s in state.read_state.items() if p not in state.unseen_stamps}


@dataclass
class LoopSetup:
    """What stays fixed for one agent run."""

    request: ModelRequest
    """Template for every model call; transcript and append are filled per turn."""
    tools: list[str]
    workspace: Workspace
    agent_id: str
    sandbox: Literal["none", "read_only", "copy"]
    max_turns: int
    config: OutlastConfig
    workflow_tools: dict[str, WorkflowTool] = field(default_factory=dict)
    """Tools the workflow itself carries out, by every name the model may use (aliases
    included). They run alongside read-only tools: each is quick, or waits on a child."""
    write_scope: tuple[str, ...] | None = None
    """Where Write and Edit may change files (None: anywhere in the workspace)."""
    extra_roots: tuple[str, ...] = ()
    """Directories besides the workspace its tools may use (a coordinator's scratchpad)."""
    label: str = "agent"
    """How its activities' summaries name the agent (its name, else its type)."""
    background_bash: Callable[[ValidCall, ToolContext], Awaitable[ToolResultBlock]] | None = None
    """Launches a Bash call with `run_in_background` (None: not offered; the tool refuses)."""


@dataclass
class LoopHooks:
    stop_requested: Callable[[], bool] = lambda: False
    drain_inbox: Callable[[], list[Message]] = lambda: []
    on_phase: Callable[[str, list[str]], None] = lambda phase, tools: None
    record: Callable[[list[Message]], None] = lambda messages: None
    """Sees every message as it enters the transcript (for the `transcript` query)."""
    started_at: Callable[[], int] = lambda: 0
    """Elapsed milliseconds since the agent started, for usage.duration_ms."""
    has_input: Callable[[], bool] = lambda: False
    """Messages are waiting in the inbox (mail, notifications)."""
    outstanding: Callable[[], bool] = lambda: False
    """Background work (sub-agents) whose end this agent has not been told about yet."""
    wait_for_input: Callable[[], Awaitable[None]] | None = None
    """Returns once the inbox has something, nothing is outstanding, or a stop came."""
    settle: Callable[[], Awaitable[bool]] | None = None
    """Before the end: waits for sub-agents still closing; True if input or a stop came."""
    continue_as_new: Callable[[], bool] = lambda: False
    """Checked at each turn boundary: hand over to a fresh run now (history budget)."""
    attachments: Callable[[], list[str]] = lambda: []
    """Reminders to add to the next user turn and keep in the conversation (R78)."""
    ephemeral: Callable[[], list[str]] = lambda: []
    """Reminders for the next model call only, never recorded (R84)."""
    tool_policy: Callable[[ValidCall], str | None] = lambda call: None
    """Why a valid tool call is refused in the current mode (plan mode, R76), or None."""


LOCAL_READ_TOOLS_PATCH = "local-read-tools"
"""Read, Glob and Grep run as local activities on the workspace's host (issue 9)."""
KILL_ON_HOST = "kill-on-host"
"""A killed run also kills its running Bash command on the host (`killable`)."""
BASH_BACKGROUND = "bash-background"
"""Bash with `run_in_background` starts a `ShellTaskWorkflow` (the first releases refused it
in the Bash activity)."""
MAX_TOKENS_RESUME = "max-tokens-resume"
"""An answer that max_tokens cut off (no tool call in it) is followed by a request to go on
from where it stopped, up to MAX_TOKENS_RESUMES times in a row, as Claude Code does. The cut
answer ended the agent: a parent got half a report as the whole of it."""
MAX_TOKENS_RESUMES = 3
RESUME_AFTER_MAX_TOKENS = (
    "Output token limit hit. Resume directly \u2014 no apology, no recap of what you were "
    "doing. Pick up mid-thought if that is where the cut happened. Break remaining work into "
    "smaller pieces."
)
AUTO_COMPACT = "auto-compact"
"""Before a model call whose conversation has reached `compaction.compact_at`, the model sums
it up and the agent goes on from the summary (agents/compaction.py). The call went as it was,
and the API refused it as too long once the window was full: the agent failed."""
COMPACT_WHEN_TOO_LONG = "compact-when-too-long"
"""A model call the API refuses as too long for the window is sent again after a compaction
(once; the estimate that decides `auto-compact` beforehand can fall short). The refusal
failed the agent."""
CONTEXT_FULL_CUTS_CALLS = "context-full-cuts-calls"
"""A response the context window ended (`model_context_window_exceeded`) had its last tool
call cut off, as max_tokens does: it is refused, not run with what had arrived (a partial
Bash command ran)."""
LOCAL_TOOL_TIMEOUT = timedelta(seconds=30)
"""Longer than this, the call is run again as a regular activity, which can heartbeat."""


def _input_models(setup: LoopSetup) -> dict[str, type[BaseModel]]:
    models = {name: TOOLS[name].input_model for name in setup.tools if name in TOOLS}
    models.update({name: tool.input_model for name, tool in setup.workflow_tools.items()})
    return models


MODE_TOOLS = frozenset(
    {"EnterPlanMode", "ExitPlanMode", "AskUserQuestion", "EnterWorktree", "ExitWorktree"}
)
"""They change what the calls after them may do (or where they run), or wait for a person
whose answer may change them: each runs alone, in order."""


def _concurrency_safe(setup: LoopSetup) -> Callable[[str], bool]:
    return lambda n: (
        n not in MODE_TOOLS and (n in setup.workflow_tools or (n in TOOLS and TOOLS[n].read_only))
    )


async def _call_model(setup: LoopSetup, state: LoopState, ephemeral: list[str]) -> ModelResponse:
    append, refs = by_reference(merge_user_messages(state.pending), state.result_refs)
    request = setup.request.model_copy(
        update={
            "transcript": state.transcript,
            "append": append,
            "append_refs": refs,
            "append_images": dict(state.result_images),
            "ephemeral": ephemeral,
        }
    )
    return await _model_call(
        setup, state, request, model_summary(setup.label, state.turns + 1, request.model)
    )


async def _model_call(
    setup: LoopSetup,
    state: LoopState,
    request: ModelRequest,
    summary: str,
    compacting: bool = False,
) -> ModelResponse:
    try:
        if compacting:
            # Always regular: a summary of a full window takes long (a local try under
            # `auto` would run over and be paid twice), and says nothing of how long the
            # agent's next call will take.
            return await workflow.execute_activity(
                compact, request, summary=summary, **model_activity_options(setup.config)
            )
        response, state.model_calls = await call_the_model(
            setup.config, request, summary, state.model_calls
        )
        return response
    # A local call's failure reaches the workflow bare, a regular one's wrapped: the agent
    # fails the same way after either.
    except (ActivityError, ApplicationError) as e:
        if is_cancelled_exception(e):
            raise
        failure = e.cause if isinstance(e, ActivityError) else e
        cause = failure if isinstance(failure, ApplicationError) else None
        raise ApplicationError(
            f"Model call failed: {cause.message if cause else e}",
            *(cause.details if cause else ()),
            type=cause.type if cause and cause.type else "ModelCallFailed",
            non_retryable=True,
        ) from e


async def _compact(
    setup: LoopSetup, state: LoopState, hooks: LoopHooks, tokens: int | None
) -> None:
    """Sum the conversation up and go on from the summary; as it was if no summary came.
    A failed call is the agent's failure, as any model call's: it would be the next one's."""
    request = setup.request.model_copy(
        update={"transcript": state.transcript, "shared_prefix_breakpoint": False}
    )
    size = f"about {tokens:,} tokens" if tokens is not None else "a call too long for the window"
    summary = f"{setup.label}: compact {size}: model {request.model}"
    response = await _model_call(setup, state, request, summary, compacting=True)
    state.usage = add_usage(state.usage, response.usage, 0, hooks.started_at())
    if response.transcript == state.transcript:
        state.compact_failures += 1
        workflow.logger.warning("compaction gave no summary (%d in a row)", state.compact_failures)
        return
    state.compacted.append(state.transcript)
    state.transcript = response.transcript
    state.context_tokens = state.compact_failures = 0
    # The model no longer has the files it read (Claude Code forgets them too): an edit of
    # one needs a Read first, but for those whose results it is about to be sent.
    # The plan file stays known, so plan mode's reminder does not ask for a new one.
    keep = set(state.unseen_stamps)
    if state.plan_file:
        keep.add(normalize_path(state.cwd, state.plan_file))
    state.read_state = {p: s for p, s in state.read_state.items() if p in keep}
    # The plan-mode instructions went with the old conversation: the next turn has them whole.
    state.plan_turns = state.plan_attachments = 0
    # The `transcript` query's messages stay this run's, in the order they came: the summary
    # is the `llm.compact` activity's result, in history and the Web UI.


def _waiting(state: LoopState) -> int:
    """About how many tokens what waits for the next model call adds to it."""
    media = [i.is_document for images in state.result_images.values() for i in images]
    return compaction.estimate_tokens(state.pending, media)


async def _compacted_for(
    error: ApplicationError, setup: LoopSetup, state: LoopState, hooks: LoopHooks
) -> bool:
    """After a call refused as too long for the window (the estimate fell short: a fork's or
    a resumed agent's first call, a big mail), whether a summary was made to send it again."""
    details = error.details[0] if error.details else None
    limit = compaction.compact_at(setup.config.model, setup.request.max_tokens)
    if (
        not compaction.too_long(error.type, details)
        or limit is None  # compaction is off: the agent fails, as it was told
        or state.transcript.length == 0
        or state.compact_failures >= compaction.MAX_FAILURES
        # What waits goes whole with the call: over the line by itself, no summary helps.
        or _waiting(state) >= limit
        # Asked only after such a refusal, which ended the agent before.
        or not versions.patched(COMPACT_WHEN_TOO_LONG)
    ):
        return False
    before = state.transcript
    await _compact(setup, state, hooks, None)
    return state.transcript != before


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


async def _run_activity_tool(
    setup: LoopSetup, state: LoopState, call: ValidCall
) -> ToolResultBlock:
    spec = TOOLS[call.block.name]
    ctx = tool_context(setup, state, call)
    summary = tool_summary(
        setup.label, state.turns, call.block.name, call.input, setup.workspace.root
    )
    request = spec.request_model(input=call.input, ctx=ctx, **tool_options(call, setup.config))
    out = None
    local = setup.config.tools.local_tools and call.block.name in LOCAL_TOOLS
    if local and versions.patched(LOCAL_READ_TOOLS_PATCH):
        out = await _run_here(setup, call.block.name, request, summary)
    if out is None:
        out = await _run_on_host(setup, call, request, summary)
        if isinstance(out, ToolResultBlock):
            return out  # the activity failed: an error result
    state.read_state.update(out.stamps)
    state.unseen_stamps.extend(p for p in out.stamps if p not in state.unseen_stamps)
    if out.content_ref:
        state.result_refs[call.block.id] = out.content_ref
    if out.images and not out.is_error:
        state.result_images[call.block.id] = out.images
    if out.cwd:
        state.cwd = out.cwd
    return ToolResultBlock(tool_use_id=call.block.id, content=out.content, is_error=out.is_error)


async def _run_on_host(
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


async def _run_here(
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


async def _run_one(setup: LoopSetup, state: LoopState, item: ValidCall | ToolResultBlock):
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
    return await _run_activity_tool(setup, state, item)


async def _run_tools(
    setup: LoopSetup, state: LoopState, response: ModelResponse, hooks: LoopHooks
) -> list[ToolResultBlock]:
    stop_reason = response.stop_reason
    # Asked only by such a response: the call it cut off had run with what had arrived.
    if stop_reason == CONTEXT_FULL and not versions.patched(CONTEXT_FULL_CUTS_CALLS):
        stop_reason = None
    planned = gate_new_calls(plan_calls(response.message, stop_reason, _input_models(setup)))
    results: list[ToolResultBlock] = []
    for batch in batch_calls(planned, _concurrency_safe(setup)):
        # The policy is asked per batch, as it runs: an EnterPlanMode earlier in the same
        # response already binds the calls after it.
        batch = [
            error_result(item.block, denial)
            if isinstance(item, ValidCall) and (denial := hooks.tool_policy(item))
            else item
            for item in batch
        ]
        hooks.on_phase("running_tools", [i.block.name for i in batch if isinstance(i, ValidCall)])
        results.extend(await asyncio.gather(*(_run_one(setup, state, i) for i in batch)))
    return results


def _resume_after_max_tokens(state: LoopState, response: ModelResponse) -> bool:
    """Whether the next turn asks the model to go on from an answer max_tokens cut off."""
    if response.stop_reason != "max_tokens":
        return False
    if state.max_tokens_resumes >= MAX_TOKENS_RESUMES:
        state.max_tokens_resumes = 0  # given up on this one; a later cut is a new one
        return False
    # Asked only by such an answer.
    if not versions.patched(MAX_TOKENS_RESUME):
        return False
    if state.max_tokens_resumes == 0:
        # The answer starts with this one, even with no text (cut in its thinking): not
        # with what an earlier turn said.
        state.last_text = response.message.text()
    state.max_tokens_resumes += 1
    state.resuming_cut = True
    state.pending.append(Message.user_text(RESUME_AFTER_MAX_TOKENS))
    return True


async def run_agent_loop(setup: LoopSetup, state: LoopState, hooks: LoopHooks) -> LoopEnd:
    """Turns until the model ends its turn, `max_turns` model calls are spent, or a stop."""
    while True:
        if hooks.stop_requested():
            return "stopped"
        if state.turns >= setup.max_turns:
            return "max_turns"
        if hooks.continue_as_new():
            return "continue_as_new"
        # The conversation as the next call would send it, about: the last call's, and what
        # is waiting to go with the next (tool results, most of all).
        waiting = _waiting(state)
        settings, max_tokens = setup.config.model, setup.request.max_tokens
        # Asked only when the conversation has grown that far.
        if compaction.due(
            state.context_tokens, waiting, state.compact_failures, settings, max_tokens
        ) and versions.patched(AUTO_COMPACT):
            hooks.on_phase("calling_model", [])
            await _compact(setup, state, hooks, state.context_tokens + waiting)
            if hooks.stop_requested():
                return "stopped"  # it came during the summary: no model call after a stop
        state.pending.extend(hooks.drain_inbox())
        state.pending.extend(Message.user_text(text) for text in hooks.attachments())
        hooks.on_phase("calling_model", [])
        ephemeral = hooks.ephemeral()
        try:
            response = await _call_model(setup, state, ephemeral)
        except ApplicationError as e:
            if not await _compacted_for(e, setup, state, hooks):
                raise
            # Sent again even if a stop came during the summary: the mail in it is drained
            # already, and a stop takes effect at the next turn boundary, as during any call.
            response = await _call_model(setup, state, ephemeral)
        hooks.record([*merge_user_messages(state.pending), response.message])
        state.turns += 1
        state.transcript = response.transcript
        state.pending = []
        state.result_refs = {}
        state.result_images = {}
        state.unseen_stamps = []
        if state.resuming_cut:  # going on after a cut: the answer is the cut text and this
            state.last_text += response.message.text()
            state.resuming_cut = False
        elif text := response.message.text():
            state.last_text = text
        if response.stop_reason != "max_tokens":
            state.max_tokens_resumes = 0
        state.context_tokens = compaction.context_tokens(response.usage)
        uses = len(response.message.tool_uses())
        state.usage = add_usage(state.usage, response.usage, uses, hooks.started_at())
        if uses == 0:
            if response.stop_reason == CONTEXT_FULL:  # no room to go on, as after max_tokens
                state.last_text += CONTEXT_FULL_NOTE
            if _resume_after_max_tokens(state, response):
                continue
            if hooks.has_input():
                continue
            if hooks.outstanding() and hooks.wait_for_input is not None:
                # Background sub-agents are still out: their notifications start new turns.
                hooks.on_phase("waiting", [])
                await hooks.wait_for_input()
                continue
            # At the last allowed turn another turn cannot answer what the wait brings.
            if state.turns < setup.max_turns and hooks.settle is not None and await hooks.settle():
                continue  # a sub-agent that had told its end sent another, or mail came
            return "end_turn"
        state.round_tool_use_ids = [b.id for b in response.message.tool_uses()]
        results = await _run_tools(setup, state, response, hooks)
        state.pending = [Message(role="user", content=results)]
