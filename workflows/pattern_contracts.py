"""Inputs, results and handler payloads of the pattern workflows (coordinator, pipeline,
team, verified task): public, persisted contracts, like `workflows.contracts`, whose types
they build on. Fields are only added, with defaults.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from agents.config import OutlastConfig
from agents.definition import AgentDefinition
from agents.pipeline import DEFAULT_STAGES, PipelineStage, stage_names_problem
from agents.team_tasks import TaskCreateInput, TaskUpdateInput, TeamTask
from workflows.contracts import (
    TEAM_MEMBER_NAME,
    AgentInput,
    AgentUsage,
    ClientInput,
    Contract,
    Workspace,
)
from workflows.resumed import Resumed

VERIFIER_RAN_NOTHING = "verifier-ran-nothing"
"""Patch id (a verified task and a pipeline's verification stage): a PASS from a verifier that
called no tool is a FAIL (`agents.builtin.verification.NOTHING_RAN`); the report's own
`**Command run:**` blocks had made it a PASS (a user test, 2026-12-06)."""


class CoordinatorInput(ClientInput):
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
    resumed: Resumed | None = None
    """A coordinator that ended, going on in this new run of its id (`outlast resume`): its
    agent starts from the conversation it ended with, not from `task`."""


class PipelineInput(ClientInput):
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
    late_agent_types: list[str] = Field(default_factory=list)
    """Agent types an earlier stage defines while the pipeline runs (a `.claude/agents` file
    it writes): not looked up at the start, where any other type no definition has is
    refused (`workflows/agent_types.py`)."""

    @model_validator(mode="after")
    def _unique_stages(self) -> PipelineInput:
        if problem := stage_names_problem(self.stages):
            raise ValueError(problem)
        return self


StageStatus = Literal["completed", "failed", "killed", "rejected"]


class StageOutcome(Contract):
    name: str
    agent_type: str
    workflow_id: str
    attempt: int = 1
    status: StageStatus
    final_text: str = ""
    error: str | None = None
    verdict: str | None = None
    """For a verification stage: PASS, FAIL, PARTIAL, or None if its report has none."""
    verdict_reason: str = ""
    """Why the verdict acted on is not the one claimed (a PASS with no executed check)."""
    usage: AgentUsage = AgentUsage()
    stopped: bool = False
    """Its agent was stopped before it finished (`outlast stop <pipeline>/<stage>`)."""


class PipelineResult(Contract):
    status: Literal["completed", "failed", "rejected", "stopped"]
    stages: list[StageOutcome]
    failed_stage: str | None = None
    """The stage that ended the pipeline early, if one did."""
    message: str = ""
    """One line on how it ended, naming the stage."""
    final_text: str = ""
    """The last completed stage's output: a rejected attempt's, re-run or not, is none."""
    usage: AgentUsage = AgentUsage()


class StageDecision(ClientInput):
    """A person's decision on a stage waiting for approval (`decide_stage` update)."""

    stage: str
    """The stage decided on: must be the one waiting, so a late click cannot approve the
    wrong stage."""
    approve: bool
    feedback: str = ""
    rerun: bool = False
    """With `approve: false`: run the stage again with `feedback`, instead of ending."""
    attempt: int | None = None
    """The attempt decided on (`PipelineView.awaiting_attempt`). When given, it must be the
    one waiting, so a decision taken on an earlier attempt's output cannot pass for the
    re-run's; None decides whichever attempt waits (or finishes next)."""


MAX_STAGE_ATTEMPTS = 3
"""How often one pipeline stage may run: a re-run on a reviewer's feedback beyond it is
refused."""


class PipelineView(Contract):
    """Answer of the `pipeline` query."""

    stages: list[StageOutcome]
    current: str | None = None
    awaiting_approval: str | None = None
    awaiting_attempt: int | None = None
    """The attempt of `awaiting_approval` that waits (1, then 2 after a re-run, ...)."""
    stop_requested: bool = False
    refused_signals: list[str] = Field(default_factory=list)
    """The latest signals whose input did not fit, and why (workflows/signal_input.py)."""
    held_decisions: list[str] = Field(default_factory=list)
    """Decisions taken on a stage still running (`approve look`), applied once it ends."""


class TeammateSpec(ClientInput):
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


class TeamInput(ClientInput):
    """Input of `TeamWorkflow` (R69): a lead and named teammates sharing a task list."""

    team_name: str
    workspace: Workspace
    lead: TeammateSpec
    """The lead gets the user's task as its prompt."""
    teammates: list[TeammateSpec] = Field(default_factory=list)
    """The teammates it starts with; the lead spawns more with `Agent({name, ...})` (R69),
    or all of them when this is empty."""
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
    carry: dict[str, Any] | None = None
    """Set only by the team's own continue-as-new: its `workflows.team_carry.TeamCarry`, as
    JSON (a start from a client that sets it is refused)."""

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


class MemberEnd(Contract):
    """In a member's last report: how its run ends, which a team that has continued as new
    reads instead of the child workflow's result (its handle was the run before's)."""

    status: Literal["completed", "failed", "killed"]
    final_text: str = ""
    error: str | None = None
    unread_messages: int = 0
    max_turns_reached: bool = False
    shutdown_approved: bool = False


class MemberReport(Contract):
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
    """No longer sent (nothing read it, and each wake put up to 2,000 characters of it in the
    team's history twice); kept so that reports recorded before decode."""
    usage: AgentUsage | None = None
    """In a member's last report only: what it spent, so a member killed or failed, whose
    child workflow returns no result, still counts in the team's totals."""
    stopped: bool = False
    """In a member's last report only: a `stop` ended it (working or idle), not its own
    approved shutdown. It comes before the member's end, which may make the team quiet:
    the team reads it while it is not ending yet."""
    end_reason: str = Field(default="", exclude_if=lambda v: not v)
    """In a member's last report only: why it was stopped or killed, as the sender said
    (`outlast kill TEAM/NAME --reason`), for the lead's note; left out when there is none."""
    end: MemberEnd | None = Field(default=None, exclude_if=lambda v: v is None)
    """In a member's last report only: how its run ends (left out of every other report)."""


class TeamMail(ClientInput):
    """Input of a team's `message_member` update: a message from outside the team."""

    to: str
    """A member's name, or `*` for every member."""
    text: str = Field(min_length=1)
    sender: str = "user"


class TaskCreateRequest(ClientInput):
    """Input of a team's `task_create` update (a person's, or a member's TaskCreate call):
    a client input, so a misspelt `caller` is refused, not taken for the default."""

    task: TaskCreateInput
    caller: str = "user"


class TaskUpdateRequest(ClientInput):
    """Input of a team's `task_update` update (as `TaskCreateRequest`)."""

    update: TaskUpdateInput
    caller: str = "user"


class MemberOutcome(Contract):
    name: str
    agent_type: str
    workflow_id: str
    status: Literal["completed", "failed", "killed"]
    stopped: bool = False
    """Ended by a `stop` sent to the member itself, working or idle, before the team began to
    end (its status reads `completed`, as a stopped agent's does). Not a member the team's
    own end stopped, one that approved a shutdown request, or one out of turns."""
    final_text: str = ""
    error: str | None = None
    usage: AgentUsage = AgentUsage()
    unread_messages: int = 0
    """Mail that reached it after it had stopped taking any (a shutdown it approved, the
    team's end): its senders were told it was queued."""
    max_turns_reached: bool = Field(default=False, exclude_if=lambda v: not v)
    """It ended at its turn limit (its status reads `completed`); left out when not."""
    shutdown_approved: bool = Field(default=False, exclude_if=lambda v: not v)
    """It ended by approving a shutdown request (its status reads `completed`): `show` and
    `run` said plain `completed` (a user test, 2026-12-07); left out when not."""


def lost_lead_text(lost: str | None) -> str | None:
    """How a team's lead ended, in words (`TeamResult.lead_lost`'s `failed`, `killed`,
    `stopped`, `out of turns`)."""
    if lost is None:
        return None
    return {"failed": "the lead failed", "out of turns": "the lead ran out of turns"}.get(
        lost, f"the lead was {lost}"
    )


class TeamResult(Contract):
    team_name: str
    status: Literal["completed", "stopped"]
    """`completed`: the team went quiet (every member idle, every message handled);
    `stopped`: a `shutdown` signal ended it."""
    lead_text: str = ""
    members: list[MemberOutcome]
    tasks: list[TeamTask]
    messages: int = 0
    """Messages exchanged inside the team."""

    def unfinished(self) -> list[TeamTask]:
        """Its tasks not completed when it ended: a team whose teammates were lost went quiet
        with every task pending, and `run` said it succeeded (a user test, 2026-12-06)."""
        return [t for t in self.tasks if t.status != "completed"]

    def lead_lost_text(self) -> str | None:
        """`lead_lost` as a person reads it: "the lead failed", not "the lead was failed" (a
        user test, 2026-12-07)."""
        return lost_lead_text(self.lead_lost())

    def lead_lost(self) -> str | None:
        """How the lead (the first member) ended, when it did not complete: a team whose
        lead was killed, failed or stopped went quiet without its task done, though `status`
        reads `completed` (a user test, 2026-12-05)."""
        if self.members and self.members[0].status != "completed":
            return self.members[0].status
        if self.members and self.members[0].stopped:
            return "stopped"
        if self.members and self.members[0].max_turns_reached:
            # The team ends with it (`team-ends-with-lead`), and said nothing of why.
            return "out of turns"
        return None


class MemberView(Contract):
    name: str
    agent_type: str
    workflow_id: str
    state: Literal["starting", "working", "idle", "ended"]
    received: int = 0
    sent: int = 0


class TeamView(Contract):
    """Answer of the `team` query."""

    team_name: str
    members: list[MemberView]
    tasks: list[TeamTask]
    shutting_down: bool = False
    refused_signals: list[str] = Field(default_factory=list)
    """The latest signals whose input did not fit, and why (workflows/signal_input.py)."""


class ShutdownAsk(ClientInput):
    """Input of a team's `request_shutdown` update: ask one member to stop (R68 terminate)."""

    name: str
    reason: str = ""
    timeout_s: float = Field(default=300, gt=0)
    """How long the update waits for the member's answer."""


class ShutdownAnswer(Contract):
    """Payload of a team's `shutdown_response` signal (sent by the member)."""

    name: str
    request_id: str
    approve: bool
    reason: str | None = None


class ShutdownOutcome(Contract):
    request_id: str
    name: str
    answered: bool
    approve: bool = False
    reason: str | None = None


class MemberRef(Contract):
    """Payload of a team's `kill_member` signal."""

    name: str


class AddMemberRequest(ClientInput):
    """Input of a team's `add_member` update: a teammate the lead spawns with
    `Agent({name, ...})` (R69). A client input: a misspelt field in it or in its `spec`
    (`plan_mode_requird`) is refused; it started a member that skipped plan approval (a
    user test, 2026-12-05). So are `task_create`'s and `task_update`'s. Agents' own calls send
    these too: a release that adds a field to them sends it set only once every worker has
    the field (left at its empty default, it is dropped, not refused)."""

    spec: TeammateSpec
    caller: str
    """The member asking: only the lead adds teammates."""


class TeamMembers(Contract):
    """Payload of a member's `team_members` signal: every member's name, now that one
    joined, so SendMessage reaches the newcomer (and `*` includes it)."""

    members: list[str]


class VerifiedTaskInput(ClientInput):
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
    late_agent_types: list[str] = Field(default_factory=list)
    """Agent types the implementer defines while the task runs (a `.claude/agents` file it
    writes, for the verifier): not looked up at the start, where any other type no
    definition has is refused (`workflows/agent_types.py`). The implementer starts at once,
    so its own type named here is only found missing at its start, as before the check."""


class VerificationCheck(Contract):
    title: str
    command: str | None = None
    output: str | None = None
    result: Literal["PASS", "FAIL", "skip"]


class VerificationRound(Contract):
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
    verifier_killed: bool = False
    """A person killed its verifier before it reported: its FAIL is no finding on the work."""

    verifier_failed: bool = False
    """Its verifier failed before it reported (the task treats that as no verdict)."""

    @property
    def verified(self) -> bool:
        """A verifier ran and reported: its verdict is a finding on the work. Not so for a
        round whose implementer stopped or failed, or whose verifier was killed or failed:
        their FAIL read as the verifier's rejection (a user test, 2026-12-07)."""
        return bool(self.verifier_workflow_id) and not (
            self.verifier_killed or self.verifier_failed
        )


class VerifiedTaskResult(Contract):
    status: Literal["passed", "failed", "partial"]
    """passed: a verifier said PASS; partial: the last verdict was PARTIAL (an environment
    limit); failed: FAIL after `max_rounds`, or the implementer failed."""
    rounds: list[VerificationRound]
    message: str = ""
    final_text: str = ""
    """The implementer's last report."""
    usage: AgentUsage = AgentUsage()
