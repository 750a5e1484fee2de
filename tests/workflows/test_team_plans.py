"""A teammate's plan decided by a person while its lead was asked (patched
`plan-decided-once`): the lead is told it needs no answer, and an answer it sends anyway
reaches the teammate said to be about a plan decided already."""

from __future__ import annotations

from tests.support import running_workers, scripted_model
from tests.workflows.test_team import (
    b_s_plan_waiting,
    last_request,
    plan_mode_team_script,
    start_plan_mode_team,
)
from workflows.contracts import PlanDecisionInput


async def a_person_approves_b_s_plan(client, git_repo, wf_id: str | None = None):
    """b's plan waits for its lead a, who answers 4 s later; a person approves it first.
    The team's result and the model's log."""
    with scripted_model(plan_mode_team_script(approve_delay_ms=4000), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_plan_mode_team(client, git_repo, queues, wf_id)
            b = await b_s_plan_waiting(client, handle)
            decided = await b.execute_update(
                "decide_plan", PlanDecisionInput(approve=True), result_type=str
            )
            assert decided == "plan-1"
            result = await handle.result()
    return handle, result, model.log


async def test_the_lead_hears_a_person_decided_and_its_late_answer_says_so(client, git_repo):
    _, result, log = await a_person_approves_b_s_plan(client, git_repo)
    assert result.status == "completed" and (git_repo / "x.txt").read_text() == "x\n"
    assert "was approved by a person (outlast approve): it needs no answer from you" in (
        last_request(log, "a")
    )
    # a's answer, sent while its model had not read the note yet: b reads that it changes
    # nothing (it read like a decision).
    after_approval = last_request(log, "b").split("User has approved")[-1]
    assert "An answer to plan plan-1, decided already: plan-1 was approved" in after_approval
