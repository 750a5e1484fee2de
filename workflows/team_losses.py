"""A teammate lost while the team works: its tasks go back to the list, and the lead is told.

A member killed (`outlast kill TEAM/NAME`, `kill_member`), stopped, failed or out of turns
left its claimed tasks `in_progress` under its name, and nobody heard of it: an idle lead
and team went quiet, and the team ended `completed` with the task undone (a user test, 2026-12-06);
a busy lead learned of it only when its SendMessage bounced. As Claude Code unassigns a
terminated teammate's tasks and tells the lead, the team puts them back (`pending`, no
owner) and mails the lead, whose turn that starts keeps the team from going quiet.
"""

from __future__ import annotations

from agents.team_tasks import TeamTask
from workflows.pattern_contracts import MemberOutcome

TEAM_LOSS_TOLD = "team-loss-told"
"""Patch id: a member lost while the team works has its tasks unassigned, and the lead is
mailed (workflows/team_losses.py)."""

ERROR_CHARS = 300
"""How much of a failed member's error the lead's note quotes (it goes into a prompt)."""

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


def loss_text(outcome: MemberOutcome, back: list[TeamTask], max_turns_reached: bool) -> str:
    """The lead's note of a lost member."""
    if outcome.status == "killed":
        how = "was killed"
    elif outcome.status == "failed":
        error = outcome.error or ""
        short = error if len(error) <= ERROR_CHARS else error[: ERROR_CHARS - 3] + "..."
        how = f"failed ({short})" if short else "failed"
    elif outcome.stopped:
        how = "was stopped"
    else:
        how = "ran out of turns" if max_turns_reached else "ended"
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
