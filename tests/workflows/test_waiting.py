"""`outlast waiting`: what waits on a person across running tasks, with the command that
answers each (a user test, 2026-12-06: with several tasks, each had to be shown in turn)."""

from __future__ import annotations

import asyncio

from outlast.waiting import Waiting, WaitingList, stage_waits, waiting_lines, waiting_on_people
from tests.support import agent_input, running_workers, scripted_model, start
from tests.workflows.test_plan_mode import APPROVED, cli, wait_for_pending
from tests.workflows.test_questions import ASK, CHECKS, DB, waiting_question
from workflows.pattern_contracts import PipelineView


def both() -> dict:
    planner = {**APPROVED["agents"][0], "match": {"conversation_contains": ["add X"]}}
    asker = {**ASK["agents"][0], "name": "asker", "match": {"conversation_contains": ["db?"]}}
    return {"agents": [planner, asker]}


async def test_a_plan_and_a_question_are_listed_with_their_commands(
    client, dev_server, git_repo, tmp_path
):
    with scripted_model(both()):
        async with running_workers(client) as queues:
            planner = await start(client, agent_input("add X", git_repo, queues), queues)
            asker = await start(client, agent_input("which db?", git_repo, queues), queues)
            await wait_for_pending(planner)
            await waiting_question(asker)
            found = await waiting_on_people(client)
            code, out = await cli(dev_server.address, "waiting")
            await planner.signal("approve_plan", {})
            answers = {DB["question"]: "SQLite", CHECKS["question"]: "Lint"}
            await asker.execute_update("answer_question", {"answers": answers})
            await asyncio.gather(planner.result(), asker.result())
            after = await waiting_on_people(client)
    mine = {(w.workflow_id, w.kind): w for w in found.waiting}
    plan = mine[(planner.id, "plan")]
    # Its first line that says something: the heading ("# Plan") did not.
    assert plan.what == "plan-1: - create src/x.py with X = 1", plan
    assert plan.command == f"outlast approve {planner.id}", plan
    assert plan.other == f"outlast reject {planner.id} --feedback '...'", plan
    question = mine[(asker.id, "question")]
    assert question.what == "Which database should the service use? (and 1 more)", question
    assert question.command == f"outlast answer {asker.id}"
    assert code == 0, out
    flat = " ".join(out.split())
    assert f"{planner.id} plan: plan-1: - create src/x.py with X = 1 read it: " in flat, out
    assert f"outlast approve {planner.id} or: outlast reject {planner.id}" in flat, out
    assert f"{asker.id} question: Which database" in flat, out
    assert not {planner.id, asker.id} & {w.workflow_id for w in after.waiting}


def test_a_stage_waiting_and_workers_that_did_not_answer_are_said():
    view = PipelineView(stages=[], awaiting_approval="plan", awaiting_attempt=2)
    (stage,) = stage_waits("pipe-1", view)
    assert stage.what == "plan, attempt 2"  # after "stage: " (it read "stage: stage plan")
    assert stage.command == "outlast approve pipe-1 plan --attempt 2"
    # Pasted as printed, it runs: `[--rerun]` did not.
    assert stage.other.startswith("outlast reject pipe-1 plan --attempt 2 --feedback '...' (")
    assert stage.read == "outlast transcript pipe-1/plan-2"  # the second attempt's agent
    assert waiting_lines(WaitingList(waiting=[], unanswered=[])) == ["nothing waits on you"]
    lines = waiting_lines(WaitingList(waiting=[], unanswered=["a", "b"]))
    assert lines[0] == "nothing waits on you of those that answered"
    assert "2 running workflow(s) did not answer in time" in lines[1] and ": a, b" in lines[1]
    assert isinstance(stage, Waiting)
