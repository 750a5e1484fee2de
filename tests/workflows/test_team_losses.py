"""A teammate killed while the team works: the lead hears of it and its task is put back (a
user test, 2026-12-06: an idle team ended `completed` at once, the task left in progress
under the killed member's name, and the lead never knew)."""

from __future__ import annotations

import asyncio
import uuid

from agents.team_tasks import TaskCreateInput
from tests.support import fast_config, running_workers, scripted_model, taken_changes
from tests.workflows.test_team import (
    answering,
    last_request,
    member,
    task_update,
    wait_for_states,
)
from workflows import search_attributes as sa
from workflows.contracts import Workspace
from workflows.pattern_contracts import (
    ShutdownAsk,
    ShutdownOutcome,
    TeamInput,
    TeammateSpec,
    TeamResult,
    TeamView,
)
from workflows.team_losses import SHUTDOWN_TOLD, TEAM_ENDS_WITH_LEAD, TEAM_LOSS_TOLD

HELD = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.05; done"}}
SCRIPT = {
    "agents": [
        member("lead", "told", {"text": "LEAD-KNOWS"}, contains=["Teammate w1 was killed"]),
        member("lead", "idle", {"text": "Lead idle."}),
        {
            "name": "w1",
            "match": {"agent_name": "w1"},
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": task_update(owner="w1", status="in_progress")},
                {"tool_use": HELD},
            ],
        },
    ]
}


async def start_pair(client, queues, repo, tasks=(), wf_id: str | None = None, w1: str = "working"):
    """A lead and one teammate, w1 (task 1 its to take, when there is one), once the lead is
    idle and w1 at work (or in state `w1`)."""
    inp = TeamInput(
        team_name="pair",
        workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
        lead=TeammateSpec(name="lead", prompt="Wait for w1."),
        teammates=[TeammateSpec(name="w1", prompt="Take task 1 and do it.")],
        tasks=[TaskCreateInput(subject=t, description="Do it.") for t in tasks],
        config=fast_config(),
        end_when_quiet=w1 == "working",
    )
    handle = await client.start_workflow(
        "TeamWorkflow",
        inp,
        id=wf_id or f"team-{uuid.uuid4().hex[:8]}",
        task_queue=queues.task_queue,
        result_type=TeamResult,
    )
    await wait_for_states(handle, {"lead": "idle", "w1": w1}, timeout=60)
    return handle


async def test_a_killed_teammate_s_task_goes_back_and_the_lead_is_told(client, git_repo):
    with scripted_model(SCRIPT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_pair(client, queues, git_repo, tasks=["Task one"])
            # Working is said before its claim is in (a race the first runs did not lose).
            await wait_for_view(handle, lambda v: v.tasks[0].owner == "w1")
            await client.get_workflow_handle(f"{handle.id}/w1").cancel(reason="w1 hung")
            result = await handle.result()
            patches = await taken_changes(handle)
            shown = (await handle.describe()).typed_search_attributes.get(sa.AGENT_STATUS)
    (task,) = result.tasks
    # `ls` says what `run` does of a team that left its task undone (it read `completed`).
    assert shown == "tasks not done" and result.unfinished() == [task], shown
    assert task.status == "pending" and task.owner is None, task
    w1 = next(m for m in result.members if m.name == "w1")
    assert w1.status == "killed"
    assert result.lead_text == "LEAD-KNOWS", result
    told = last_request(model.log, "lead")
    assert "Message from system" in told and "#1 Task one" in told, told
    # The kill's reason, as `outlast kill TEAM/w1 --reason` gives it (the same user test).
    assert "Teammate w1 was killed (w1 hung)" in told, told
    assert TEAM_LOSS_TOLD in patches


SHUT_DOWN = {
    "agents": [
        member("lead", "told", {"text": "LEAD-KNOWS"}, contains=["Teammate w1 shut down"]),
        member("lead", "idle", {"text": "Lead idle."}),
        answering("w1", 1, True, "nothing left for me"),
        {
            "name": "w1",
            "match": {"agent_name": "w1"},
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": task_update(owner="w1", status="in_progress")},
                {"text": "w1 on it"},
            ],
        },
    ]
}


async def test_a_teammate_shut_down_by_a_person_s_request_is_news_to_the_lead(client, git_repo):
    """A person's `request_shutdown` that the member approved: its answer went to the person
    alone, so the lead never heard the member had gone, and its task stayed `in_progress`
    under the member's name (patched `team-shutdown-told`)."""
    handle, outcome, result, log = await person_shuts_down_w1(client, git_repo)
    patches = await taken_changes(handle)
    assert outcome.answered and outcome.approve, outcome
    (task,) = result.tasks
    assert task.status == "pending" and task.owner is None, task
    assert result.lead_text == "LEAD-KNOWS", result
    told = " ".join(last_request(log, "lead").split())
    assert (
        "Teammate w1 shut down, as a person asked it to (`request_shutdown`) (nothing left for "
        "me) and has left the team" in told
    ), told
    assert "#1 Task one" in told, told
    assert SHUTDOWN_TOLD in patches


async def person_shuts_down_w1(client, repo, wf_id: str | None = None):
    """A standing pair, w1 holding task 1, shut down on a person's request it approves;
    then the team's shutdown. (handle, the request's outcome, the result, the model's log)"""
    with scripted_model(SHUT_DOWN, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_pair(client, queues, repo, ["Task one"], wf_id, w1="idle")
            await wait_for_view(handle, lambda v: v.tasks[0].owner == "w1")
            outcome = await handle.execute_update(
                "request_shutdown", ShutdownAsk(name="w1"), result_type=ShutdownOutcome
            )
            await wait_for_view(handle, lambda v: v.tasks[0].owner is None)
            # The lead's turn on the note first: a shutdown in its task stops it before one.
            for _ in range(300):
                if any(r["agent"] == "lead-told" for r in model.log):
                    break
                await asyncio.sleep(0.1)
            await handle.signal("shutdown", {"reason": "done"})
            result = await asyncio.wait_for(handle.result(), 60)
    return handle, outcome, result, model.log


async def test_a_team_stopped_with_its_task_undone_reads_stopped(client, dev_server, git_repo):
    """A user test (2026-12-06): `run` said `stopped (1 of 1 task not done)`, while `ls` (the
    team's AgentStatus) read `completed (tasks not done)` and `show` `completed, 1 of 1 task
    not done`, as if it had ended on its own."""
    from tests.workflows.test_plan_mode import cli

    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            handle = await start_pair(client, queues, git_repo, tasks=["Task one"])
            await wait_for_view(handle, lambda v: v.tasks[0].owner == "w1")
            await handle.signal("shutdown", {"reason": "enough"})
            (git_repo / "released").touch()  # w1's command: its turn ends, and w1 with it
            result = await handle.result()
            shown = (await handle.describe()).typed_search_attributes.get(sa.AGENT_STATUS)
            code, out = await cli(dev_server.address, "show", handle.id)
    assert result.status == "stopped" and result.unfinished(), result
    assert shown == "stopped", shown
    assert code == 0 and "stopped, 1 of 1 task not done" in " ".join(out.split()), out


async def test_show_lists_a_team_s_refused_signals(client, dev_server, git_repo):
    """`show` listed the refusals of an agent and a pipeline only: a team's, in its `team`
    query, were shown nowhere but the Web UI's details (a user test, 2026-12-06)."""
    from tests.workflows.test_plan_mode import cli
    from tests.workflows.test_team import start_standing_team, team_script

    with scripted_model(team_script()):
        async with running_workers(client) as queues:
            handle = await start_standing_team(client, queues, git_repo)
            await handle.signal("kill_member", {"nmae": "c"})
            await wait_for_refusal(handle)
            code, out = await cli(dev_server.address, "show", handle.id)
            await handle.signal("shutdown", {"reason": "done"})
            await handle.result()
            # An ended team and its member are pointed to what takes them, not to `outlast
            # resume`, which refuses both (the same user test).
            # And after its end, when a person asks why the signal did nothing (a user test).
            ended_code, ended = await cli(dev_server.address, "show", handle.id)
            team_code, team_said = await cli(dev_server.address, "send", handle.id, "hi")
            member_code, member_said = await cli(dev_server.address, "send", f"{handle.id}/b", "hi")
    assert code == 0 and "refused: signal `kill_member` refused: unknown field nmae" in out, out
    assert ended_code == 0 and "refused: signal `kill_member` refused: unknown field" in ended, (
        ended
    )
    team_said, member_said = " ".join(team_said.split()), " ".join(member_said.split())
    assert team_code == 2 and "a new `outlast run` starts the task over" in team_said, team_said
    assert member_code == 2 and "its parent's or its pattern's to go on with" in member_said
    assert "outlast resume team" not in team_said + member_said


async def wait_for_refusal(handle) -> None:
    async def refused() -> bool:
        view = await handle.query("team", result_type=TeamView)
        return bool(view.refused_signals)

    for _ in range(100):
        if await refused():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the signal was never refused")


HEADLESS = {
    "agents": [
        member("lead", "idle", {"text": "Lead idle."}),
        {
            "name": "w1",
            "match": {"agent_name": "w1"},
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": HELD},
                {"tool_use": {"name": "Bash", "input": {"command": "sleep 20"}}},
                {"text": "w1 done"},
            ],
        },
    ]
}


async def test_a_team_ends_with_its_lead(client, dev_server, git_repo):
    """Its teammates worked on for no one (their reports and a person's mail to the lead went
    nowhere), and the team ran until each was stopped by hand (a user test, 2026-12-06)."""
    with scripted_model(HEADLESS):
        async with running_workers(client) as queues:
            handle = await start_pair(client, queues, git_repo)
            await client.get_workflow_handle(f"{handle.id}/lead").cancel(reason="lead gone")
            # The team stops w1, which goes as any stopped agent does: after its tool.
            await wait_for_view(
                handle, lambda v: "lead" in [m.name for m in v.members if m.state == "ended"]
            )
            (git_repo / "released").touch()
            result = await asyncio.wait_for(handle.result(), 60)
            patches = await taken_changes(handle)
    assert result.lead_lost() == "killed", result
    w1 = next(m for m in result.members if m.name == "w1")
    # Stopped by the team's end, as at any team end: no news to a lead that is gone.
    assert w1.status == "completed" and not w1.stopped, w1
    assert TEAM_ENDS_WITH_LEAD in patches


async def wait_for_view(handle, predicate) -> None:
    for _ in range(300):
        if predicate(await handle.query("team", result_type=TeamView)):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the team's view never matched")
