"""A user steering a team while the lead adds a member: mail to `*` and a kill reach the
members there are, and neither is lost or counted against the one still starting."""

from __future__ import annotations

import asyncio
import threading

from temporalio.client import WorkflowExecutionStatus

from tests.interceptors import Hold
from tests.support import running_workers, scripted_model, wait_for
from tests.workflows.test_team import last_request, start_team
from tests.workflows.test_team_spawn import spawn_script
from workflows.pattern_contracts import MemberRef, TeamMail, TeamResult


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
