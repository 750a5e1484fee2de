"""A team's current details: its members and their states, the tasks' progress."""

from agents.team_tasks import TeamTask
from workflows.pattern_contracts import MemberView, TeamView
from workflows.team_details import render_team_details


def member(name: str, state: str, received: int = 0, sent: int = 0) -> MemberView:
    return MemberView(
        name=name, agent_type="general-purpose", workflow_id=f"t/{name}", state=state,
        received=received, sent=sent,
    )  # fmt: skip


def test_the_details_list_every_member_and_the_tasks_progress():
    view = TeamView(
        team_name="trio",
        members=[member("lead", "working", 1, 2), member("b", "idle"), member("c", "ended")],
        tasks=[
            TeamTask(id="1", subject="s", description="d", status="completed"),
            TeamTask(id="2", subject="s", description="d"),
        ],
        refused_signals=["signal `shutdown` refused: reason: Input should be a valid string"],
    )
    assert render_team_details(view) == "\n".join(
        [
            "team **trio**: 2 members active, tasks 1/2 completed",
            "",
            "- `lead` (general-purpose): working, 1 received, 2 sent",
            "- `b` (general-purpose): idle, 0 received, 0 sent",
            "- `c` (general-purpose): ended, 0 received, 0 sent",
            "",
            "Refused signals (their input did not fit):",
            "- signal `shutdown` refused: reason: Input should be a valid string",
        ]
    )
    stopping = view.model_copy(update={"shutting_down": True, "refused_signals": []})
    assert render_team_details(stopping).splitlines()[0].endswith("· shutting down")
