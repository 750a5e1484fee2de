"""Plan mode in an agent's workflow (spec R75-R80): entering, the permission rule, the
reminders, and the durable wait for approval at ExitPlanMode.

The mode and its counters live in the carried `LoopState`; only the pending plan and its
decision live here, and they never cross a continue-as-new (an agent waiting at
ExitPlanMode is inside a tool call, where no hand-over happens).

Who approves: a top-level agent's plan waits for the `approve_plan` / `reject_plan`
signals (a person, through the CLI or the Web UI); a worker of a coordinator or a teammate
sends a `plan_approval_request` to its lead and waits for the lead's
`plan_approval_response` through SendMessage (R79). Either answer ends the wait.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents.canonical import sha256_hex
from agents.messages import ToolResultBlock
from agents.paths import normalize_path
from agents.permissions import PLAN_MODE, plan_mode_denial
from agents.plan_mode import (
    PLAN_SLUG_BITS,
    approved_plan_result,
    awaiting_lead_text,
    parse_plan_approval_response,
    plan_approval_request_text,
    plan_exited_reminder,
    plan_mode_reminder,
    plan_reentry_reminder,
    plan_request_id,
    plan_slug,
    rejected_plan_result,
    reminder_due,
)

with workflow.unsafe.imports_passed_through():
    from activities.plan_file import PlanFileRequest, PlanText, prepare_plan_file, read_plan

from workflows import versions
from workflows.contracts import (
    AgentInput,
    MailMessage,
    PendingPlan,
    PlanDecision,
    PlanView,
    Workspace,
)
from workflows.loop_types import LoopState
from workflows.signals import signal_workflow
from workflows.turns import ValidCall, error_result

PLAN_REREAD_ON_APPROVAL = "plan-reread-on-approval"
"""Patch id: an approved plan is read again, so edits made while it waited reach the agent
as the plan "(edited by user)"; the agent was given the text it had asked with."""

PERSON_PLAN_NOT_BY_MAIL = "person-plan-not-by-mail"
"""Patch id: a plan waiting for a person's `approve_plan`/`reject_plan` is not decided by a
mail that reads like a lead's `plan_approval_response`; it goes to the mailbox as mail."""
LEAD_ANSWERS_ONLY = "plan-answer-from-lead"
"""Patch id: a teammate's plan is decided only by its lead's answer; a peer's message that
reads like one is mail (it approved the plan the lead had not seen)."""
PARENT_ANSWERS_ONLY = "plan-answer-from-parent"
"""Patch id: a sub-agent's plan is decided only by its parent's answer (or a person's
`approve_plan`); a message from anyone else that reads like one (its own helper's, a
person's `send_message`) is mail: it approved the plan the parent had not seen."""
NO_ASK_AFTER_STOP = "plan-no-ask-after-stop"
"""Patch id: ExitPlanMode after a `stop` asks nobody (it mailed the lead, or showed the plan
as waiting, then ended at once)."""
PLAN_DECIDED_ONCE = "plan-decided-once"
"""Patch id: a plan a person decides while its lead (or parent) was asked is said to that
approver: the lead answered a plan the person had approved (a user test, 2026-12-06). Asked
only then."""
FORK_NO_PLAN_MODE = "fork-no-plan-mode"
"""Patch id: a fork's EnterPlanMode is refused (R30: sub-agents do not enter plan mode; a
fork has the tool only because it inherits its parent's exact tool list). A fork that
entered it asked its parent for approval by mail, and a sync fork's parent, waiting for the
fork, never read it: both waited for ever."""
RESUME_KEEPS_PLAN_FILE = "resume-keeps-plan-file"
"""Patch id: an agent resumed by SendMessage plans on in the plan file its previous run had.
It got a new, empty one: stopped while planning, it had to write its plan again, and a plan
it had written was not the one ExitPlanMode read."""
PLAN_IDS_PER_RUN = "plan-ids-per-run"
"""Patch id: a resumed run's plan requests are `plan-N-runG`. They were `plan-N` in every run,
so the lead's late answer to a stopped run's `plan-1` approved the resumed run's `plan-1`,
a plan the lead had not seen."""
DECISION_IN_ITS_TASK = "plan-decision-in-its-task"
"""Patch id: a person's decision that found no plan waiting decides the plan its own workflow
task makes wait. The SDK runs signal handlers before it resolves activities, so an approval
queued while no worker ran was refused when the plan's read came back in the same task
(the next worker gets both at once), and the agent waited for good (CI, 2026-12-07). Asked
only for such a decision."""
FORK_PLAN_MODE_REFUSED = (
    "EnterPlanMode is not available to a fork: carry out your directive directly (read, "
    "search and report; the agent that forked you plans and asks for approval)."
)

PLAN_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}


class HeldDecision(BaseModel):
    """A person's decision refused for want of a plan, kept for the rest of its task."""

    decision: PlanDecision
    task: int
    """The history length its workflow task started at: it names that task."""
    signal: str
    refusal: str
    """What was said of it, withdrawn if a plan of the same task takes it."""


class Approver(BaseModel):
    """Where a plan goes for approval: a person (None) or the agent's lead by mail."""

    workflow_id: str | None = None
    name: str = "the user"
    sender: str | None = None
    """The name the lead's mail comes under, where it is known (a team's lead, a parent that
    says): an answer from anyone else is mail, not the decision."""
    parent: bool = False
    """The approver is the agent's parent (its check came later, under its own patch)."""


def plan_approver(inp: AgentInput) -> Approver:
    """A teammate asks its team's lead, a sub-agent its parent, a top-level agent a person."""
    team = inp.team
    if team is not None and team.lead and team.lead != inp.name:
        return Approver(
            workflow_id=f"{team.workflow_id}/{team.lead}", name=team.lead, sender=team.lead
        )
    if inp.parent is not None:
        return Approver(
            workflow_id=inp.parent.workflow_id,
            name=inp.parent.agent_id,
            sender=inp.parent.sender,
            parent=True,
        )
    return Approver()


class PlanControl:
    def __init__(self, state: Callable[[], LoopState]) -> None:
        self._state = state
        self.pending: PendingPlan | None = None
        self.decision: PlanDecision | None = None
        self.last_decided = ""
        """How the last plan was decided (`plan-1 was approved`), for a refusal of a second
        decision: "no plan is waiting" left the person who came second to guess (a user
        test, 2026-12-06). In memory only: a run continued as new starts without it."""
        self.approver = Approver()
        self.sender = ""
        self.can_exit = True
        """Whether the agent has ExitPlanMode (a definition's `tools` may leave it out)."""
        self.run_generation = 1
        self.show: Callable[[str], None] = lambda details: None
        self.by_person = False
        """The pending plan's decision came from a person (`decide`), not the lead's mail."""
        self.decided_id = ""
        """The request id of the last plan decided (in memory, as `last_decided`)."""
        self.held: list[HeldDecision] = []
        self.reword: Callable[[str, str | None], None] = lambda refusal, instead: None
        """Takes back (None) or rewords a refusal said of a held decision, once a plan of
        its task has taken it or an earlier one."""

    # --- entering -----------------------------------------------------------------------

    async def start(self, mode: str, workspace: Workspace, plan_file: str | None = None) -> None:
        """An agent started in plan mode (`permission_mode: plan`) plans from its first turn;
        a resumed one in the plan file its previous run had (`plan_file`)."""
        state = self._state()
        state.mode = mode
        # Asked only by a resumed run that had a plan file.
        if plan_file is not None and versions.patched(RESUME_KEEPS_PLAN_FILE):
            state.plan_file, state.plan_file_earlier = plan_file, True
        if mode == PLAN_MODE:
            state.pre_plan_mode = "default"
            await self._ensure_plan_file(workspace)

    async def enter(
        self, workspace: Workspace, call: ValidCall, fork: bool = False
    ) -> ToolResultBlock:
        # Asked only by a fork's call, so no other run records the patch.
        if fork and versions.patched(FORK_NO_PLAN_MODE):
            return error_result(call.block, FORK_PLAN_MODE_REFUSED)
        state = self._state()
        if state.mode == PLAN_MODE:
            return error_result(call.block, "You are already in plan mode.")
        reentry = state.plan_file is not None
        await self._ensure_plan_file(workspace)
        state.pre_plan_mode, state.mode = state.mode or "default", PLAN_MODE
        state.plan_turns = state.plan_attachments = 0
        text = "Entered plan mode. Explore and design; change nothing but the plan file."
        if reentry:
            text += "\n\n" + plan_reentry_reminder(state.plan_file or "")
        return ToolResultBlock(tool_use_id=call.block.id, content=text)

    async def _ensure_plan_file(self, workspace: Workspace) -> None:
        state = self._state()
        if state.plan_file is None:
            slug = plan_slug(workflow.random().getrandbits(PLAN_SLUG_BITS))
            # The id's hash, not its end: every agent named "reviewer" ended in "reviewer",
            # in one plans directory for every session.
            agent = sha256_hex(workflow.info().workflow_id.encode())[:10]
            state.plan_file = await workflow.execute_activity(
                prepare_plan_file,
                PlanFileRequest(slug=f"{slug}-{agent}"),
                task_queue=workspace.host_queue,
                summary="prepare its plan file",
                **PLAN_OPTIONS,
            )

    # --- while planning -----------------------------------------------------------------

    def policy(self, call: ValidCall) -> str | None:
        state = self._state()
        if state.mode != PLAN_MODE or state.plan_file is None:
            return None
        return plan_mode_denial(call.block.name, call.input, state.plan_file, state.cwd)

    def attachments(self, subagent: bool) -> list[str]:
        """R78: the plan-mode reminder on its cadence; once after approval, the exit note."""
        state = self._state()
        if state.mode != PLAN_MODE or state.plan_file is None:
            if state.plan_exited:
                state.plan_exited = False
                return [plan_exited_reminder(state.plan_file or "")]
            return []
        due = reminder_due(state.plan_turns, state.plan_attachments)
        state.plan_turns += 1
        if due is None:
            return []
        state.plan_attachments += 1
        exists: bool | None = normalize_path(state.cwd, state.plan_file) in state.read_state
        if not exists and state.plan_file_earlier:
            # Its stamps are not this run's to know (a top-level resume keeps none): it was
            # told "No plan file exists yet", and its Write of the file was then refused as
            # unread (a user test, 2026-12-06).
            exists = None
        # A sub-agent that asks its lead (it kept ExitPlanMode) is told to; a helper is not.
        asks = subagent and self.approver.workflow_id is not None and self.can_exit
        lead = self.approver.name if asks else None
        reminder = plan_mode_reminder(
            state.plan_file, exists, full=due == "full", subagent=subagent, approver=lead
        )
        return [reminder]

    # --- ExitPlanMode -------------------------------------------------------------------

    async def exit(
        self, workspace: Workspace, call: ValidCall, stop_requested: Callable[[], bool]
    ) -> ToolResultBlock:
        state = self._state()
        if state.mode != PLAN_MODE or state.plan_file is None:
            return error_result(call.block, "You are not in plan mode; there is no plan to exit.")
        plan: PlanText = await workflow.execute_activity(
            read_plan,
            state.plan_file,
            task_queue=workspace.host_queue,
            summary=f"read the plan {state.plan_file}",
            **PLAN_OPTIONS,
        )
        if not (plan.text or "").strip():
            return error_result(
                call.block,
                f"The plan file {state.plan_file} is empty or missing: write your plan there "
                "with Write, then call ExitPlanMode again.",
            )
        state.plan_requests += 1
        # Asked only in a resumed run, the one whose ids changed.
        per_run = self.run_generation > 1 and versions.patched(PLAN_IDS_PER_RUN)
        self.pending = PendingPlan(
            request_id=plan_request_id(state.plan_requests, self.run_generation if per_run else 1),
            plan=plan.text or "",
            plan_file=state.plan_file,
            approver=self.approver.name,
            requested_at=workflow.now(),
        )
        self.decision = None
        self.by_person = False
        self._take_held()
        try:
            # A stop that came first: nobody is asked (asked only then, so no other run
            # records the patch); the lead was mailed a plan the agent would not wait for.
            if self.decision is None and not (
                stop_requested() and versions.patched(NO_ASK_AFTER_STOP)
            ):
                await self._ask(self.pending)
            await workflow.wait_condition(lambda: self.decision is not None or stop_requested())
        finally:
            pending, decision = self.pending, self.decision
            self.pending, self.decision = None, None
        if decision is not None and pending is not None:
            verb = "approved" if decision.approve else "sent back"
            self.last_decided = f"{pending.request_id} was {verb}"
            self.decided_id = pending.request_id
            if self.by_person and self.approver.workflow_id is not None:
                await self._tell_approver(pending, decision)
        if decision is None:
            return error_result(call.block, "Stopped while the plan waited for approval.")
        if decision.approve:
            state.mode = decision.target_mode or state.pre_plan_mode or "default"
            state.plan_exited = True
            plan, edited = await self._approved_text(pending, workspace)
            text = approved_plan_result(plan, pending.plan_file, edited)
            return ToolResultBlock(tool_use_id=call.block.id, content=text)
        return error_result(call.block, rejected_plan_result(decision.feedback))

    async def _approved_text(self, pending: PendingPlan, workspace: Workspace) -> tuple[str, bool]:
        """The plan as approved, and whether it was edited: the person may have changed the
        file while it waited (R79, "edited by user"); the agent carries out what they read."""
        if not versions.patched(PLAN_REREAD_ON_APPROVAL):
            return pending.plan, False
        try:
            now: PlanText = await workflow.execute_activity(
                read_plan,
                pending.plan_file,
                task_queue=workspace.host_queue,
                summary=f"read the approved plan {pending.plan_file}",
                **PLAN_OPTIONS,
            )
        except ActivityError as e:
            if is_cancelled_exception(e):
                raise
            # Approved all the same: the text it asked with, rather than a failed agent.
            workflow.logger.warning("plan not read again at approval: %s", e.cause)
            return pending.plan, False
        if not (now.text or "").strip() or now.text == pending.plan:
            return pending.plan, False
        return now.text or "", True

    async def _ask(self, pending: PendingPlan) -> None:
        if self.approver.workflow_id is None:
            self.show(
                f"## Plan awaiting approval ({pending.request_id})\n\n{pending.plan}\n\n---\n"
                f"Approve: `outlast approve {workflow.info().workflow_id}` · reject: "
                f"`outlast reject {workflow.info().workflow_id} --feedback ...` (signals "
                "`approve_plan` / `reject_plan`)"
            )
            return
        # The approver's workflow too: its name alone (a parent's agent id) found nothing
        # in the Web UI (a user test, 2026-12-07). A person may decide it as well.
        me = workflow.info().workflow_id
        self.show(
            f"plan {pending.request_id} waits for {self.approver.name}'s approval "
            f"(`{self.approver.workflow_id}`); a person may decide it: `outlast approve {me}`"
        )
        request = plan_approval_request_text(pending.request_id, pending.plan, pending.plan_file)
        # The approver drops a mail id it has seen, from anyone: request ids count per agent
        # (and restart in a resumed run), so the id names this run too.
        mail_id = f"{workflow.info().run_id}:{pending.request_id}-ask"
        mail = MailMessage(text=request, sender=self.sender, id=mail_id)
        try:
            await signal_workflow(self.approver.workflow_id, "send_message", mail)
        except ApplicationError:
            workflow.logger.warning("the lead has ended; the plan waits for approve_plan")
        else:
            workflow.logger.info(awaiting_lead_text(self.approver.name))

    async def _tell_approver(self, pending: PendingPlan, decision: PlanDecision) -> None:
        """The lead (or parent) asked for this plan hears that a person decided it: it
        needs no answer (one that comes is said to be about a decided plan, `late_answer`)."""
        if not versions.patched(PLAN_DECIDED_ONCE):
            return
        verb = "approved" if decision.approve else "sent back"
        text = (
            f"My plan {pending.request_id} was {verb} by a person (outlast "
            f"{'approve' if decision.approve else 'reject'}): it needs no answer from you."
        )
        mail_id = f"{workflow.info().run_id}:{pending.request_id}-decided"
        mail = MailMessage(text=text, sender=self.sender, id=mail_id)
        assert self.approver.workflow_id is not None
        try:
            await signal_workflow(self.approver.workflow_id, "send_message", mail)
        except ApplicationError:
            workflow.logger.info("the plan's approver has ended; not told of the decision")

    # --- decisions ----------------------------------------------------------------------

    def hold(self, signal: str, decision: PlanDecision, refusal: str) -> None:
        """Keep a decision just refused for want of a plan (`refusal`), for a plan that its
        own workflow task may yet make wait (`DECISION_IN_ITS_TASK`, asked by the caller)."""
        task = workflow.info().get_current_history_length()
        kept = [h for h in self.held if h.task == task]
        self.held = [
            *kept,
            HeldDecision(decision=decision, task=task, signal=signal, refusal=refusal),
        ]

    def _take_held(self) -> None:
        """The plan just made pending takes the first decision held from this same workflow
        task; the others read as they would have with the plan waiting: decided already."""
        task = workflow.info().get_current_history_length()
        held, self.held = [h for h in self.held if h.task == task], []
        for h in held:
            why = self.decide(h.decision)
            if why is None:
                self.reword(h.refusal, None)
                workflow.logger.info(f"plan {self.pending_id()} takes the decision of its task")
            elif self.decision is not None:
                self.reword(h.refusal, f"signal `{h.signal}` refused: {why}")

    def pending_id(self) -> str:
        return self.pending.request_id if self.pending is not None else ""

    def decide(self, decision: PlanDecision) -> str | None:
        """Apply a person's decision; or, changing nothing, why not (`refusal`)."""
        why = self.refusal(decision)
        if why is None:
            self.decision = decision
            self.by_person = True
        return why

    def refusal(self, decision: PlanDecision) -> str | None:
        """Why `decision` cannot be taken, or None: no plan waits, it was decided already, or
        the decision names another request. Changes nothing (an update's validator asks)."""
        if self.pending is None:
            last = f" (plan {self.last_decided})" if self.last_decided else ""
            return f"no plan is waiting for approval{last}"
        if self.decision is not None:
            verb = "approved" if self.decision.approve else "sent back"
            return f"plan {self.pending.request_id} is decided already: it was {verb}"
        if decision.request_id not in (None, self.pending.request_id):
            return f"the plan waiting is {self.pending.request_id}, not {decision.request_id}"
        if decision.approve and decision.target_mode == PLAN_MODE:
            return "approving into plan mode would approve nothing"
        return None

    def lead_answer(self, message: MailMessage) -> bool:
        """True if `message` is the lead's answer to the pending plan (consumed here)."""
        if self.pending is None or self.decision is not None:
            return False
        answer = parse_plan_approval_response(message.text, self.pending.request_id)
        if answer is None:
            return False
        # A plan a person approves is not approved by mail (a child's or a peer's message
        # with the answer's JSON approved it unseen); asked only then: no other run records it.
        if self.approver.workflow_id is None and versions.patched(PERSON_PLAN_NOT_BY_MAIL):
            return False
        lead = self.approver.sender
        if lead is not None and message.sender != lead:
            # Another's message: mail. Each asked only then: no other run records it.
            if self.approver.parent:
                if versions.patched(PARENT_ANSWERS_ONLY):
                    return False
            elif versions.patched(LEAD_ANSWERS_ONLY):
                return False
        self.decision = PlanDecision(
            request_id=answer.request_id, approve=answer.approve, feedback=answer.feedback or ""
        )
        return True

    def late_answer(self, message: MailMessage) -> MailMessage:
        """`message`, said to answer a plan decided already when it is the approver's answer
        to one: it reached the agent as bare mail, reading like a decision (the mail's text
        only, no command: it goes to the mailbox either way). Dropping it left an idle
        teammate's count of mail received behind its team's, which never went quiet."""
        if self.approver.workflow_id is None or message.sender != self.approver.sender:
            return message
        if self.pending is not None and self.decision is not None:
            # Decided by a person, the agent not yet on its way: `last_decided` is older.
            decided = self.pending.request_id
            verb = "approved" if self.decision.approve else "sent back"
            how = f"{decided} was {verb}"
        elif self.pending is None:
            decided, how = self.decided_id, self.last_decided
        else:
            return message  # a plan still waiting: `lead_answer` takes its answer
        if not decided or parse_plan_approval_response(message.text, decided) is None:
            return message
        note = f"(An answer to plan {decided}, decided already: {how}. It changes nothing.)"
        return message.model_copy(update={"text": f"{note}\n{message.text}"})

    def view(self) -> PlanView:
        state = self._state()
        return PlanView(
            mode=state.mode,
            plan_file=state.plan_file,
            pre_plan_mode=state.pre_plan_mode,
            pending=self.pending,
            last_decided=self.last_decided,
        )
