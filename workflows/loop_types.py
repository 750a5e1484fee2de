"""The agent loop's state and setup (workflows/agent_loop.py): what it carries across
continue-as-new, what stays fixed for a run, and the hooks its workflow gives it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field
from temporalio import workflow

from agents.config import OutlastConfig
from agents.messages import Message, ToolResultBlock
from agents.todos import TodoItem
from agents.transcript import TranscriptRef

with workflow.unsafe.imports_passed_through():
    from activities.llm import ModelRequest
    from activities.tools.base import FileStamp, ImageRef, ToolContext

from workflows.contracts import AgentUsage, Workspace
from workflows.model_call import ModelCalls
from workflows.turns import ValidCall
from workflows.worktree_session import EnteredWorktree


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
    wake_turns: int = 0
    """`turns` when a teammate last woke for mail: its turn budget counts from there."""
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
    plan_file_earlier: bool = False
    """`plan_file` is an earlier run's (a resume): it may hold that run's plan, which this
    run's read stamps do not show until the model reads it."""
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
    model_setup_ref: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The blob the model activity stored this agent's request setup in: later calls send
    the name instead of the fields, while it is still their setup's (issue 9)."""
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
    stop_hook_active: bool = False
    """A SubagentStop hook blocked the last stop: the agent works on because of it (R100)."""
    turn_calls: list[str] = Field(default_factory=list, exclude=True)
    """The tool use ids of the calls this turn runs: those a kill cuts off are answered as
    interrupted (`agent_end.keep_last_results`). Never carried, as `finished_calls`."""
    started_calls: list[str] = Field(default_factory=list, exclude=True)
    """Those of them that have started (a later batch waits for the one before)."""
    finished_calls: list[ToolResultBlock] = Field(default_factory=list, exclude=True)
    """The results of this turn's calls that have finished while others still run: a kill
    mid-turn keeps them (`agent_end.keep_last_results`). Never carried: a run continues as
    new only between turns."""


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
    turns_per_wake: bool = False
    """A teammate: `max_turns` bounds each piece of work mail wakes it for, not its life."""
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
