"""A teammate lost while the team works: its tasks go back to the list, and the lead is told.

A member killed (`outlast kill TEAM/NAME`, `kill_member`), stopped, failed or out of turns
left its claimed tasks `in_progress` under its name, and nobody heard of it: an idle lead
and team went quiet, and the team ended `completed` with the task undone (a user test, 2026-12-06);
a busy lead learned of it only when its SendMessage bounced. As Claude Code unassigns a
terminated teammate's tasks and tells the lead, the team puts them back (`pending`, no
owner) and mails the lead, whose turn that starts keeps the team from going quiet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

from temporalio.exceptions import ApplicationError

from agents.team_tasks import TeamTask
from workflows import versions
from workflows.contracts import StopRequest
from workflows.pattern_contracts import MemberOutcome, MemberReport, ShutdownAnswer, TeamInput

TEAM_LOSS_TOLD = "team-loss-told"
"""Patch id: a member lost while the team works has its tasks unassigned, and the lead is
mailed (workflows/team_losses.py)."""

ERROR_CHARS = 300
"""How much of a member's error or stop reason the lead's note quotes (it goes into a
prompt)."""

TEAM_ENDS_WITH_LEAD = "team-ends-with-lead"
"""Patch id: a team whose lead ends while it works ends too, stopping its members."""

SHUTDOWN_TOLD = "team-shutdown-told"
"""Patch id: a member that approves a person's shutdown request (`request_shutdown`) while
the team works has its tasks unassigned, and the lead is mailed. The lead asks by mail and
reads the answer; a person's answer went to the person alone, so the lead went on assigning
the member work, and its tasks stayed `in_progress` under a name that reads no more."""

LOSS_SENDER = "system"
"""Whom the lead's note comes from (no member's mail: a member name has no space)."""


def lost(outcome: MemberOutcome, max_turns_reached: bool = False) -> bool:
    """Whether `outcome` is a loss the lead should hear of: the member did not end on the
    team's word (its end, a shutdown it approved) but was killed, failed, stopped on its own
    (`outlast stop TEAM/NAME`) or ran out of turns."""
    return outcome.status in ("killed", "failed") or outcome.stopped or max_turns_reached


def unassigned(tasks: dict[str, TeamTask], name: str) -> list[TeamTask]:
    """The unfinished tasks `name` owned, put back on the list (`tasks`, changed in place):
    pending, no owner."""
    back = []
    for task_id, task in tasks.items():
        if task.owner == name and task.status != "completed":
            tasks[task_id] = task.model_copy(update={"status": "pending", "owner": None})
            back.append(tasks[task_id])
    return back


def approval_reason(answers: dict[str, ShutdownAnswer], name: str) -> str:
    """The reason `name` gave with the shutdown request it approved, if any."""
    return next((a.reason or "" for a in answers.values() if a.name == name and a.approve), "")


def _short(text: str) -> str:
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 3] + "..."


def loss_text(
    outcome: MemberOutcome, back: list[TeamTask], max_turns_reached: bool, reason: str = ""
) -> str:
    """The lead's note of a lost member; `reason`: why it was stopped or killed."""
    if outcome.status == "killed":
        how = "was killed"
    elif outcome.status == "failed":
        how = f"failed ({_short(outcome.error)})" if outcome.error else "failed"
    elif outcome.stopped:
        how = "was stopped"
    elif outcome.shutdown_approved:
        how = "shut down, as a person asked it to (`request_shutdown`)"
    else:
        how = "ran out of turns" if max_turns_reached else "ended"
    if reason and outcome.status != "failed":
        how += f" ({_short(reason)})"
    text = f"Teammate {outcome.name} {how} and has left the team: it reads no more messages."
    if back:
        listed = "; ".join(f"#{t.id} {t.subject}" for t in back)
        text += (
            f" Its unfinished tasks are unassigned and pending again: {listed}. Assign them "
            "to another teammate with TaskUpdate, or spawn a new teammate to take them."
        )
    else:
        text += " It owned no unfinished task."
    return text


class TeamLosses:
    """`TeamWorkflow`'s side of a member that ends while the team works."""

    _inp: TeamInput
    _tasks: dict[str, TeamTask]
    _shutdown: StopRequest | None
    _ending: bool
    _lead_lost: bool
    _reports: dict[str, MemberReport]
    _answers: dict[str, ShutdownAnswer]
    # TeamHandlers': mail from outside the team, counted (only annotated here: a stub would
    # stand before TeamHandlers' own in the workflow's bases).
    _forward: Callable[[str, str, str], Awaitable[None]]

    async def _after_end(self, outcome: MemberOutcome, out_of_turns: bool) -> None:
        """Called as a member's end is recorded, before any await: the lead's note is counted
        before the team can go quiet."""
        if outcome.name == self._inp.lead.name and self._lead_ends_team():
            self._lead_lost = True
        if lost(outcome, out_of_turns) and self._leaves_on_its_own(outcome.name):
            last = self._reports.get(outcome.name)
            reason = last.end_reason if last else ""
        elif self._shut_down_by_a_person(outcome):
            reason = approval_reason(self._answers, outcome.name)
        else:
            return
        back = unassigned(self._tasks, outcome.name)
        note = loss_text(outcome, back, out_of_turns, reason)
        with contextlib.suppress(ApplicationError):  # the lead has ended too
            await self._forward(self._inp.lead.name, note, LOSS_SENDER)

    def _lead_ends_team(self) -> bool:
        """The lead ended while the team works: the team ends with it, its members stopped,
        as Claude Code's team ends with its lead's session. Its teammates worked on for no
        one, their reports and the person's mail to the lead went nowhere, and the team ran
        until each was stopped by hand (a user test, 2026-12-06)."""
        if self._ending or self._shutdown is not None:
            return False
        # Asked only when the lead ends while the team works, so no other team records it.
        return versions.patched(TEAM_ENDS_WITH_LEAD)

    def _shut_down_by_a_person(self, outcome: MemberOutcome) -> bool:
        """Whether `outcome` is a teammate's end on a person's shutdown request it approved,
        while the team works (news to the lead, who did not ask)."""
        name = outcome.name
        if not outcome.shutdown_approved or name == self._inp.lead.name:
            return False
        if self._ending or self._shutdown is not None:
            return False
        if not any(a.name == name and a.approve for a in self._answers.values()):
            return False  # it approved the lead's request, whose answer the lead reads
        # Asked only for such an end, so no other team records it.
        return versions.patched(SHUTDOWN_TOLD)

    def _leaves_on_its_own(self, name: str) -> bool:
        """Whether `name` ending now is news to the lead: a teammate, while the team works."""
        if name == self._inp.lead.name or self._ending or self._shutdown is not None:
            return False
        # Asked only for a teammate's end (or last report) while the team works, so a team
        # whose members all end with it records no marker.
        return versions.patched(TEAM_LOSS_TOLD)
