"""Workflow inputs, results, and signal/query payloads: public, persisted contracts.

Anything here is stored in Temporal history and read by clients in other processes (the
CLI, other languages' SDKs starting a workflow by name with JSON). Fields are only added,
with defaults.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator
from temporalio import workflow

from agents.config import OutlastConfig
from agents.definition import AgentDefinition, DefinitionSet
from agents.messages import Message, Usage
from agents.questions import Question
from agents.todos import TodoItem
from agents.transcript import TranscriptRef
from workflows.nested_unknowns import empty, strip_unknown

with workflow.unsafe.imports_passed_through():
    from activities.tools.base import FileStamp
    from activities.worktree import WorktreeInfo

TEAM_MEMBER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

TASK_QUEUE = "outlast"
"""Workflows and model calls; any worker serves it."""


WORKTREE_MEMO = "worktree_kept"
"""The memo key a killed or failed agent names the worktree its end kept under (`path`,
`branch`): with no result to say it, `show` named it nowhere (a user test, 2026-12-07)."""
UNSTARTED_MEMO = "unstarted_workers"
"""The memo key a killed or failed coordinator names its never-started workers under
(`AgentResult.unstarted_workers`)."""


def host_task_queue(host_id: str) -> str:
    """Tools and worktrees need the files, so they run on the queue of the host holding them."""
    return f"outlast-host-{host_id}"


class Contract(BaseModel):
    """Base of every contract: immutable, so a payload cannot change after it is sent."""

    model_config = ConfigDict(frozen=True)


class ClientInput(Contract):
    """An input any Temporal client may send as JSON: a workflow's start, an update people
    send. pydantic would drop a field the model does not have without a word (`{"max_turn":
    5}` ran with no turn limit; `decide_stage` with `"atempt": 1` decided whichever attempt
    waited); the names of such fields are kept here, never sent on, so the workflow can refuse
    it (`workflows/client_input.py`).

    Not an unknown field whose value is empty (null, false, "", [], {}): that is what a client
    of a later release sends for a field it added and left at its default (Outlast's clients
    send every field), and it asks for nothing; it is dropped, as before."""

    unknown_input_fields: list[str] = Field(default_factory=list, exclude=True, repr=False)
    unknown_nested_fields: list[str] = Field(default_factory=list, exclude=True, repr=False)
    """Unknown fields inside its strict models (the config, a stage, ...), by path, each with
    its likely meaning: taken out so that decoding does not fail on them
    (`workflows/nested_unknowns.py`)."""
    unknown_lenient_fields: list[str] = Field(default_factory=list, exclude=True, repr=False)
    """Unknown fields inside its lenient models (the workspace, the lineage), by path: a
    client's start is refused for them as for the others, but one of Outlast's own inputs
    goes on without them, as pydantic would have had it (a newer release's, in a deploy)."""

    @model_validator(mode="before")
    @classmethod
    def _keep_unknown_names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = cls.model_fields.keys() - BOOKKEEPING
        nested: list[str] = []
        lenient: list[str] = []
        data = {
            k: strip_unknown(cls.model_fields[k].annotation, v, k, nested, lenient)
            if k in known
            else v
            for k, v in data.items()
        }
        # A client's own `unknown_*` keys are unknown fields like any other.
        kept = {k: v for k, v in data.items() if k in known}
        if nested:
            kept["unknown_nested_fields"] = nested
        if lenient:
            kept["unknown_lenient_fields"] = lenient
        if len(kept) - bool(nested) - bool(lenient) == len(data):
            return kept
        return {**kept, "unknown_input_fields": cls.unknown_in(data)}

    @classmethod
    def unknown_in(cls, data: dict) -> list[str]:
        """The keys of `data` this input does not have, but those whose value is empty."""
        known = cls.model_fields.keys() - BOOKKEEPING
        return sorted(str(k) for k, v in data.items() if k not in known and not empty(v))


BOOKKEEPING = frozenset({"unknown_input_fields", "unknown_nested_fields", "unknown_lenient_fields"})


class Workspace(Contract):
    root: str
    """Absolute path of the checkout on its host."""
    host_queue: str
    """Task queue of the worker on the host that holds `root`."""


class Lineage(Contract):
    """Where an agent sits in its tree (spec R2, R3)."""

    agent_id: str = ""
    chain_id: str = ""
    depth: int = 0
    session_id: str = ""
    parent_workflow_id: str | None = None
    parent_agent_id: str | None = None
    pattern: str = ""
    """The pattern of the session (`pipeline`, `team`, ...); "" = a plain agent session."""


class ParentLink(Contract):
    """How a sub-agent reports back: a signal to its parent's workflow id (no run id, so a
    parent that continued as new still receives it), except a sync sub-agent that completes,
    whose parent reads its result from the handle."""

    workflow_id: str
    agent_id: str
    tool_use_id: str | None = None
    sender: str | None = None
    """The name the parent's SendMessage mail comes under (its name, else its agent id): a
    plan answer from anyone else is mail. None from a parent that does not say (a pattern
    workflow, a parent on an older release): any answer decides, as before."""


class ForkContext(Contract):
    """What a fork inherits from its parent (R46, R47): the rendered prompt and tool bytes by
    reference, the conversation up to the forking assistant message, and its directive."""

    system_ref: str
    tools_ref: str | None
    tools: list[str]
    model: str
    base: TranscriptRef
    """The parent's conversation, ending with the assistant message that forked."""
    prefix: list[Message] = Field(default_factory=list)
    """Messages after `base` shared by every sibling (a fork-join's context and its forking
    assistant message, when no parent conversation exists yet)."""
    tool_use_ids: list[str]
    """The forking assistant message's tool_use ids: each gets the placeholder result."""
    directive: str
    parent_cwd: str | None = None
    """Set for a fork in its own worktree: where the inherited paths point (R50)."""


class TeamLink(Contract):
    """A teammate's place in its team (R69): peers are addressed by name, and the shared
    task list lives in the team's workflow."""

    workflow_id: str
    """The `TeamWorkflow`'s id; a member's id is `<workflow_id>/<name>`."""
    team_name: str
    members: list[str]
    """Every member's name (the lead included), this one too."""
    lead: str = ""
    """The lead's name: teammates' plans go to it for approval (R79)."""


class AgentInput(ClientInput):
    prompt: str
    """The task, sent as the agent's first user message ("" when resuming: the message that
    resumes the agent arrives as a `send_message` signal)."""
    workspace: Workspace
    agent_type: str = "general-purpose"
    definition: AgentDefinition | None = None
    """A resolved snapshot; None = load definitions from the workspace and pick `agent_type`."""
    session_definitions: list[AgentDefinition] = Field(default_factory=list)
    model: str | None = None
    """Alias (`sonnet`) or model id; overrides the definition's model."""
    tools: list[str] | None = None
    """The exact tool list; None = the full pool narrowed by the definition."""
    config: OutlastConfig = OutlastConfig()
    lineage: Lineage = Lineage()
    name: str | None = None
    description: str = ""
    max_turns: int | None = Field(default=None, ge=1)
    parent: ParentLink | None = None
    background: bool = False
    """Launched asynchronously (or moved to the background since)."""
    run_generation: int = 1
    """1 for the first run of this workflow id, +1 for every resume (R66)."""
    resume_from: TranscriptRef | None = None
    """Continue this conversation instead of starting a new one (resume chain, R66)."""
    attributes_at_start: bool = False
    """Its parent started this run with its search attributes (`search_attributes.child_start`):
    the run does not upsert them (patched `attributes-at-start`). A field, not a look at the
    attributes, so the choice rests on the recorded input: a later change to the attributes
    cannot turn a recorded run's choice around. (An older worker ignores the field, as it
    ignores any it does not know: the patch marker is what keeps such a worker off a run
    that skipped the upsert.)"""
    read_file_state: dict[str, FileStamp] = Field(default_factory=dict)
    """A copy of the parent's: what this agent may edit without reading first (R27)."""
    read_state_ref: str | None = None
    """A resumed run's: the stamps its previous run ended with (a blob), loaded at start."""
    plan_file: str | None = None
    """A resumed run's: the plan file its previous run had, so it plans on in it."""
    permission_mode: str | None = None
    worktree: WorktreeInfo | None = None
    """The worktree this agent works in; cleaned up (or kept, if changed) when it ends."""
    definitions: DefinitionSet | None = None
    """The parent's loaded definitions, so a nested spawn does not reload them."""
    fork: ForkContext | None = None
    """Set for a fork child: it inherits instead of rendering its own prompt."""
    query_source: str | None = None
    """`agent:builtin:fork` for forks: the primary recursion guard (R49)."""
    mode: Literal["normal", "coordinator"] = "normal"
    """`coordinator`: a pure orchestrator (R55) with only Agent, SendMessage and TaskStop,
    whose workers run in the background under the phase rules (R59)."""
    scratchpad: str | None = None
    """A directory outside the checkout this agent may read and write (R63)."""
    workspace_is_copy: bool = False
    """The workspace is a disposable copy (a verifier's): its shell may write there, and
    only there (a bubblewrap sandbox with the rest of the filesystem read-only)."""
    write_scope: list[str] | None = None
    """Workspace-relative paths its Write and Edit may change (a coordinator's implementation
    worker: its declared files); None = anywhere in the workspace."""
    mcp_servers: list[str] = Field(default_factory=list)
    """Names of connected MCP servers, as the coordinator is told of them (R58)."""
    team: TeamLink | None = None
    """Set for a member of a `TeamWorkflow`: it waits for mail between turns instead of
    ending, and talks to its peers by name."""
    carry: dict[str, Any] | None = None
    """Set only by the agent's own continue-as-new: its `workflows.carry.AgentCarry`, as
    JSON (typed where it is read; kept opaque here so this module does not import the loop)."""


class AgentUsage(Contract):
    """An agent's totals, as its parent and `<task-notification>` report them (spec R19)."""

    total_tokens: int = 0
    """Latest request's prompt tokens (cache included) plus every output token so far."""
    tool_uses: int = 0
    duration_ms: int = 0
    tokens: Usage = Usage()
    """Sum over every model call."""


AgentState = Literal[
    "starting", "calling_model", "running_tools", "waiting", "finishing", "finished"
]


class ChildSummary(Contract):
    agent_id: str
    name: str | None
    agent_type: str
    description: str
    workflow_id: str
    """"" for a worker still `queued`: it has none yet."""
    status: Literal["queued", "running", "completed", "failed", "killed"]
    """`queued`: a coordinator's worker waiting for its files (R59), only in the `tasks`
    query (the `status` query has them in `queued`, with whom each waits for)."""
    mode: Literal["sync", "background"]
    run_generation: int
    """0 for a worker still `queued`."""
    background_hint: bool = False
    stopped: bool = False
    """Its `killed` was a stop (`outlast stop <parent>/<child>`): the parent's notice reads
    `killed`, as Claude Code's does, and a follow shows `stopped`, as `show` does."""


class QueuedWorker(Contract):
    """A coordinator's worker spawn that waits for its files (R59): no workflow yet, so only
    its coordinator's `status` shows it."""

    agent_id: str
    label: str
    phase: str
    files: list[str] = Field(default_factory=list)
    waits_for: list[str] = Field(default_factory=list)
    """The workers (name, else id) it waits for, running or queued ahead of it."""


class TurnText(Contract):
    """A turn's text, as a follow prints it."""

    turn: int
    text: str


RECENT_TEXTS = 8
"""How many turns' texts the `status` query gives (`AgentStatus.recent_texts`)."""
RECENT_TEXT_CHARS = 400
"""Each cut to this: a follow prints one line of it."""


class AgentStatus(Contract):
    """Answer of the `status` query."""

    agent_id: str
    agent_type: str
    model: str
    state: AgentState
    turn: int
    usage: AgentUsage
    current_tools: list[str] = Field(default_factory=list)
    outcome: str | None = None
    """Once `state` is `finished`: how the run ended, `completed`, `stopped`, `max_turns`,
    `killed` or `failed` (its `AgentStatus` search attribute says the same)."""
    mode: str = "default"
    stop_requested: bool = False
    last_text: str = ""
    background: bool = False
    children: list[ChildSummary] = Field(default_factory=list)
    pending_notifications: int = 0
    mailbox: int = 0
    unread_messages: int = 0
    """Of `mailbox`, the messages (not shutdown or plan protocol): of a killed run, what its
    kill left unread (`show` said none: a user test, 2026-12-07)."""
    refused_signals: list[str] = Field(default_factory=list)
    """The latest signals whose input did not fit, and why (workflows/signal_input.py)."""
    todos: list[TodoItem] = Field(default_factory=list)
    """The agent's todo list (TodoWrite, T7); empty once it has ended."""
    worktree: WorktreeInfo | None = None
    """The worktree its session works in since EnterWorktree (T18), until ExitWorktree."""
    queued: list[QueuedWorker] = Field(default_factory=list)
    """A coordinator's workers waiting for their files, oldest first."""
    recent_texts: list[TurnText] = Field(default_factory=list)
    """The texts of this run's last turns that had one, oldest first: a follow that polls
    less often than turns come prints each (it printed `last_text` and skipped the rest)."""


class TranscriptView(Contract):
    """Answer of the `transcript` query: the whole conversation by reference, plus the
    messages this run has seen (a continued or resumed run starts from `base`)."""

    transcript: TranscriptRef
    base: TranscriptRef
    messages: list[Message]
    compacted: list[TranscriptRef] = Field(default_factory=list)
    """The conversation as it was at each compaction, oldest first (`transcript` starts from
    the last one's summary)."""


class PendingPlan(Contract):
    """A plan waiting for approval at ExitPlanMode (R79)."""

    request_id: str
    plan: str
    plan_file: str
    approver: str = "the user"
    requested_at: datetime | None = None


class PendingQuestion(Contract):
    """Questions waiting for the user's answers at AskUserQuestion (T16): the `question`
    query; answered with the `answer_question` update."""

    request_id: str
    questions: list[Question]
    asked_at: datetime | None = None


class PlanDecision(Contract):
    """Payload of the `approve_plan` / `reject_plan` signals (all fields optional)."""

    request_id: str | None = None
    """The plan decided on (from the `plan` query); None = whichever is pending."""
    approve: bool = True
    """Set by the signal: `approve_plan` approves, `reject_plan` rejects. `approve_plan`
    refuses `false` (into `refused_signals`): a client that meant to reject sends
    `reject_plan`."""
    feedback: str = ""
    """For a rejection: what to change; the model reads it and revises the plan."""
    target_mode: str | None = None
    """For an approval: the permission mode to continue in (default: the one before)."""


class PlanDecisionInput(ClientInput, PlanDecision):
    """The `decide_plan` update's input: a `PlanDecision` that says which way it decides, and
    whose unknown fields are refused. With `approve` defaulting to true, `{"aprove": false}`
    approved the plan: pydantic drops a field a model does not have, and an unknown field
    whose value is empty is let through (a later client's default). Strict: `"yes"` is no
    decision."""

    approve: StrictBool


class PlanView(Contract):
    """Answer of the `plan` query."""

    mode: str
    plan_file: str | None = None
    pre_plan_mode: str = ""
    pending: PendingPlan | None = None
    last_decided: str = ""
    """How the last plan this run waited with was decided: `plan-1 was approved`."""


class StopRequest(Contract):
    reason: str = ""
    team_end: bool = False
    """Sent by a member's team as the team ends: an idle member's end is then its team's, not
    a stop of its own (its result and listing say `completed`, as the team's result does)."""


class MailMessage(Contract):
    """Payload of the `send_message` signal."""

    text: str
    sender: str = "user"
    summary: str | None = None
    id: str | None = None
    """Set by senders that may retry (the resume activity): a repeated id is dropped."""


class BackgroundRequest(Contract):
    """Payload of the `background` signal: move a running sync sub-agent (None = all of
    them) to the background."""

    agent_id: str | None = None


class AgentNotification(Contract):
    """Payload of the `agent_notification` signal a sub-agent sends its parent when it ends."""

    agent_id: str
    run_generation: int
    status: Literal["completed", "failed", "killed"]
    agent_type: str = ""
    description: str = ""
    final_text: str = ""
    """Capped (R39); the whole conversation is at `transcript`."""
    error: str | None = None
    usage: AgentUsage = AgentUsage()
    transcript: TranscriptRef = TranscriptRef()
    output_file: str | None = None
    """The agent's conversation as JSONL (R29), for people; the parent must not read it."""
    read_state_ref: str | None = None
    """The agent's read-file stamps at its end (a blob), for a run that resumes it (R66)."""
    tool_use_id: str | None = None
    worktree_path: str | None = None
    worktree_branch: str | None = None
    handoff_warning: str | None = None
    continues: bool = False
    """Mail came in after this run settled its answer: the next generation is answering it,
    and its own end will follow (the parent waits for that one too)."""
    permission_mode: str | None = None
    """The mode the agent ended in (after an approved plan, the one it went on in): a run
    that resumes it goes on in it, not in the mode it was launched with."""
    plan_file: str | None = None
    """The agent's plan file, if it had one: a run that resumes it keeps it."""
    run_id: str | None = None
    """The run that ended (a continue-as-new changes it): a resume waits for it to close."""
    stopped: bool = False
    """Ended by a `stop` (`outlast stop`, or the agent waiting on it being stopped), not by
    finishing: its parent hears it was stopped, with what it had said (it read `completed`)."""
    stop_reason: str = ""
    max_turns_reached: bool = False
    """Ended at its turn limit, not by finishing: its parent hears that too."""
    unread_messages: int = 0
    """Killed: the messages that had reached it since its last model call, never read (a
    parent's SendMessage as a person killed it was queued and lost without a word). A
    SendMessage that resumes it hands them over first."""


class AgentResult(Contract):
    status: Literal["completed", "failed", "killed"]
    agent_id: str
    agent_type: str
    final_text: str
    usage: AgentUsage
    turns: int
    max_turns_reached: bool = False
    stopped: bool = False
    """Ended by the `stop` signal rather than by the model finishing."""
    stop_reason: str = ""
    """The stop's reason, as its sender gave it; for a kill, the reason the cancel was
    requested with (`outlast kill --reason`, `Task.kill(reason=)`)."""
    permission_mode: str | None = None
    """The mode the agent ended in (see AgentNotification.permission_mode)."""
    plan_file: str | None = None
    """The agent's plan file (see AgentNotification.plan_file)."""
    run_id: str | None = None
    """The run that ended (see AgentNotification.run_id)."""
    transcript: TranscriptRef = TranscriptRef()
    error: str | None = None
    run_generation: int = 1
    worktree_path: str | None = None
    worktree_branch: str | None = None
    handoff_warning: str | None = None
    output_file: str | None = None
    read_state_ref: str | None = None
    """The agent's read-file stamps at its end (a blob), for a run that resumes it (R66)."""
    unstarted_workers: list[str] = Field(default_factory=list)
    """A coordinator's workers that were queued for their files when it ended, and so never
    ran (a killed or failed run, which has no result, names them in its memo under
    `UNSTARTED_MEMO`)."""
    stopped_children: list[str] = Field(default_factory=list)
    """Background sub-agents (name, else agent id) still running at the end and stopped with
    it (R92): their own `killed` notifications reach no one, so the result says it."""
    unread_messages: int = 0
    """Messages that arrived after a stop, or as the last turn was spent, and were never
    read."""
    undelivered: list[str] = Field(default_factory=list)
    """Notifications of its background sub-agents' and commands' ends that came after its
    last turn and that it never read (a stop or the turn limit ended it first): `outlast
    resume`, or a parent's SendMessage, sends them to its next run first."""
    shutdown_approved: bool = False
    """A teammate that approved a shutdown request: it ended as its team asked (R68), so its
    team does not count it stopped."""


class ForkJoinInput(ClientInput):
    """Input of `ForkJoinWorkflow` (R90): N forks of one conversation, joined.

    Start from `context` (a task stated fresh), or from an existing conversation
    (`transcript`, which must end with a user message, plus the `system_ref`/`tools_ref`
    it was rendered with, to fork an agent's exact prompt bytes).
    """

    workspace: Workspace
    directives: list[str] = Field(min_length=1)
    context: str | None = None
    transcript: TranscriptRef | None = None
    system_ref: str | None = None
    tools_ref: str | None = None
    tools: list[str] | None = None
    agent_type: str = "general-purpose"
    """Whose prompt and tools the forks inherit, when no `system_ref` is given."""
    model: str | None = None
    config: OutlastConfig = OutlastConfig()
    synthesize: bool = False
    """After the join, one more model turn that sees every fork's result."""
    synthesis_prompt: str = (
        "All forks have finished; their reports are in the tool results above. Combine them "
        "into one answer: what was found and done, and anything still open."
    )
    description: str = ""


class ForkOutcome(Contract):
    index: int
    directive: str
    agent_id: str
    workflow_id: str
    status: Literal["completed", "failed", "killed"]
    final_text: str = ""
    error: str | None = None
    usage: AgentUsage = AgentUsage()
    stopped: bool = False
    """Completed by a `stop` (`outlast stop <fork-join>/fork-N`), not by finishing."""
    max_turns_reached: bool = False

    def finished(self) -> bool:
        """Whether the fork did its part: completed, not stopped or out of turns."""
        return self.status == "completed" and not (self.stopped or self.max_turns_reached)


class ForkJoinResult(Contract):
    forks: list[ForkOutcome]
    synthesis: str | None = None
    usage: AgentUsage = AgentUsage()
    """All forks' usage (and the synthesis turn's) added up."""
    transcript: TranscriptRef = TranscriptRef()
    """The conversation including every fork's result (and the synthesis, if any)."""
