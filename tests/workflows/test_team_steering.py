"""A user steering a team while the lead adds a member: mail to `*` and a kill reach the
members there are, and neither is lost or counted against the one still starting."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
from temporalio.client import WorkflowExecutionStatus

from outlast.api import Task, TaskEnded
from outlast.inspect import agent_tree
from tests.interceptors import Hold
from tests.support import running_workers, scripted_model, wait_for
from tests.workflows.test_team import (
    last_request,
    member,
    start_team,
    team_input,
    wait_for_states,
)
from tests.workflows.test_team_spawn import spawn_script
from workflows import search_attributes as sa
from workflows.contracts import AgentResult, StopRequest
from workflows.pattern_contracts import MemberRef, TeamMail, TeamResult, TeamView


async def test_mail_to_everyone_while_a_member_starts_lets_the_team_end(client, git_repo):
    """Mail to `*` while d starts reaches a, b and c, and says so; d, which it did not reach,
    is not waited on for it: the team ends when quiet (it waited for ever for that mail)."""
    held = threading.Event()
    with scripted_model(spawn_script(), log_bodies=True) as model:
        async with running_workers(
            client, interceptors=[Hold(4, child_suffix="/d", on_hold=held.set)]
        ) as queues:
            handle = await start_team(client, queues, git_repo)
            await wait_for(held.is_set)
            sent = await handle.execute_update(
                "message_member", TeamMail(to="*", text="STATUS-CHECK"), result_type=str
            )
            result: TeamResult = await asyncio.wait_for(handle.result(), timeout=60)
    assert sent == "Message sent to a, b, c."
    assert result.status == "completed"
    assert [(m.name, m.status) for m in result.members] == [
        ("a", "completed"),
        ("b", "completed"),
        ("c", "completed"),
        ("d", "completed"),
    ]
    assert "STATUS-CHECK" in last_request(model.log, "b")
    assert "STATUS-CHECK" not in last_request(model.log, "d")


async def test_a_kill_while_the_member_starts_stops_it_once_started(client, git_repo):
    """`kill_member d` while d starts is kept and applied once d has started (it was lost);
    an unknown name is refused with the members' names; the team still ends."""
    held = threading.Event()
    with scripted_model(spawn_script()):
        async with running_workers(
            client, interceptors=[Hold(4, child_suffix="/d", on_hold=held.set)]
        ) as queues:
            handle = await start_team(client, queues, git_repo)
            await wait_for(held.is_set)
            await handle.signal("kill_member", MemberRef(name="d"))
            await handle.signal("kill_member", MemberRef(name="zed"))
            result: TeamResult = await asyncio.wait_for(handle.result(), timeout=60)
            view = await handle.query("team")
    assert result.status == "completed"
    assert {m.name: m.status for m in result.members} == {
        "a": "completed",
        "b": "completed",
        "c": "completed",
        "d": "killed",
    }
    d = await client.get_workflow_handle(f"{handle.id}/d").describe()
    assert d.status == WorkflowExecutionStatus.CANCELED
    assert view["refused_signals"] == [
        "signal `kill_member` refused: no member named zed; members: a, b, c, d"
    ]


async def test_a_member_stopped_on_its_own_reads_stopped_in_the_team_result(client, git_repo):
    """A `stop` sent to a working member itself (`outlast stop TEAM/c`) reads `stopped` in the
    team's result, as `show` says of the member (it read `completed`); the members the team's
    own shutdown stopped do not, b busy as it came. An idle member stopped (the lead, a, here)
    reads stopped too: a teammate does not finish on its own."""
    script = {
        "agents": [
            member("a", "idle", {"text": "a idle"}),
            # b and c keep working (a tool call every turn) until they are stopped.
            member("b", "busy", {"tool_use": {"name": "Bash", "input": {"command": "sleep 1"}}}),
            member("c", "busy", {"tool_use": {"name": "Bash", "input": {"command": "sleep 1"}}}),
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_team(client, queues, git_repo, end_when_quiet=False)
            await wait_for_states(handle, {"a": "idle", "b": "working", "c": "working"})
            team = Task(handle=handle, pattern="team")
            for name in ("c", "a"):  # c working, the lead idle; from code, as the CLI does
                await team.agent(name).stop(reason="not needed")
                await wait_for_states(handle, {name: "ended"})
            with pytest.raises(ValueError, match="one name, as its workflow id ends"):
                team.agent("a/helper")
            # A misspelt name read "is not running (workflow not found ...)" (a user test).
            for call in (team.agent("bb").stop(), team.agent("bb").status()):
                with pytest.raises(TaskEnded, match=f"{handle.id} has no agent 'bb' that ever"):
                    await call
            await handle.signal("shutdown", StopRequest(reason="done"))
            result: TeamResult = await asyncio.wait_for(handle.result(), timeout=60)
            tree = await agent_tree(client, handle.id)
            own = {
                name: await client.get_workflow_handle(
                    f"{handle.id}/{name}", result_type=AgentResult
                ).result()
                for name in ("a", "b", "c")
            }
            # What `outlast ls --all` and the Web UI read: `completed (stopped)`.
            listed = {
                name: (
                    await client.get_workflow_handle(f"{handle.id}/{name}").describe()
                ).typed_search_attributes.get(sa.AGENT_STATUS)
                for name in ("a", "b", "c")
            }
    # `show` says it as the team does: the lead's own run, idle when stopped, completed;
    # b, at work, was ended by the team's stop (it read plain `completed`: a user test).
    shown = {n.row.workflow_id.split("/")[-1]: n.outcome for n in tree.children}
    assert shown == {"a": "stopped", "b": "stopped with the team", "c": "stopped"}, shown
    # The team's own line gives its stop's words (its result keeps none: a user test).
    assert tree.error == "reason: done", tree.error
    # Each member's own result says it was stopped: the lead's said `completed` and not
    # stopped, idle as it was (a user test); b's at work when the team's end stopped it.
    assert {name: (r.status, r.stopped) for name, r in own.items()} == {
        "a": ("completed", True),
        "b": ("completed", True),
        "c": ("completed", True),
    }
    assert listed == {"a": "stopped", "b": "stopped", "c": "stopped"}, listed
    assert result.status == "stopped"
    assert {m.name: (m.status, m.stopped) for m in result.members} == {
        "a": ("completed", True),
        "b": ("completed", False),
        "c": ("completed", True),
    }
    assert result.lead_lost() == "stopped"


async def test_an_update_without_its_input_is_refused_and_the_team_goes_on(client, git_repo):
    """`temporal workflow update execute --name task_create` without `--input`: the handler
    was called without its argument, and that TypeError failed the workflow task, so the
    team stood still, every later update refused "Workflow Task in failed state" (a user
    test). Each update's validator now refuses it, with what the input needs; the members'
    own signals are checked as people's are. One standing team for several checks: starting
    one is the slow part."""
    from temporalio.client import WorkflowUpdateFailedError

    from tests.workflows.test_team import start_standing_team, team_script

    with scripted_model(team_script()):
        async with running_workers(client) as queues:
            handle = await start_standing_team(client, queues, git_repo)
            refusals = {}
            for name in ("task_create", "task_update", "message_member", "request_shutdown"):
                with pytest.raises(WorkflowUpdateFailedError) as refused:
                    await asyncio.wait_for(handle.execute_update(name), 15)
                refusals[name] = refused.value.cause.message
            # An input that does not fit an update an agent's call sends too (no
            # `ClientInput`) was refused as "Failed decoding arguments", its reason only in
            # the cause (a user test).
            misfits = {"task_create": {"tsk": {"subject": "x"}}, "add_member": {"spec": {}}}
            for name, payload in misfits.items():
                with pytest.raises(WorkflowUpdateFailedError) as refused:
                    await asyncio.wait_for(handle.execute_update(name, payload), 15)
                refusals[f"{name} misfit"] = refused.value.cause.message
            # A misspelt field that decodes all the same was dropped: `plan_mode_requird`
            # started a member that skipped plan approval, `callr` made the caller `user`
            # (a user test, 2026-12-05).
            spec = {"name": "carol", "prompt": "hi", "plan_mode_requird": True}
            typos = {
                "add_member": {"spec": spec, "caller": "lead"},
                "task_create": {"task": {"subject": "x", "description": "d"}, "callr": "a"},
                "task_update": {"update": {"taskId": "1", "status": "completed"}, "callr": "a"},
            }
            for name, payload in typos.items():
                with pytest.raises(WorkflowUpdateFailedError) as refused:
                    await asyncio.wait_for(handle.execute_update(name, payload), 15)
                refusals[f"{name} typo"] = refused.value.cause.message
            # A misspelt update name read "Update handler for 'message_membr' expected but
            # not found ... (type: RuntimeError, retryable: true)" (a user test, 2026-12-07).
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await asyncio.wait_for(handle.execute_update("message_membr", {"to": "a"}), 15)
            unknown_update = refused.value.cause
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                bad_case = TeamMail(to="B", text="hi")
                await asyncio.wait_for(handle.execute_update("message_member", bad_case), 15)
            refusals["case"] = refused.value.cause.message
            # Mail from outside under a member's name: a member took it as its lead's.
            posing = TeamMail(to="b", text="approved", sender="a")
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await asyncio.wait_for(handle.execute_update("message_member", posing), 15)
            refusals["posing"] = refused.value.cause.message
            # The members' own signals, sent without an input (or with one that does not
            # fit) by any client, failed the workflow task the same way.
            await handle.signal("member_state")
            await handle.signal("shutdown_response", {"approve": "maybe"})
            sent = await handle.execute_update(
                "message_member", TeamMail(to="b", text="still there?"), result_type=str
            )
            view = await handle.query("team", result_type=TeamView)
            desc = await handle.describe()
            await handle.signal("shutdown", StopRequest(reason="done"))
            await asyncio.wait_for(handle.result(), timeout=60)
    assert unknown_update.message == (
        "update `message_membr` refused: TeamWorkflow has no update of that name (did you mean "
        "message_member?); its updates: add_member, message_member, request_shutdown, "
        "task_create, task_update"
    )
    assert unknown_update.non_retryable
    assert refusals.pop("task_create misfit") == (
        "invalid TaskCreateRequest: task: Field required; unknown field tsk (did you mean task?)"
    )
    assert refusals.pop("case").startswith("no member named 'B' (did you mean b?); members: ")
    assert refusals.pop("posing") == (
        "sender 'a' is a member's name: mail from outside the team comes under a name of its "
        "own (default user)"
    )
    assert refusals.pop("add_member typo").startswith(
        "update `add_member` refused: unknown field spec.plan_mode_requird (did you mean "
        "plan_mode_required?) (misspelt"
    )
    for name in ("task_create", "task_update"):
        assert refusals.pop(f"{name} typo").startswith(
            f"update `{name}` refused: unknown field callr (did you mean caller?) (misspelt"
        )
    assert refusals.pop("add_member misfit").startswith(
        "invalid AddMemberRequest: spec.name: Field required"
    )
    assert refusals == {
        "task_create": "update `task_create` refused: it needs an input, a JSON object with task",
        "task_update": "update `task_update` refused: it needs an input, a JSON object with update",
        "message_member": (
            "update `message_member` refused: it needs an input, a JSON object with to, text"
        ),
        "request_shutdown": (
            "update `request_shutdown` refused: it needs an input, a JSON object with name"
        ),
    }
    assert sent == "Message sent to b."
    assert view.refused_signals[-2].startswith("signal `member_state` refused: input: Input")
    assert view.refused_signals[-1].startswith("signal `shutdown_response` refused: ")
    assert desc.raw_description.pending_workflow_task.attempt <= 1


async def test_the_last_working_member_stopped_reads_stopped_though_the_team_goes_quiet(
    client, git_repo
):
    """Stopping the last member at work made the team quiet, and it ended before that
    member's result was read: that member read `completed` (user test 3). Its last report says
    a stop ended it, and the team reads that while it is not ending yet. Since
    `team-loss-told` the team waits for each stopped member's end and tells the lead (whose
    turn that starts) before it goes quiet."""
    busy = {"tool_use": {"name": "Bash", "input": {"command": "sleep 1"}}}
    script = {
        "agents": [
            member("a", "idle", {"text": "a idle"}),
            member("b", "busy", busy),
            member("c", "busy", busy),
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await client.start_workflow(
                "TeamWorkflow",
                team_input(git_repo, queues),
                id=f"team-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue,
                result_type=TeamResult,
            )
            await wait_for_states(handle, {"a": "idle", "b": "working", "c": "working"})
            for name in ("b", "c"):
                member_handle = client.get_workflow_handle(f"{handle.id}/{name}")
                await member_handle.signal("stop", StopRequest(reason="not needed"))
                if name == "b":
                    await wait_for_states(handle, {name: "ended"})
            result: TeamResult = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed"
    assert {m.name: (m.status, m.stopped) for m in result.members} == {
        "a": ("completed", False),
        "b": ("completed", True),
        "c": ("completed", True),
    }
