"""The signals, queries and update `AgentWorkflow` answers (their names are permanent).

Each handler checks what it is sent and changes the agent's state for its loop to act on at
the next turn boundary; none calls an activity. A mixin: the state it reads and writes is set
up in `AgentWorkflow.__init__` (workflows/agent.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from agents.messages import Message
from agents.notifications import CALLER_STOPPED
from agents.permissions import PLAN_MODE, RESUME_MODES
from agents.questions import QuestionAnswers
from agents.team_protocol import protocol_type
from agents.transcript import TranscriptRef
from workflows import search_attributes as sa
from workflows import versions
from workflows.carry import SEEN_MAIL_KEPT
from workflows.client_input import check_update_fields, require_update_input
from workflows.contracts import (
    RECENT_TEXT_CHARS,
    RECENT_TEXTS,
    AgentNotification,
    AgentStatus,
    AgentUsage,
    BackgroundRequest,
    ChildSummary,
    MailMessage,
    PendingQuestion,
    PlanDecision,
    PlanDecisionInput,
    PlanView,
    StopRequest,
    TeamLink,
    TranscriptView,
    TurnText,
)
from workflows.loop_types import LoopState
from workflows.pattern_contracts import TeamMembers
from workflows.plan_control import DECISION_IN_ITS_TASK, PlanControl
from workflows.question_control import QuestionControl
from workflows.registry import ChildRegistry
from workflows.shells import ShellEnd
from workflows.signal_input import UNKNOWN_FIELDS, Refusals
from workflows.signals import signal_workflow
from workflows.subagents import SubAgents
from workflows.team_losses import LOSS_SENDER
from workflows.team_member import TeamCounters, is_team_mail, on_team_mail
from workflows.team_spawn import merged_names

STOP_REACHES_SYNC_CHILDREN = "stop-reaches-sync-children"
"""Patch id: a stop of an agent waiting on sync sub-agents is sent on to them; it waited for
their ends, which a sub-agent kept going (or a hook that kept blocking) put off for good."""


APPROVE_FALSE = "plan-approve-false-refused"
"""Patch id: `approve_plan` with `approve: false` is refused; it approved the plan a client
meant to reject (the field is in the signal's input, and a raw client set it)."""

TEAMMATE_STAYS_SYNC = "teammate-background-refused"
"""Patch id: the `background` signal to a teammate is refused (R73: its sub-agents run
synchronously); it had moved them, as for any agent."""
BLANK_MAIL = "blank-mail-refused"
"""Patch id: a `send_message` with blank text is refused; it was read into the next turn,
whose model call the API refused (400), failing the agent."""
BACKGROUNDED_CHECKED = "set-backgrounded-checked"
"""Patch id: a `set_backgrounded` no parent could have sent (with an input, or to an agent
with no parent) is refused; it marked any agent `IsBackground`, a sync one included."""


AGENT_SIGNALS = (
    "stop",
    "send_message",
    "background",
    "approve_plan",
    "reject_plan",
    "agent_notification",
    "shell_notification",
    "team_members",
    "set_backgrounded",
)
"""Every signal an agent takes, those people send first (the dynamic handler names them)."""


class AgentHandlers:
    """`AgentWorkflow`'s handlers, over the state its `__init__` sets up (declared here)."""

    _state: LoopState
    _messages: list[Message]
    _base: TranscriptRef
    _phase: str
    _outcome: str | None
    _ended_usage: AgentUsage | None
    _current_tools: list[str]
    _stop: StopRequest | None
    _agent_type: str
    _model: str
    _agent_id: str
    _background: bool
    _has_parent: bool
    _mailbox: list[MailMessage]
    _seen_mail: list[str]
    _refusals: Refusals
    _registry: ChildRegistry
    _subagents: SubAgents
    _upserts: bool
    _sync_stops: list[asyncio.Future]
    _team: TeamLink | None
    _team_counts: TeamCounters
    _plans: PlanControl
    _questions: QuestionControl

    def _refresh_details(self) -> None:
        raise NotImplementedError  # AgentWorkflow's: the Web UI's current details

    # The signals people send take plain JSON and check it (workflows/signal_input.py): one
    # that does not fit is refused in the status query and the details, not dropped unseen.

    @workflow.signal(dynamic=True)
    def unknown_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """A signal of a name the agent has no handler for is refused, not lost unseen."""
        self._refusals.unknown_signal(workflow.info().workflow_type, name, AGENT_SIGNALS)
        self._refresh_details()

    @workflow.signal(name="stop")
    def stop(self, request: Any = None, *extra: Any) -> None:
        """End after the current turn: the model is not called again."""
        checked = self._refusals.checked(
            "stop", StopRequest, request, extra, default={}, strict=False
        )
        if checked is None:
            self._refresh_details()
            return
        if self._stop is not None and not checked.reason:
            # A second stop with no reason of its own erased the first's (a review,
            # 2026-12-06). State only: no command depends on the reason.
            checked = checked.model_copy(update={"reason": self._stop.reason})
        self._stop = checked
        waited_on = [t for t in self._registry.running() if t.mode == "sync"]
        # Asked only when it waits on one: the stop reached it only after that child's end.
        if waited_on and versions.patched(STOP_REACHES_SYNC_CHILDREN):
            self._sync_stops.append(asyncio.ensure_future(self._stop_children(waited_on)))

    async def _stop_children(self, children: list) -> None:
        """A stop of an agent waiting on sync sub-agents reaches them too: each ends after its
        own current turn, so the wait ends, and then this agent (Esc stops the whole tree in
        Claude Code)."""
        reason = StopRequest(reason=CALLER_STOPPED)
        for child in children:
            try:
                await signal_workflow(child.workflow_id, "stop", reason)
            except ApplicationError:
                pass  # it has ended meanwhile: nothing to stop

    @workflow.signal(name="send_message")
    def send_message(self, raw: Any = None, *extra: Any) -> None:
        """Queue a message for the next turn boundary (R65); a repeated id is dropped."""
        message = self._refusals.checked("send_message", MailMessage, raw, extra, strict=False)
        # Asked only for a blank one: the API refuses a blank text block, which failed the
        # agent at its next model call.
        if message is not None and not message.text.strip() and versions.patched(BLANK_MAIL):
            self._refusals.keep("signal `send_message` refused: the text is empty")
            message = None
        if message is None:
            self._refresh_details()
            return
        if message.id is not None:
            if message.id in self._seen_mail:
                return
            self._seen_mail = [*self._seen_mail[-(SEEN_MAIL_KEPT - 1) :], message.id]
        if is_team_mail(message):
            on_team_mail(self._team_counts, message)  # counted even when consumed below
        if self._plans.lead_answer(message):
            return  # the lead's answer to the plan waiting at ExitPlanMode (R79)
        self._mailbox.append(self._plans.late_answer(message))

    # The signals below are Outlast's own, but anyone can send them: they check their input
    # too, since one that does not fit the handler's arguments fails every workflow task.

    @workflow.signal(name="agent_notification")
    def agent_notification(self, raw: Any = None, *extra: Any) -> None:
        """A sub-agent's run ended (sent by the sub-agent itself)."""
        end = self._refusals.checked(
            "agent_notification", AgentNotification, raw, extra, strict=False
        )
        if end is not None:
            self._subagents.on_notification(end)
        self._refresh_details()

    @workflow.signal(name="shell_notification")
    def shell_notification(self, raw: Any = None, *extra: Any) -> None:
        """A background command ended (sent by its `ShellTaskWorkflow`)."""
        end = self._refusals.checked("shell_notification", ShellEnd, raw, extra, strict=False)
        if end is not None:
            self._registry.record_shell_end(end)
        self._refresh_details()

    @workflow.signal(name="team_members")
    def team_members(self, raw: Any = None, *extra: Any) -> None:
        """A teammate joined this agent's team (sent by the team, R69): SendMessage reaches
        it by name, and `*` includes it."""
        members = self._refusals.checked("team_members", TeamMembers, raw, extra, strict=False)
        if members is None:
            self._refresh_details()
        elif self._team is not None:
            # Merged, not replaced: two adds' lists may arrive in either order, and a name
            # is never dropped (a member that ended keeps its name).
            self._team = self._team.model_copy(
                update={"members": merged_names(self._team.members, members.members)}
            )

    @workflow.signal(name="set_backgrounded")
    def set_backgrounded(self, *given: Any) -> None:
        """This agent's parent stopped waiting for it: it now runs in the background."""
        problem = backgrounded_problem(given, self._has_parent)
        # Asked only for such a signal: every other run's history stays as it was.
        if problem is not None and versions.patched(BACKGROUNDED_CHECKED):
            self._refusals.keep(f"signal `set_backgrounded` refused: {problem}")
            self._refresh_details()
            return
        self._background = True
        if self._upserts:
            workflow.upsert_search_attributes([sa.IS_BACKGROUND.value_set(True)])

    @workflow.signal(name="background")
    def background(self, request: Any = None, *extra: Any) -> None:
        """Move a running sync sub-agent (or all of them) to the background (R22)."""
        checked = self._refusals.checked(
            "background", BackgroundRequest, request, extra, default={}
        )
        if checked is None:
            self._refresh_details()
            return
        # Asked only by a signal to a teammate, so no other run records it.
        if self._team is not None and versions.patched(TEAMMATE_STAYS_SYNC):
            # R73: a teammate's sub-agents run synchronously; moved, its turn went on while
            # the Agent tool had refused it that (a user test, 2026-12-06).
            self._refusals.keep(
                "signal `background` refused: a teammate's sub-agents run synchronously (R73)"
            )
            self._refresh_details()
            return
        if not self._subagents.on_background(checked):
            # Said where the sender looks; nothing waits for it (it is not kept for later).
            named = f" named {checked.agent_id}" if checked.agent_id else ""
            self._refusals.keep(
                f"signal `background` refused: no synchronous sub-agent{named} is running"
            )
            self._refresh_details()

    @workflow.query(name="status")
    def status(self) -> AgentStatus:
        return AgentStatus(
            agent_id=self._agent_id,
            agent_type=self._agent_type,
            model=self._model,
            state=self._phase,  # type: ignore[arg-type]
            outcome=self._outcome,
            turn=self._state.turns,
            usage=self._ended_usage or self._state.usage,
            current_tools=self._current_tools,
            mode=self._state.mode or "default",
            stop_requested=self._stop is not None,
            last_text=self._state.last_text,
            background=self._background,
            children=self._children(),
            pending_notifications=len(self._registry.queue),
            mailbox=len(self._mailbox),
            unread_messages=self._unread_words(),
            refused_signals=self._refusals.texts,
            todos=self._state.todos,
            worktree=self._state.worktree.info if self._state.worktree else None,
            queued=self._subagents.phases.queued_view(),
            recent_texts=recent_texts(self._messages, self._state.turns),
        )

    def _unread_words(self) -> int:
        """The mail not yet read that is someone's words: not a shutdown or plan protocol
        message, nor the team's note of a member lost (a killed team's lead read as having
        unread mail from its members' kills: a user test, 2026-12-07)."""
        # `system` may also be a member's name: its mail counts.
        members = self._team.members if self._team is not None else []
        notes = LOSS_SENDER if LOSS_SENDER not in members else None
        return sum(1 for m in self._mailbox if protocol_type(m.text) is None and m.sender != notes)

    @workflow.signal(name="approve_plan")
    def approve_plan(self, decision: Any = None, *extra: Any) -> None:
        """Approve the plan waiting at ExitPlanMode (R79); nothing waits: nothing changes."""
        self._plan_decision("approve_plan", decision, extra, approve=True)

    @workflow.signal(name="reject_plan")
    def reject_plan(self, decision: Any = None, *extra: Any) -> None:
        """Send the plan back with feedback; the agent stays in plan mode and revises it."""
        self._plan_decision("reject_plan", decision, extra, approve=False)

    def _plan_decision(self, signal: str, raw: Any, extra: tuple, approve: bool) -> None:
        checked = self._refusals.checked(signal, PlanDecision, raw, extra, default={})
        if checked is None:
            self._refresh_details()
            return
        mode = checked.target_mode
        why: str | None
        held: PlanDecision | None = None
        if (
            approve
            and not checked.approve
            and self._plans.pending is not None
            and self._plans.decision is None
            and versions.patched(APPROVE_FALSE)
        ):
            # Only this way round: a client's `reject_plan` carries the default `approve:
            # true` (every field is sent), and a rejection loses nothing anyway. Asked only
            # with a plan to decide: without one, both releases refuse it the same way.
            why = "approve false contradicts `approve_plan`: `reject_plan` rejects a plan"
        elif (
            approve
            and mode not in (None, PLAN_MODE, *RESUME_MODES)
            and versions.patched(UNKNOWN_FIELDS)
        ):
            why = f"target_mode {mode} is no mode: one of {', '.join(RESUME_MODES)}"
        else:
            decision = checked.model_copy(update={"approve": approve})
            why = self._plans.decide(decision)
            if (
                why is not None
                and self._plans.pending is None
                # `approve_plan` with `approve: false` is refused, plan or none (above).
                and not (approve and not checked.approve)
                and versions.patched(DECISION_IN_ITS_TASK)
            ):
                held = decision
        if why is not None:
            refusal = f"signal `{signal}` refused: {why}"
            self._refusals.keep(refusal)
            if held is not None:
                self._plans.hold(signal, held, refusal)
            self._refresh_details()

    def _reword_refusal(self, refusal: str, instead: str | None) -> None:
        self._refusals.reword(refusal, instead)
        self._refresh_details()

    @workflow.update(name="decide_plan")
    def decide_plan(self, decision: PlanDecisionInput | None = None) -> str:
        """A person's decision on the plan waiting (`approve` says which), answered: the
        signals `approve_plan`/`reject_plan` cannot say that another decision came first, and
        two people approving at once were both told it was theirs (a user test, 2026-12-06).
        Returns the id of the plan decided."""
        if decision is None:  # the validator refuses an update without one
            raise ApplicationError("update `decide_plan` needs an input", non_retryable=True)
        pending = self._plans.pending
        # The validator ran just before, in the same activation: nothing decided meanwhile.
        if why := self._plans.decide(decision):
            raise ApplicationError(f"update `decide_plan` refused: {why}", non_retryable=True)
        self._refresh_details()
        return pending.request_id if pending is not None else ""

    @decide_plan.validator
    def _plan_decision_fits(self, decision: PlanDecisionInput | None = None) -> None:
        require_update_input("decide_plan", decision, PlanDecisionInput)
        assert decision is not None  # require_update_input refused None
        check_update_fields("decide_plan", decision)
        mode = decision.target_mode
        why = None
        if decision.approve and mode not in (None, PLAN_MODE, *RESUME_MODES):
            why = f"target_mode {mode} is no mode: one of {', '.join(RESUME_MODES)}"
        why = why or self._plans.refusal(decision)
        if why is not None:
            raise ValueError(f"update `decide_plan` refused: {why}")

    @workflow.query(name="plan")
    def plan(self) -> PlanView:
        return self._plans.view()

    @workflow.update(name="answer_question")
    def answer_question(self, answers: QuestionAnswers | None = None) -> str:
        """The user's answers to the questions waiting at AskUserQuestion (T16); returns
        the request id they answered."""
        assert answers is not None  # the validator refuses an update without one
        return self._questions.answer(answers)

    @answer_question.validator
    def _answer_fits(self, answers: QuestionAnswers | None = None) -> None:
        require_update_input("answer_question", answers, QuestionAnswers)
        self._questions.check(answers)

    @workflow.query(name="question")
    def question(self) -> PendingQuestion | None:
        return self._questions.pending

    @workflow.query(name="tasks")
    def tasks(self) -> list[ChildSummary]:
        return self._children() + self._subagents.phases.queued_summaries()

    def _children(self) -> list[ChildSummary]:
        """The `status` query's: its queued workers are apart there, in `queued` (a client
        of an earlier release knows no `queued` status, and its `show` listed them twice)."""
        tasks = [*self._registry.tasks.values(), *self._registry.shells.shells.values()]
        # Ended: those its end cancelled (`stop_requested`: the background ones its stop,
        # kill, failure or turn limit stopped, a sync one its kill cancelled with the wait)
        # tell their `killed` end to a closed workflow, and read `running` for good, against
        # their own AgentStatus=killed (a user test, 2026-12-07). Any other still `running`
        # here stays so: `outlast show` looks its end up itself.
        ended = self._outcome is not None
        return [
            t.summary().model_copy(update={"status": "killed"})
            if ended and t.status == "running" and t.stop_requested
            else t.summary()
            for t in tasks
        ]

    @workflow.query(name="transcript")
    def transcript(self) -> TranscriptView:
        return TranscriptView(
            transcript=self._state.transcript,
            base=self._base,
            messages=self._messages,
            compacted=self._state.compacted,
        )


def recent_texts(messages: list[Message], turns: int) -> list[TurnText]:
    """The last `RECENT_TEXTS` texts the model wrote in `messages` (this run's, the last of
    them turn `turns`), each with its turn, oldest first."""
    found: list[TurnText] = []
    turn = turns
    for message in reversed(messages):
        if message.role != "assistant":
            continue
        if text := message.text().strip():
            found.append(TurnText(turn=turn, text=text[:RECENT_TEXT_CHARS]))
            if len(found) == RECENT_TEXTS:
                break
        turn -= 1
    return found[::-1]


def backgrounded_problem(given: tuple[Any, ...], has_parent: bool) -> str | None:
    """Why a `set_backgrounded` signal is none its parent sent, or None. A raw client's
    `{"x": 1}` to a top-level agent marked it `IsBackground`, and to a sync sub-agent made
    it report its end twice (a user test, 2026-12-07)."""
    if not has_parent:
        return (
            "this agent has no parent to run in the background of (to move a running sync "
            "sub-agent there, signal `background` to its parent)"
        )
    if any(g is not None for g in given):
        return (
            "it takes no input: its parent sends it when it stops waiting for this agent "
            "(to move it, signal `background` to the parent)"
        )
    return None
