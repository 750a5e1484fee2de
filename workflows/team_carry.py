"""What a team hands to its next run when it continues as new, and how that run learns of the
ends of members the run before started.

A team's history grows about ten events with every message its members exchange (their
reports, task updates, mail from outside); at Temporal's limit (51,200 events) the server
terminated the team, and its members with it. A team started on this code starts its members
with ABANDON, so that they outlive the run that started them, and continues as new at a quiet
moment (no handler running, no member starting) once its history is long. The next run has no
handle on those members: a member's last report says how it ends (`MemberEnd`), and an
activity that waits for them to close (`agents.await_closed`) finds one that closed without a
last report (terminated, or failed in a way that ran no code of its own).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, NoReturn

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

from agents.team_tasks import TeamTask
from workflows import search_attributes as sa
from workflows import versions
from workflows.child_endings import describe_runs, liveness_interval, spent
from workflows.contracts import AgentResult, AgentUsage
from workflows.pattern_contracts import (
    MemberEnd,
    MemberOutcome,
    MemberReport,
    ShutdownAnswer,
    TeamInput,
    TeammateSpec,
)
from workflows.signal_input import Refusals

with workflow.unsafe.imports_passed_through():
    from activities.resume import AgentControl, AgentRunState

TEAM_CONTINUES = "team-continues"
"""Patch id: a team starts its members with ABANDON (cancelling them itself when it is killed
or fails) and continues as new once its history is long (workflows/team_carry.py). Asked once,
as a team's first run starts its members: a team started before goes on as it was."""

ANSWERS_KEPT = 64
"""How many answered update ids a team keeps (and carries) to answer a retried attempt."""

TEAM_MEMBERS_AWAITED = "team-members-awaited"
"""Patch id: a continued team learns of a member of an earlier run that closed without a last
report from an activity that waits for it to close (`agents.await_closed`), not from liveness
checks minutes apart. Asked once per continued run that has such members."""
AWAIT_CLOSED_OPTIONS: dict[str, Any] = {
    "start_to_close_timeout": timedelta(days=365),
    # Four of its heartbeats (CLOSE_WATCH_HEARTBEAT_S): a worker that dies under it is
    # found within ~16 minutes, and its members' last reports still come meanwhile.
    "heartbeat_timeout": timedelta(seconds=960),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}

CARRY_REFUSED = (
    "carry is set only by a team's own continue-as-new, and this one {problem}; start without it"
)


class TeamCarry(BaseModel):
    """The team's state, handed on whole: nothing a member or a person sent is lost."""

    members: list[TeammateSpec]
    """Every member: the lead, the first teammates and those the lead added, in order."""
    tasks: dict[str, TeamTask] = Field(default_factory=dict)
    reports: dict[str, MemberReport] = Field(default_factory=dict)
    ended: dict[str, MemberOutcome] = Field(default_factory=dict)
    forwarded: dict[str, int] = Field(default_factory=dict)
    mail_ids: dict[str, int] = Field(default_factory=dict)
    asked: dict[str, str] = Field(default_factory=dict)
    answers: dict[str, ShutdownAnswer] = Field(default_factory=dict)
    kills: list[str] = Field(default_factory=list)
    started: list[str] = Field(default_factory=list)
    not_started: list[str] = Field(default_factory=list)
    stopped_by_others: list[str] = Field(default_factory=list)
    leaving: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)
    """The refused signals `show` lists (the newest few)."""
    answered: dict[str, Any] = Field(default_factory=dict)
    """The latest answered updates (id -> answer), for an attempt retried after the hand-on."""
    runs: int = 1
    """How many runs the team had before this one."""
    from_run: str = ""


def read_team_carry(carry: dict[str, Any] | None) -> tuple[TeamCarry | None, str | None]:
    """The carry a team's run starts from (None for a first run), or the sentence its run
    refuses a start with: a carry from a client (no continue-as-new made this run).

    Raises:
        ValidationError: a continued run's carry does not fit (newer code wrote it: the task
            fails until a worker that knows its fields takes it).
    """
    if carry is None:
        return None, None
    continued = workflow.info().continued_run_id
    if continued is None or carry.get("from_run") != continued:
        return None, CARRY_REFUSED.format(problem="did not come from one")
    return TeamCarry.model_validate(carry), None


def answered_before(answered: dict[str, Any]) -> Any | None:
    """The answer already given to the current update's id (None: a first attempt).

    Temporal drops a retried update with an id it has seen, but only within one run: a
    member's `team.task_op` or `team.add_member` attempt that timed out as the team handed
    on lands on the next run, and made a second task, or was refused its own name."""
    info = workflow.current_update_info()
    return answered.get(info.id) if info is not None else None


def remember(answered: dict[str, Any], answer: Any) -> None:
    """Keep the current update's `answer` (the latest ANSWERS_KEPT, changed in place)."""
    info = workflow.current_update_info()
    if info is None:
        return
    answered[info.id] = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
    for stale in list(answered)[:-ANSWERS_KEPT]:
        del answered[stale]


def carried_reports(
    reports: dict[str, MemberReport], ended: dict[str, MemberOutcome]
) -> dict[str, MemberReport]:
    """The reports to carry: an ended member's without its `end` (its outcome has its final
    text already; twice, a long-lived team's carry grew toward the 2 MB payload limit)."""
    return {
        name: report.model_copy(update={"end": None}) if name in ended else report
        for name, report in reports.items()
    }


def should_continue(history_length: int, suggested: bool, max_events: int) -> bool:
    """Whether a team's run should hand on: the server suggests it, or its history has
    `max_events` events (the agents' `continue_as_new_events`)."""
    return suggested or history_length >= max_events


def end_from_report(report: MemberReport | None) -> MemberEnd | None:
    """How a member ended, from its last report (None: it has not sent one)."""
    return report.end if report is not None else None


def outcome_of(
    base: dict[str, str], end: MemberEnd | AgentResult, usage: AgentUsage | None, stopped: bool
) -> MemberOutcome:
    """A member's outcome from how it ended (its last report, or the result the liveness
    check read)."""
    return MemberOutcome(
        **base,
        status=end.status,
        stopped=stopped,
        final_text=end.final_text,
        error=end.error,
        usage=usage or AgentUsage(),
        unread_messages=end.unread_messages,
        max_turns_reached=end.max_turns_reached,
        shutdown_approved=end.shutdown_approved,
    )


class ContinuingTeam:
    """`TeamWorkflow`'s continue-as-new: the carry it hands on and restores, and the ends of
    the members an earlier run started. A mixin over the state `TeamWorkflow.__init__` sets
    up (annotated only: a stub here would stand before the workflow's own methods)."""

    _inp: TeamInput
    _carry: TeamCarry | None
    _abandon: bool
    _members: list[TeammateSpec]
    _tasks: dict[str, TeamTask]
    _reports: dict[str, MemberReport]
    _ended: dict[str, MemberOutcome]
    _forwarded: dict[str, int]
    _mail_ids: dict[str, int]
    _asked: dict[str, str]
    _answers: dict[str, ShutdownAnswer]
    _kills: set[str]
    _started: set[str]
    _not_started: set[str]
    _stopped_by_others: set[str]
    _leaving: set[str]
    _refusals: Refusals
    _marks: sa.PatternMarks
    _closed: dict[str, AgentRunState]
    _answered: dict[str, Any]
    _member_id: Callable[[str], str]
    _record_end: Callable[[MemberOutcome, bool], Awaitable[None]]
    _cancel_member: Callable[[str], Awaitable[None]]
    _stopped_on_its_own: Callable[[str, AgentResult | MemberEnd], bool]

    def _restore(self, carry: TeamCarry) -> None:
        """The run before's state (in `__init__`: a handler may run before `run`)."""
        self._members = list(carry.members)
        self._tasks = dict(carry.tasks)
        self._reports = dict(carry.reports)
        self._ended = dict(carry.ended)
        self._forwarded = dict(carry.forwarded)
        self._mail_ids = dict(carry.mail_ids)
        self._asked = dict(carry.asked)
        self._answers = dict(carry.answers)
        self._kills = set(carry.kills)
        self._started = set(carry.started)
        self._not_started = set(carry.not_started)
        self._stopped_by_others = set(carry.stopped_by_others)
        self._leaving = set(carry.leaving)
        self._refusals.texts = list(carry.refused)
        self._answered = dict(carry.answered)

    async def _cancel_live_members(self) -> None:
        for name in sorted(self._live_started()):
            await self._cancel_member(name)

    def _continue_due(self) -> bool:
        if not self._abandon:
            return False
        info = workflow.info()
        return should_continue(
            info.get_current_history_length(),
            info.is_continue_as_new_suggested(),
            self._inp.config.agents.continue_as_new_events,
        )

    def _continue_as_new(self, inp: TeamInput) -> NoReturn:
        carry = TeamCarry(
            members=self._members,
            tasks=self._tasks,
            reports=carried_reports(self._reports, self._ended),
            ended=self._ended,
            forwarded=self._forwarded,
            mail_ids=self._mail_ids,
            asked=self._asked,
            answers=self._answers,
            kills=sorted(self._kills),
            started=sorted(self._started),
            not_started=sorted(self._not_started),
            stopped_by_others=sorted(self._stopped_by_others),
            leaving=sorted(self._leaving),
            refused=self._refusals.texts,
            answered=self._answered,
            runs=(self._carry.runs + 1) if self._carry else 1,
            from_run=workflow.info().run_id,
        )
        workflow.continue_as_new(
            inp.model_copy(update={"carry": carry.model_dump(mode="json")}),
            memo=workflow.memo(),
            search_attributes=sa.mark_continued() if self._marks.on else None,
        )

    def _live_started(self) -> set[str]:
        return self._started - set(self._ended)

    async def _watch_carried(self, spec: TeammateSpec) -> None:
        """A member an earlier run started: its end comes in its last report, or the
        liveness check finds it closed."""
        name = spec.name
        await workflow.wait_condition(
            lambda: end_from_report(self._reports.get(name)) is not None or name in self._closed
        )
        base = {"name": name, "agent_type": spec.agent_type, "workflow_id": self._member_id(name)}
        report = self._reports.get(name)
        end: MemberEnd | AgentResult | None = end_from_report(report)
        state = self._closed.get(name)
        if end is None and state is not None and state.result is not None:
            end = AgentResult.model_validate(state.result)
        usage = report.usage if report else None
        if end is not None:
            stopped = self._stopped_on_its_own(name, end)
            if isinstance(end, AgentResult):
                usage = end.usage
            outcome = outcome_of(base, end, usage, stopped)
            out_of_turns = end.max_turns_reached
        else:
            assert state is not None
            status = "killed" if state.status == "CANCELED" else "failed"
            error = state.error or state.status.lower()
            usage = usage or spent(state)
            outcome = MemberOutcome(**base, status=status, error=error, usage=usage)
            out_of_turns = False
        await self._record_end(outcome, out_of_turns)

    async def _check_carried(self, carried: list[TeammateSpec]) -> None:
        """Find members of an earlier run that closed without a last report (terminated, or
        failed before they could send one): by an activity that waits for one to close
        (patched `team-members-awaited`); before, at the agents' liveness interval, further
        apart while every one still runs (a terminated member showed `working` for minutes;
        kept for the runs that started so)."""
        if versions.patched(TEAM_MEMBERS_AWAITED):
            await self._await_carried(carried)
            return
        base_s = self._inp.config.agents.liveness_check_s
        checks = 0
        while True:
            waiting = [s.name for s in carried if s.name not in self._ended]
            waiting = [n for n in waiting if n not in self._closed]
            if not waiting:
                return
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(
                    lambda names=tuple(waiting): any(n in self._ended for n in names),
                    timeout=timedelta(seconds=liveness_interval(base_s, checks)),
                )
                continue
            try:
                states = await describe_runs([self._member_id(n) for n in waiting])
            except ActivityError as e:
                if is_cancelled_exception(e):
                    raise
                # The server unreachable for a while: look again later, not fail the team.
                workflow.logger.warning("liveness check of %s failed: %s", waiting, e.cause or e)
                checks += 1
                continue
            found = False
            for name, state in zip(waiting, states, strict=True):
                if state.status != "RUNNING" and name not in self._ended:
                    self._closed[name] = state
                    found = True
            checks = 0 if found else checks + 1

    async def _await_carried(self, carried: list[TeammateSpec]) -> None:
        while True:
            waiting = [s.name for s in carried if s.name not in self._ended]
            waiting = [n for n in waiting if n not in self._closed]
            if not waiting:
                return
            watch = workflow.start_activity_method(
                AgentControl.await_closed,
                [self._member_id(n) for n in waiting],
                **AWAIT_CLOSED_OPTIONS,
            )
            # Its end by its last report comes first, as a rule: the watch is not needed then.
            await workflow.wait_condition(
                lambda names=tuple(waiting), w=watch: (
                    w.done() or all(n in self._ended for n in names)
                )
            )
            if not watch.done():
                watch.cancel()
                continue
            try:
                states = await watch
            except ActivityError as e:
                if is_cancelled_exception(e):
                    raise
                # Given up after its retries (the server away for long): look again later.
                workflow.logger.warning("watch of %s failed: %s", waiting, e.cause or e)
                await workflow.sleep(self._inp.config.agents.liveness_check_s)
                continue
            for name, state in zip(waiting, states, strict=True):
                if state.status != "RUNNING" and name not in self._ended:
                    self._closed[name] = state
