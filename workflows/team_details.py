"""The markdown a `TeamWorkflow` keeps as its *current details* (Temporal UI, `temporal
workflow describe`): its members and what each is doing, the task list's progress, the
signals it refused.

Pure: built from the `team` query's answer, so the UI and `outlast status` never disagree.
Names, types, states and counts only; never a prompt or a message.
"""

from __future__ import annotations

from workflows.pattern_contracts import TeamView


def render_team_details(view: TeamView, chain: str | None = None) -> str:
    """`chain`: a continued run's `details.chain_note`."""
    active = sum(1 for m in view.members if m.state != "ended")
    done = sum(1 for t in view.tasks if t.status == "completed")
    head = (
        f"team **{view.team_name}**: {active} members active, "
        f"tasks {done}/{len(view.tasks)} completed"
    )
    lines = [head + (" · shutting down" if view.shutting_down else ""), ""]
    lines += [
        f"- `{m.name}` ({m.agent_type}): {m.state}, {m.received} received, {m.sent} sent"
        for m in view.members
    ]
    if view.refused_signals:
        lines += ["", "Refused signals (their input did not fit):"]
        lines += [f"- {text}" for text in view.refused_signals]
    if chain:
        lines += ["", chain]
    return "\n".join(lines)
