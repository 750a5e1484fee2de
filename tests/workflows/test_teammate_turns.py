"""A teammate's turn budget counts from the mail that woke it (patched
`teammate-turns-per-wake`): a standing teammate ended out of turns after `hard_max_turns`
model calls over its life, whatever it was asked; one piece of work that loops is still
bounded."""

from __future__ import annotations

import uuid

from agents.config import AgentSettings
from tests.support import fast_config, running_workers, scripted_model
from tests.workflows.test_team import member, wait_for_states
from tests.workflows.test_team_continues import received, wait_for
from workflows.contracts import StopRequest, Workspace
from workflows.pattern_contracts import TeamInput, TeamMail, TeammateSpec, TeamResult

GLOB = {"name": "Glob", "input": {"pattern": "*.txt"}}
SCRIPT = {
    "agents": [
        member("lead", "idle", {"text": "lead idle"}),
        # Mail that says LOOP-NOW sets b calling tools for ever.
        member("b", "loop", {"tool_use": GLOB}, contains=["LOOP-NOW"]),
        member("b", "idle", {"text": "b idle"}),
    ]
}


async def run_turns_team(client, repo, wf_id: str | None = None):
    """b, with two turns a wake, answers three messages, then loops on a fourth until its
    turns are spent. The handle and the team's result."""
    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            inp = TeamInput(
                team_name="turns",
                workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
                lead=TeammateSpec(name="lead", prompt="Wait."),
                teammates=[TeammateSpec(name="b", prompt="Answer mail.")],
                end_when_quiet=False,
                config=fast_config(agents=AgentSettings(hard_max_turns=2)),
            )
            handle = await client.start_workflow(
                "TeamWorkflow",
                inp,
                id=wf_id or f"team-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue,
                result_type=TeamResult,
            )
            await wait_for_states(handle, {"lead": "idle", "b": "idle"}, timeout=60)
            # Four model calls in all for b (its start and three messages), two at most.
            for n in range(1, 4):
                mail = TeamMail(to="b", text=f"question {n}")
                await handle.execute_update("message_member", mail, result_type=str)
                await wait_for(lambda: received(handle, "b"), lambda got, n=n: got == n)
                await wait_for_states(handle, {"b": "idle"})
            # One piece of work that loops ends at two calls, as before.
            mail = TeamMail(to="b", text="LOOP-NOW")
            await handle.execute_update("message_member", mail, result_type=str)
            await wait_for_states(handle, {"b": "ended"})
            await handle.signal("shutdown", StopRequest(reason="done"))
            return handle, await handle.result()


async def test_a_teammate_s_turns_count_per_wake_and_a_loop_is_still_bounded(client, git_repo):
    _, result = await run_turns_team(client, git_repo)
    b = next(m for m in result.members if m.name == "b")
    assert b.status == "completed" and b.max_turns_reached, b
