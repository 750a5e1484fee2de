"""What a parent hears of a sub-agent a person stopped: not `completed`, and not taken for
its own TaskStop (a user test, 2026-12-06, found both)."""

from __future__ import annotations

from outlast.inspect import agent_tree
from outlast.tree_text import tree_lines
from tests.support import (
    agent_input,
    notifications,
    running_workers,
    scripted_model,
    spawn,
    start,
    tool_results,
)
from tests.workflows.test_plan_mode import cli
from tests.workflows.test_stop_and_kill import wait_until_tool_runs
from workflows.contracts import StopRequest


def script(background: bool) -> dict:
    return {
        "agents": [
            {
                "name": "digger",
                "match": {"agent_name": "digger"},
                "after_last": "repeat_last",
                "turns": [
                    {
                        "text": "Found two of the five call sites so far.",
                        # Long enough that the stop or the cancel lands while it runs.
                        "tool_use": {"name": "Bash", "input": {"command": "sleep 3"}},
                    },
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("digger", "find the call sites", background)},
                    {"text": "Waiting for digger."},
                    {"text": "Noted."},
                ],
            },
        ]
    }


async def ended_by(client, git_repo, background: bool, end):
    """The parent's result after `end(child_handle)` ended its child `digger` mid-Bash."""
    with scripted_model(script(background)):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            child = client.get_workflow_handle(f"{handle.id}/digger")
            await wait_until_tool_runs(child, "Bash")
            await end(child)
            return await handle.result()


async def test_a_background_child_a_person_stops_is_reported_stopped_with_its_words(
    client, git_repo
):
    result = await ended_by(
        client, git_repo, True, lambda c: c.signal("stop", StopRequest(reason="wrong directory"))
    )
    (note,) = notifications(result)
    assert "<status>killed</status>" in note, note
    assert '<summary>Agent "task digger" was stopped</summary>' in note, note
    assert (
        "<result>It was stopped by the user before it finished (reason: wrong directory); its "
        "task is not done.\n\nFound two of the five call sites so far.</result>"
    ) in note, note


async def test_a_background_child_a_person_kills_is_not_taken_for_a_task_stop(
    client, dev_server, git_repo
):
    said = []

    async def kill(child):
        said.append(await cli(dev_server.address, "kill", child.id, "--reason", "wrong branch"))
        said.append(child.id)

    result = await ended_by(client, git_repo, True, kill)
    (note,) = notifications(result)
    assert said[0][0] == 0, said
    # `outlast show` of it says why too (it said `canceled, killed` only).
    shown = tree_lines(await agent_tree(client, said[1]))
    assert "killed" in shown[0] and "reason: wrong branch" in shown[0], shown
    # And a follow's end (`outlast attach`, `run`).
    import asyncio
    import io

    from rich.console import Console

    from outlast.progress import outcome

    child = client.get_workflow_handle(said[1])
    ended = asyncio.ensure_future(child.result())
    await asyncio.wait({ended})
    out = io.StringIO()
    assert await outcome(ended, child, Console(file=out, width=200)) is None
    assert "killed (the workflow was cancelled; reason: wrong branch)" in out.getvalue(), out
    assert "<status>killed</status>" in note, note
    # The reason the kill was given reaches the parent (`outlast kill` had no --reason).
    assert (
        "<result>It was stopped by the user (cancelled with `outlast kill` or in the Web UI; "
        "reason: wrong branch), not by a TaskStop of yours.\n\nFound two of the five call "
        "sites so far.</result>"
    ) in note, note


async def test_a_sync_child_a_person_stops_answers_with_the_stop_said_first(client, git_repo):
    result = await ended_by(client, git_repo, False, lambda c: c.signal("stop", StopRequest()))
    (answer,) = [r for r in tool_results(result) if "call sites" in str(r.content)]
    assert not answer.is_error
    assert str(answer.content).startswith(
        "It was stopped by the user before it finished; its task is not done.\n\n"
        "Found two of the five call sites so far.\n\nagentId: "
    ), answer.content


async def test_show_says_a_stop_waits_for_the_tool_running_now(client, git_repo):
    """`show` said `running_tools` for the whole of a long command after `outlast stop`, with
    nothing of the stop (a user test, 2026-12-06)."""
    from outlast.inspect import agent_tree
    from outlast.tree_text import tree_lines

    hold = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.1; done"}}
    script = {"agents": [{"name": "main", "turns": [{"tool_use": hold}, {"text": "never"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_until_tool_runs(handle, "Bash")
            await handle.signal("stop", StopRequest(reason="enough"))
            for _ in range(50):
                tree = await agent_tree(client, handle.id)
                if tree.outcome and "stop requested" in tree.outcome:
                    break
            (git_repo / "released").touch()
            result = await handle.result()
    assert "running_tools, stop requested: it ends after its current turn" in tree_lines(tree)[0]
    assert result.stopped


async def test_a_parent_hears_its_killed_child_never_read_its_message(client, git_repo):
    """The parent's SendMessage reached its child as a person killed it: queued, and lost
    without a word (a review, 2026-12-07). The kill's notice says so, and that a SendMessage
    hands it over."""
    from tests.workflows.test_agent_control import wait_status

    def wait_for(name: str) -> str:
        return f"until [ -e {name} ]; do sleep 0.1; done"

    hold = {"name": "Bash", "input": {"command": wait_for("released")}}
    ask = {"name": "SendMessage", "input": {"to": "digger", "message": "ALSO-CHECK-TESTS"}}
    script = {
        "agents": [
            {"name": "digger", "match": {"agent_name": "digger"}, "turns": [{"tool_use": hold}]},
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("digger", "find the call sites", True)},
                    # Until digger is at work: sent before its first call, the call reads it.
                    {"tool_use": {"name": "Bash", "input": {"command": wait_for("ask")}}},
                    {"tool_use": ask},
                    {"text": "Waiting for digger."},
                    {"text": "Noted."},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            child = client.get_workflow_handle(f"{handle.id}/digger")
            await wait_status(child, lambda s: "Bash" in s.current_tools)
            (git_repo / "ask").touch()
            await wait_status(child, lambda s: s.mailbox == 1)
            await child.cancel(reason="wrong branch")
            result = await handle.result()
    (note,) = notifications(result)
    assert "<status>killed</status>" in note, note
    assert (
        "It never read 1 message sent to it before it ended; a SendMessage to it resumes it "
        "and hands them over first."
    ) in note, note
