"""The signals, updates and queries `TeamWorkflow` answers (their names are permanent): the
members' reports and answers, a person's shutdown, kill and mail, the shared task list.

A mixin: the state it reads and writes is set up in `TeamWorkflow.__init__`
(workflows/team.py), which also keeps the lead's `add_member` (it starts members).
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from agents.config import MAX_SECONDS
from agents.notifications import PERSON_SENDERS
from agents.team_protocol import shutdown_request_text
from agents.team_tasks import TaskRuleError, TeamTask, create_task, sorted_tasks, update_task
from workflows import versions
from workflows.client_input import check_update_fields, require_update_input
from workflows.contracts import MailMessage, StopRequest
from workflows.held_handlers import ended_text
from workflows.pattern_contracts import (
    MemberOutcome,
    MemberRef,
    MemberReport,
    MemberView,
    ShutdownAnswer,
    ShutdownAsk,
    ShutdownOutcome,
    TaskCreateRequest,
    TaskUpdateRequest,
    TeamInput,
    TeamMail,
    TeammateSpec,
    TeamView,
)
from workflows.signal_input import Refusals
from workflows.signals import cancel_workflow, signal_workflow
from workflows.team_carry import answered_before, remember
from workflows.team_member import TEAM_MAIL_PREFIX

ALL_MEMBERS = "team-handlers-all-members"
"""Patch: `message_member` to `*` and `kill_member` pick their members from every member, not
from the live ones (which their watchers record: not for a handler to read)."""


TEAM_SIGNALS = ("shutdown", "kill_member", "member_state", "shutdown_response")
"""Every signal a team takes, those people send first (the dynamic handler names them)."""
TEAM_HINT = (
    "mail to a member goes by the `message_member` update, and a stop of one member by its "
    "own workflow's `stop` signal"
)


class TeamHandlers:
    """`TeamWorkflow`'s handlers, over the state its `__init__` sets up (declared here)."""

    _inp: TeamInput
    _members: list[TeammateSpec]
    _tasks: dict[str, TeamTask]
    _reports: dict[str, MemberReport]
    _ended: dict[str, MemberOutcome]
    _forwarded: dict[str, int]
    _mail_ids: dict[str, int]
    _shutdown: StopRequest | None
    _ending: bool
    _ended_as: str | None
    _asked: dict[str, str]
    _answers: dict[str, ShutdownAnswer]
    _kills: set[str]
    _started: set[str]
    _not_started: set[str]
    _refusals: Refusals
    _stopped_by_others: set[str]
    _leaving: set[str]
    _answered: dict[str, Any]
    _handing_on: bool

    def _details(self) -> None:
        raise NotImplementedError  # TeamWorkflow's: the Web UI's current details

    def _live(self) -> list[str]:
        raise NotImplementedError  # TeamWorkflow's: the members that have not ended

    def _member_id(self, name: str) -> str:
        raise NotImplementedError  # TeamWorkflow's: `<team id>/<name>`

    def _leaves_on_its_own(self, name: str) -> bool:
        raise NotImplementedError  # TeamWorkflow's

    # --- signals, updates, queries ---------------------------------------------------------

    @workflow.signal(name="member_state")
    def member_state(self, raw: Any = None, *extra: Any) -> None:
        """A member went idle or woke up (sent by the member itself). Checked as the signals
        people send are (a typed one sent without its input failed the workflow task, and the
        team stood still), leniently: a member of a later release may send more fields."""
        report = self._refusals.checked("member_state", MemberReport, raw, extra, strict=False)
        if report is not None and report.name in [m.name for m in self._members]:
            if report.stopped and not self._ending:
                # Its end may make the team quiet, and end it, before its watcher reads it.
                self._stopped_by_others.add(report.name)
            if report.usage is not None and self._leaves_on_its_own(report.name):
                # Its last report: the team stays until its watcher has its end, and tells
                # the lead (the report says idle, and the team went quiet at once).
                self._leaving.add(report.name)
            self._reports[report.name] = report
            self._details()

    # The signals people send check their input (workflows/signal_input.py).

    @workflow.signal(dynamic=True)
    def unknown_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """A signal of a name the team has no handler for (`stop`, `send_message`: an
        agent's) is refused, not lost unseen."""
        self._refusals.unknown_signal("TeamWorkflow", name, TEAM_SIGNALS, TEAM_HINT)
        self._details()

    @workflow.signal(name="shutdown")
    def shutdown(self, request: Any = None, *extra: Any) -> None:
        """End the team gracefully: every member finishes its current turn and stops."""
        checked = self._refusals.checked(
            "shutdown", StopRequest, request, extra, default={"reason": "shutdown requested"}
        )
        if checked is not None:
            self._shutdown = checked
        self._details()

    @workflow.update(name="request_shutdown")
    async def request_shutdown(self, ask: ShutdownAsk | None = None) -> ShutdownOutcome:
        """Ask one member to stop (R68 terminate); answers with the member's reply, once it
        comes (or `answered: false` after `timeout_s`)."""
        assert ask is not None  # the validator refuses an update without one
        # Numbered per member, so a member sees request 1, 2, ... of its own (the first
        # release numbered them across the team).
        if versions.patched("per-member-shutdown-ids"):
            number = 1 + sum(1 for name in self._asked.values() if name == ask.name)
        else:
            number = len(self._asked) + 1
        request_id = f"shutdown-{ask.name}-{number}"
        self._asked[request_id] = ask.name
        # No check of `_ended` first: the member watchers set it, and an update handler may
        # run before they have (on a replay without cache), which would fork the history.
        # A member that has ended cannot be signalled; that failure is the answer.
        try:
            await self._forward(ask.name, shutdown_request_text(request_id, ask.reason), "team")
        except ApplicationError:
            # One still starting (added by the lead a moment ago) can be asked shortly; it
            # read "has already ended" (a review, 2026-12-07).
            gone = ask.name in self._started or ask.name in self._not_started
            why = (
                "could not start" if ask.name in self._not_started else self._unreachable(ask.name)
            )
            raise ApplicationError(
                f"{ask.name} {why}", type="MemberEnded", non_retryable=gone
            ) from None
        try:
            await workflow.wait_condition(
                lambda: (
                    request_id in self._answers
                    or ask.name in self._ended
                    or self._ended_as is not None
                    or self._handing_on
                ),
                timeout=timedelta(seconds=ask.timeout_s),
            )
        except TimeoutError:
            pass
        answer = self._answers.get(request_id)
        if answer is None and self._ended_as is not None:
            raise ApplicationError(
                f"no answer from {ask.name}: the team {ended_text(self._ended_as)}",
                type="TeamEnded",
                non_retryable=True,
            )
        if answer is None:
            return ShutdownOutcome(request_id=request_id, name=ask.name, answered=False)
        return ShutdownOutcome(
            request_id=request_id,
            name=ask.name,
            answered=True,
            approve=answer.approve,
            reason=answer.reason,
        )

    @request_shutdown.validator
    def _check_shutdown(self, ask: ShutdownAsk | None = None) -> None:
        require_update_input("request_shutdown", ask, ShutdownAsk)
        check_update_fields("request_shutdown", ask)
        if not ask.timeout_s <= MAX_SECONDS:  # inf too; a timer of it failed the task
            raise ValueError(
                f"update `request_shutdown` refused: timeout_s {ask.timeout_s:g} is longer "
                f"than any wait can be ({MAX_SECONDS} s)"
            )
        self._refuse_when_ended()
        self._check_member(ask.name)

    def _refuse_when_ended(self) -> None:
        """In a validator: nothing more once the team has ended with handlers unfinished (it
        waits for them; one accepted now would add to the wait, or start a member for no
        one). A refused update leaves no history, so this needs no patch."""
        if self._ended_as is not None:
            raise ValueError(f"the team {ended_text(self._ended_as)}")

    @workflow.signal(name="shutdown_response")
    def shutdown_response(self, raw: Any = None, *extra: Any) -> None:
        """A member's answer to a shutdown request (sent by the member; checked as
        `member_state` is)."""
        answer = self._refusals.checked(
            "shutdown_response", ShutdownAnswer, raw, extra, strict=False
        )
        if answer is not None and self._asked.get(answer.request_id) == answer.name:
            self._answers[answer.request_id] = answer

    @workflow.signal(name="kill_member")
    async def kill_member(self, raw: Any = None, *extra: Any) -> None:
        """Stop one member at once (R67, R68 kill): Temporal cancellation; it still cleans up."""
        member = self._refusals.checked("kill_member", MemberRef, raw, extra)
        if member is not None and versions.patched(ALL_MEMBERS):
            names = [m.name for m in self._members]
            if member.name not in names:
                self._refusals.keep(
                    f"signal `kill_member` refused: no member named {member.name}; "
                    f"members: {', '.join(names)}"
                )
            elif member.name not in self._not_started:
                self._kills.add(member.name)
                # Whether it has ended is for its watcher to record, which this handler may
                # run before on a replay without cache; cancelling an ended one does nothing.
                if member.name in self._started:
                    await self._cancel_member(member.name)
        elif member is not None and member.name in self._live():
            await cancel_workflow(f"{workflow.info().workflow_id}/{member.name}")
        self._details()

    async def _kill_if_asked(self, name: str) -> None:
        """A kill that came while `name` was starting, applied now that it has."""
        if name in self._kills:
            await self._cancel_member(name)

    async def _cancel_member(self, name: str) -> None:
        with contextlib.suppress(ApplicationError):  # it has closed (or never started)
            await cancel_workflow(self._member_id(name))

    def _check_member(self, name: str) -> None:
        names = [m.name for m in self._members]
        if name not in names:
            raise ValueError(f"no member named {name}; members: {', '.join(names)}")

    async def _forward(self, name: str, text: str, sender: str) -> None:
        """Mail from outside the team, counted so the team knows it is still in flight.

        Raises:
            ApplicationError: `name` has ended or not started yet: the mail is not counted.
        """
        self._forwarded[name] = self._forwarded.get(name, 0) + 1
        self._mail_ids[name] = self._mail_ids.get(name, 0) + 1
        n = self._mail_ids[name]
        try:
            await signal_workflow(
                f"{workflow.info().workflow_id}/{name}",
                "send_message",
                MailMessage(text=text, sender=sender, id=f"{TEAM_MAIL_PREFIX}fwd:{name}:{n}"),
            )
        except ApplicationError:
            if versions.patched(ALL_MEMBERS):
                # Never received: counted, it would keep a member that starts later from
                # ever being quiet, and the team from ending.
                self._forwarded[name] -= 1
            raise

    @workflow.update(name="message_member")
    async def message_member(self, mail: TeamMail | None = None) -> str:
        """A message from outside the team to one member (or `*`: all of them)."""
        assert mail is not None  # the validator refuses an update without one
        if not versions.patched(ALL_MEMBERS):
            targets = self._live() if mail.to == "*" else [mail.to]
            for name in targets:
                await self._forward(name, mail.text, mail.sender)
            return f"Message sent to {', '.join(targets)}."
        if mail.to in self._not_started:
            raise ApplicationError(
                f"{mail.to} could not start", type="MemberEnded", non_retryable=True
            )
        if mail.to != "*":
            try:
                await self._forward(mail.to, mail.text, mail.sender)
            except ApplicationError:
                # One still starting may be sent to again shortly; one that ended, never.
                raise ApplicationError(
                    f"{mail.to} {self._unreachable(mail.to)}",
                    type="MemberEnded",
                    non_retryable=mail.to in self._started,
                ) from None
            return f"Message sent to {mail.to}."
        # Every member, not the live ones: which have ended is for their watchers to record,
        # which this handler may run before on a replay without cache. An ended member (or one
        # still starting) refuses the signal, in history, the same way each time.
        reached = []
        for m in [m for m in self._members if m.name not in self._not_started]:
            with contextlib.suppress(ApplicationError):
                await self._forward(m.name, mail.text, mail.sender)
                reached.append(m.name)
        if not reached:
            starting = [m.name for m in self._members if self._still_starting(m.name)]
            if starting:
                raise ApplicationError(
                    f"no member is running to read it: {', '.join(starting)} still starting, "
                    "try again",
                    type="MemberEnded",
                )
            raise ApplicationError(
                "no member is running to read it", type="MemberEnded", non_retryable=True
            )
        return f"Message sent to {', '.join(reached)}."

    def _still_starting(self, name: str) -> bool:
        return name not in self._started and name not in self._not_started

    def _unreachable(self, name: str) -> str:
        return "has already ended" if name in self._started else "is still starting: try again"

    @message_member.validator
    def _check_mail(self, mail: TeamMail | None = None) -> None:
        require_update_input("message_member", mail, TeamMail)
        check_update_fields("message_member", mail)
        self._refuse_when_ended()
        if not mail.text.strip():
            # The member's model call would be refused (400) for a blank text block.
            raise ValueError("the message is empty: say something")
        names = [m.name for m in self._members]
        if mail.to != "*" and mail.to not in names:
            same = [n for n in names if n.lower() == mail.to.lower()]
            meant = f" (did you mean {same[0]}?)" if same else ""
            raise ValueError(f"no member named {mail.to!r}{meant}; members: {', '.join(names)}")
        # Mail from outside the team under a member's name: a member takes its lead's plan
        # answer by the sender's name (a user test, 2026-12-05). Refused in the validator: no
        # history, no patch. Not the default sender, which stays a person's in a team from
        # before `person-names-refused` with a member named `user`.
        if mail.sender in names and mail.sender != "user":
            raise ValueError(
                f"sender {mail.sender!r} is a member's name: mail from outside the team comes "
                "under a name of its own (default user)"
            )
        if self._shutdown is not None or self._ending:
            raise ValueError("the team is ending: its members read no more mail")

    @workflow.update(name="task_create")
    def task_create(self, request: TaskCreateRequest | None = None) -> TeamTask:
        assert request is not None  # the validator refuses an update without one
        if (known := answered_before(self._answered)) is not None:
            return TeamTask.model_validate(known)
        task = create_task(self._tasks, request.task, request.caller)
        self._tasks[task.id] = task
        self._details()
        remember(self._answered, task)
        return task

    @task_create.validator
    def _check_task_create(self, request: TaskCreateRequest | None = None) -> None:
        require_update_input("task_create", request, TaskCreateRequest)
        check_update_fields("task_create", request)
        self._check_names(request.caller, None)

    def _check_names(self, caller: str, owner: str | None) -> None:
        """A caller that is a member or a person, and an owner that is a member: a misspelt
        owner (`nobdy`) took the task, and a caller nobody is (`ghost`) created and completed
        tasks (a user test, 2026-12-07). In a validator: no history, no patch."""
        names = [m.name for m in self._members]
        if caller not in names and caller not in PERSON_SENDERS:
            raise ValueError(
                f"caller {caller!r} is neither a member nor a person (user); members: "
                f"{', '.join(names)}"
            )
        if owner and owner not in names:
            close = difflib.get_close_matches(owner, names, n=1)
            meant = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"no member named {owner!r}{meant}; members: {', '.join(names)}")

    @workflow.update(name="task_update")
    def task_update(self, request: TaskUpdateRequest | None = None) -> TeamTask:
        assert request is not None  # the validator refuses an update without one
        # The claim lock was checked by the validator, in this same step: a handler does not
        # read `_ended` (set by the member watchers, which a replay without cache may run
        # after it), so a claim of a task whose owner had ended replays as it ran.
        if (known := answered_before(self._answered)) is not None:
            return TeamTask.model_validate(known)
        task = update_task(self._tasks, request.update, request.caller, check_lock=False)
        self._tasks[task.id] = task
        self._details()
        remember(self._answered, task)
        return task

    @task_update.validator
    def _check_task_update(self, request: TaskUpdateRequest | None = None) -> None:
        require_update_input("task_update", request, TaskUpdateRequest)
        check_update_fields("task_update", request)
        if answered_before(self._answered) is not None:
            return  # a retried attempt, answered as it was
        self._check_names(request.caller, request.update.owner)
        # Task state changes only through these (synchronous) updates, applied in order, so
        # the validator sees the list as it is, replayed or not. A refused claim leaves no
        # trace in history.
        try:
            update_task(self._tasks, request.update, request.caller, released=self._ended)
        except TaskRuleError as e:
            raise ValueError(str(e)) from None

    @workflow.query(name="task_list")
    def task_list(self) -> list[TeamTask]:
        return sorted_tasks(self._tasks)

    @workflow.query(name="team")
    def team(self) -> TeamView:
        members = []
        for spec in self._members:
            report = self._reports.get(spec.name)
            if spec.name in self._ended:
                state = "ended"
            elif report is None:
                # A member reports when it goes idle: one busy since its start is working.
                state = "working" if spec.name in self._started else "starting"
            else:
                state = "idle" if report.idle else "working"
            members.append(
                MemberView(
                    name=spec.name,
                    agent_type=spec.agent_type,
                    workflow_id=f"{workflow.info().workflow_id}/{spec.name}",
                    state=state,  # type: ignore[arg-type]
                    received=report.received if report else 0,
                    sent=sum(report.sent_to.values()) if report else 0,
                )
            )
        return TeamView(
            team_name=self._inp.team_name,
            members=members,
            tasks=sorted_tasks(self._tasks),
            shutting_down=self._shutdown is not None,
            refused_signals=self._refusals.texts,
        )
