"""Workflow inputs, results, and signal/query payloads: public, persisted contracts.

Anything here is stored in Temporal history and read by clients in other processes (the
CLI, other languages' SDKs starting a workflow by name with JSON). Fields are only added,
with defaults.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from temporalio import workflow

from agents.config import OutlastConfig
from agents.definition import AgentDefinition, DefinitionSet
from agents.messages import Message, Usage
from agents.pipeline import DEFAULT_STAGES, PipelineStage, stage_names_problem
from agents.team_tasks import TaskCreateInput, TaskUpdateInput, TeamTask
from agents.transcript import TranscriptRef

with workflow.unsafe.imports_passed_through():
    from activities.tools.base import FileStamp
    from activities.worktree import WorktreeInfo

TEAM_MEMBER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

TASK_QUEUE = "outlast"
"""Workflows and model calls; any worker serves it."""


def host_task_queue(host_id: str) -> str:
    """Tools and worktrees need the files, so they run on the queue of the host holding them."""
    return f"outlast-host-{host_id}"


class _Contract(BaseModel):
    model_config = ConfigDict(frozen=True)


class Workspace(_Contract):
    root: str
    """Absolute path of the checkout on its host."""
    host_queue: str
    """Task queue of the worker on the host that holds `root`."""


class Lineage(_Contract):
    """Where an agent sits in its tree (spec R2, R3)."""

    agent_id: str = ""
    chain_id: str = ""
    depth: int = 0
    session_id: str = ""
    parent_workflow_id: str | None = None
    parent_agent_id: str | None = None


class ParentLink(_Contract):
    """How a sub-agent reports back: a signal to its parent's workflow id (no run id, so a
    parent that continued as new still receives it)."""

    workflow_id: str
    agent_id: str
    tool_use_id: str | None = None


class ForkContext(_Contract):
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


class TeamLink(_Contract):
    """A teammate's place in its team (R69): peers are addressed by name, and the shared
    task list lives in the team's workflow."""

    workflow_id: str
    """The `TeamWorkflow`'s id; a member's id is `<workflow_id>/<name>`."""
    team_name: str
    members: list[str]
    """Every member's name (the lead included), this one too."""
    lead: str = ""
    """The lead's name: teammates' plans go to it for approval (R79)."""


class AgentInput(_Contract):
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
    read_file_state: dict[str, FileStamp] = Field(default_factory=dict)
    """A copy of the parent's: what this agent may edit without reading first (R27)."""
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


class AgentUsage(_Contract):
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


class ChildSummary(_Contract):
    agent_id: str
    name: str | None
    agent_type: str
    description: str
    workflow_id: str
    status: Literal["running", "completed", "failed", "killed"]
    mode: Literal["sync", "background"]
    run_generation: int
    background_hint: bool = False


class AgentStatus(_Contract):
    """Answer of the `status` query."""

    agent_id: str
    agent_type: str
    model: str
    state: AgentState
    turn: int
    usage: AgentUsage
    current_tools: list[str] = Field(default_factory=list)
    mode: str = "default"
    stop_requested: bool = False
    last_text: str = ""
    background: bool = False
    children: list[ChildSummary] = Field(default_factory=list)
    pending_notifications: int = 0
    mailbox: int = 0


class TranscriptView(_Contract):
    """Answer of the `transcript` query: the whole conversation by reference, plus the
    messages this run has seen (a continued or resumed run starts from `base`)."""

    transcript: TranscriptRef
    base: TranscriptRef
    messages: list[Message]


class PendingPlan(_Contract):
    """A plan waiting for approval at ExitPlanMode (R79)."""

    request_id: str
    plan: str
    plan_file: str
    approver: str = "the user"
    requested_at: datetime | None = None


class PlanDecision(_Contract):
    """Payload of the `approve_plan` / `reject_plan` signals (all fields optional)."""

    request_id: str | None = None
    """The plan decided on (from the `plan` query); None = whichever is pending."""
    approve: bool = True
    """Set by the signal: `approve_plan` approves, `reject_plan` rejects."""
    feedback: str = ""
    """For a rejection: what to change; the model reads it and revises the plan."""
    target_mode: str | None = None
    """For an approval: the permission mode to continue in (default: the one before)."""


class PlanView(_Contract):
    """Answer of the `plan` query."""

    mode: str
    plan_file: str | None = None
    pre_plan_mode: str = ""
    pending: PendingPlan | None = None


class StopRequest(_Contract):
    reason: str = ""


class MailMessage(_Contract):
    """Payload of the `send_message` signal."""

    text: str
    sender: str = "user"
    summary: str | None = None
    id: str | None = None
    """Set by senders that may retry (the resume activity): a repeated id is dropped."""


class BackgroundRequest(_Contract):
    """Payload of the `background` signal: move a running sync sub-agent (None = all of
    them) to the background."""

    agent_id: str | None = None


class AgentNotification(_Contract):
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
    tool_use_id: str | None = None
    worktree_path: str | None = None
    worktree_branch: str | None = None
    handoff_warning: str | None = None


class AgentResult(_Contract):
    status: Literal["completed", "failed", "killed"]
    agent_id: str
    agent_type: str
    final_text: str
    usage: AgentUsage
    turns: int
    max_turns_reached: bool = False
    stopped: bool = False
    """Ended by the `stop` signal rather than by the model finishing."""
    transcript: TranscriptRef = TranscriptRef()
    error: str | None = None
    run_generation: int = 1
    worktree_path: str | None = None
    worktree_branch: str | None = None
    handoff_warning: str | None = None
    output_file: str | None = None
    unstarted_workers: list[str] = Field(default_factory=list)
    """A coordinator's workers that were queued for their files when it ended, and so never
    ran."""


class ForkJoinInput(_Contract):
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


class ForkOutcome(_Contract):
    index: int
    directive: str
    agent_id: str
    workflow_id: str
    status: Literal["completed", "failed", "killed"]
    final_text: str = ""
    error: str | None = None
    usage: AgentUsage = AgentUsage()


class ForkJoinResult(_Contract):
    forks: list[ForkOutcome]
    synthesis: str | None = None
    usage: AgentUsage = AgentUsage()
    """All forks' usage (and the synthesis turn's) added up."""
    transcript: TranscriptRef = TranscriptRef()
    """The conversation including every fork's result (and the synthesis, if any)."""


class CoordinatorInput(_Contract):
    """Input of `CoordinatorWorkflow` (R55): a task for a coordinator that only directs
    workers (Agent, SendMessage, TaskStop) and answers with their synthesized results."""

    task: str = Field(min_length=1)
    workspace: Workspace
    model: str | None = None
    config: OutlastConfig = OutlastConfig()
    max_turns: int | None = Field(default=None, ge=1)
    mcp_servers: list[str] = Field(default_factory=list)
    session_definitions: list[AgentDefinition] = Field(default_factory=list)
    description: str = ""
    agent: AgentInput | None = None
    """Set only by the coordinator's own continue-as-new: the agent input it carries on."""


class PipelineInput(_Contract):
    """Input of `PipelineWorkflow` (R87): stages run one after another, each a child agent
    whose final answer is handed to the next stage's prompt."""

    task: str = Field(min_length=1)
    workspace: Workspace
    stages: list[PipelineStage] = Field(default_factory=lambda: list(DEFAULT_STAGES), min_length=1)
    approve_between: bool = False
    """Every stage but the last waits for approval (as if each had `approval: true`)."""
    model: str | None = None
    config: OutlastConfig = OutlastConfig()
    description: str = ""

    @model_validator(mode="after")
    def _unique_stages(self) -> PipelineInput:
        if problem := stage_names_problem(self.stages):
            raise ValueError(problem)
        return self


StageStatus = Literal["completed", "failed", "killed", "rejected"]


class StageOutcome(_Contract):
    name: str
    agent_type: str
    workflow_id: str
    attempt: int = 1
    status: StageStatus
    final_text: str = ""
    error: str | None = None
    verdict: str | None = None
    """For a verification stage: PASS, FAIL, PARTIAL, or None if its report has none."""
    usage: AgentUsage = AgentUsage()


class PipelineResult(_Contract):
    status: Literal["completed", "failed", "rejected", "stopped"]
    stages: list[StageOutcome]
    failed_stage: str | None = None
    """The stage that ended the pipeline early, if one did."""
    message: str = ""
    """One line on how it ended, naming the stage."""
    final_text: str = ""
    """The last completed stage's output."""
    usage: AgentUsage = AgentUsage()


class StageDecision(_Contract):
    """A person's decision on a stage waiting for approval (`decide_stage` update)."""

    stage: str
    """The stage decided on: must be the one waiting, so a late click cannot approve the
    wrong stage."""
    approve: bool
    feedback: str = ""
    rerun: bool = False
    """With `approve: false`: run the stage again with `feedback`, instead of ending."""


class PipelineView(_Contract):
    """Answer of the `pipeline` query."""

    stages: list[StageOutcome]
    current: str | None = None
    awaiting_approval: str | None = None
    stop_requested: bool = False


class TeammateSpec(_Contract):
    """One member of a `TeamWorkflow`."""

    name: str
    """Unique in the team; its workflow id is `<team workflow id>/<name>`."""
    prompt: str = Field(min_length=1)
    """Its first instructions (as if written to its mailbox by the lead)."""
    agent_type: str = "general-purpose"
    model: str | None = None
    plan_mode_required: bool = False
    """Starts in plan mode: its plan goes to the lead for approval before it changes
    anything (R69 `planModeRequired`, R79)."""

    @model_validator(mode="after")
    def _valid_name(self) -> TeammateSpec:
        if not TEAM_MEMBER_NAME.match(self.name) or self.name in ("*", "main", "team"):
            raise ValueError(
                f"teammate name '{self.name}' must start with a letter or digit and contain "
                "only letters, digits, '_' and '-' (and not be main or team)"
            )
        return self


class TeamInput(_Contract):
    """Input of `TeamWorkflow` (R69): a lead and named teammates sharing a task list."""

    team_name: str
    workspace: Workspace
    lead: TeammateSpec
    """The lead gets the user's task as its prompt."""
    teammates: list[TeammateSpec] = Field(min_length=1)
    tasks: list[TaskCreateInput] = Field(default_factory=list)
    """The task list to start with."""
    end_when_quiet: bool = True
    """End once every member is idle and no message is in flight; False: run until the
    `shutdown` signal (a standing team that waits for `message_member`)."""
    backend: Literal["in-process"] = "in-process"
    """Where teammates run (R70, R71): `in-process` = each an `AgentWorkflow` on the shared
    queue. Claude Code's tmux and iTerm2 panes have no equivalent yet."""
    config: OutlastConfig = OutlastConfig()
    model: str | None = None

    @model_validator(mode="after")
    def _unique_names(self) -> TeamInput:
        names = [self.lead.name, *(t.name for t in self.teammates)]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"team member names must be unique; repeated: {', '.join(repeated)}")
        if not TEAM_MEMBER_NAME.match(self.team_name):
            raise ValueError(f"team name '{self.team_name}' must be letters, digits, '_' or '-'")
        return self

    def members(self) -> list[TeammateSpec]:
        return [self.lead, *self.teammates]


class MemberReport(_Contract):
    """Payload of a team's `member_state` signal: a member went idle (or woke up).

    Counts are cumulative, so the team can tell that every message sent inside the team has
    been received and handled (no member busy, nothing in flight) before it ends.
    """

    name: str
    idle: bool
    sent_to: dict[str, int] = Field(default_factory=dict)
    """Team messages this member has sent, per recipient."""
    received: int = 0
    """Team messages this member has received (from members or the team)."""
    last_text: str = ""


class TeamMail(_Contract):
    """Input of a team's `message_member` update: a message from outside the team."""

    to: str
    """A member's name, or `*` for every member."""
    text: str = Field(min_length=1)
    sender: str = "user"


class TaskCreateRequest(_Contract):
    task: TaskCreateInput
    caller: str = "user"


class TaskUpdateRequest(_Contract):
    update: TaskUpdateInput
    caller: str = "user"


class MemberOutcome(_Contract):
    name: str
    agent_type: str
    workflow_id: str
    status: Literal["completed", "failed", "killed"]
    final_text: str = ""
    error: str | None = None
    usage: AgentUsage = AgentUsage()


class TeamResult(_Contract):
    team_name: str
    status: Literal["completed", "stopped"]
    """`completed`: the team went quiet (every member idle, every message handled);
    `stopped`: a `shutdown` signal ended it."""
    lead_text: str = ""
    members: list[MemberOutcome]
    tasks: list[TeamTask]
    messages: int = 0
    """Messages exchanged inside the team."""


class MemberView(_Contract):
    name: str
    agent_type: str
    workflow_id: str
    state: Literal["starting", "working", "idle", "ended"]
    received: int = 0
    sent: int = 0


class TeamView(_Contract):
    """Answer of the `team` query."""

    team_name: str
    members: list[MemberView]
    tasks: list[TeamTask]
    shutting_down: bool = False


class ShutdownAsk(_Contract):
    """Input of a team's `request_shutdown` update: ask one member to stop (R68 terminate)."""

    name: str
    reason: str = ""
    timeout_s: float = Field(default=300, gt=0)
    """How long the update waits for the member's answer."""


class ShutdownAnswer(_Contract):
    """Payload of a team's `shutdown_response` signal (sent by the member)."""

    name: str
    request_id: str
    approve: bool
    reason: str | None = None


class ShutdownOutcome(_Contract):
    request_id: str
    name: str
    answered: bool
    approve: bool = False
    reason: str | None = None


class MemberRef(_Contract):
    """Payload of a team's `kill_member` signal."""

    name: str


class VerifiedTaskInput(_Contract):
    """Input of `VerifiedTaskWorkflow` (R85, R89): implement, verify with a fresh verifier,
    send the findings back, repeat up to `max_rounds`."""

    task: str = Field(min_length=1)
    workspace: Workspace
    max_rounds: int = Field(default=3, ge=1, le=10)
    implementer_type: str = "general-purpose"
    verifier_type: str = "verification"
    model: str | None = None
    config: OutlastConfig = OutlastConfig()
    description: str = ""


class VerificationCheck(_Contract):
    title: str
    command: str | None = None
    output: str | None = None
    result: Literal["PASS", "FAIL", "skip"]


class VerificationRound(_Contract):
    round: int
    implementer_status: Literal["completed", "failed", "killed"]
    implementer_text: str = ""
    changed_files: list[str] = Field(default_factory=list)
    verifier_workflow_id: str = ""
    verdict: Literal["PASS", "FAIL", "PARTIAL"]
    verdict_reason: str = ""
    """Why the verdict acted on differs from the report's own (a missing VERDICT line, a
    PASS without any executed check), or why no verifier ran."""
    checks: list[VerificationCheck] = Field(default_factory=list)
    probes_found: bool = False
    report: str = ""


class VerifiedTaskResult(_Contract):
    status: Literal["passed", "failed", "partial"]
    """passed: a verifier said PASS; partial: the last verdict was PARTIAL (an environment
    limit); failed: FAIL after `max_rounds`, or the implementer failed."""
    rounds: list[VerificationRound]
    message: str = ""
    final_text: str = ""
    """The implementer's last report."""
    usage: AgentUsage = AgentUsage()
