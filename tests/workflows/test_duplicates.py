"""Duplicate signals are applied once (reliability row 5): an approval sent twice approves one
plan (not the next one), the same message id delivered twice is read once, and a second stop
changes nothing."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support import agent_input, running_workers, scripted_model, start, wait_for
from tests.workflows.test_plan_mode import WRITE_PLAN, wait_for_pending
from workflows.contracts import MailMessage, PlanDecision, PlanView, StopRequest

pytestmark = pytest.mark.reliability

PLAN_TWICE = {
    "agents": [
        {
            "name": "planner",
            "turns": [
                {"tool_use": {"name": "EnterPlanMode", "input": {}}},
                {"tool_use": WRITE_PLAN},
                {"tool_use": {"name": "ExitPlanMode", "input": {}}},
                {"tool_use": {"name": "EnterPlanMode", "input": {}}},
                {"tool_use": WRITE_PLAN},
                {"tool_use": {"name": "ExitPlanMode", "input": {}}},
                {"tool_use": {"name": "Bash", "input": {"command": "sleep 6"}}},
                {"text": "never: the agent was stopped"},
            ],
        }
    ]
}


async def test_duplicate_approvals_messages_and_stops_apply_once(client, git_repo):
    with scripted_model(PLAN_TWICE, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("plan twice", git_repo, queues), queues)
            first = await wait_for_pending(handle)
            approval = PlanDecision(request_id=first.pending.request_id)
            await handle.signal("approve_plan", approval)
            await handle.signal("approve_plan", approval)  # a client's retry

            await wait_for(lambda: len(model.log) >= 6)
            second = await wait_for_pending(handle)
            assert second.pending.request_id != first.pending.request_id
            await asyncio.sleep(1)  # time for a stray approval to be applied, were it so
            view = await handle.query("plan", result_type=PlanView)
            assert view.pending is not None, "the repeated approval approved the next plan"

            note = MailMessage(text="DUP-NOTE from the user", id="note-1")
            await handle.signal("send_message", note)
            await handle.signal("send_message", note)
            await handle.signal("approve_plan", PlanDecision(request_id=second.pending.request_id))

            await wait_for(lambda: len(model.log) >= 7)
            await handle.signal("stop", StopRequest(reason="first"))
            await handle.signal("stop", StopRequest(reason="again"))
            result = await asyncio.wait_for(handle.result(), 60)

    assert result.stopped and result.run_generation == 1 and result.unread_messages == 0
    calls = [r for r in model.log if r["outcome"] == "completed"]
    assert len(calls) == 7, "the model was called after the stop"
    seventh = json.dumps(calls[6]["body"]["messages"])
    assert seventh.count("DUP-NOTE from the user") == 1
    approvals = [json.dumps(c["body"]["messages"][-1]) for c in calls[1:]]
    assert sum("approved your plan" in a for a in approvals) == 2, approvals
