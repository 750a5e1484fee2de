"""An agent that a stop or its turn limit ends keeps its last turn's tool results in its
conversation: a resume (R66, `outlast resume`) goes on from them (a user test: the work of
the last turn, a command's output, was gone from the resumed agent's conversation)."""

from __future__ import annotations

import asyncio
import contextlib
import json

from temporalio.client import WorkflowFailureError

from agents.messages import ToolResultBlock
from outlast.resume import resume_agent
from tests.support import (
    agent_input,
    conversation,
    running_workers,
    scripted_model,
    start,
    taken_changes,
)
from tests.workflows.test_agent_control import wait_status
from workflows.contracts import StopRequest

# Over 512 characters of output: the tool keeps it in the store, and the loop holds a
# reference to it (the end must keep the content, not an empty result).
BASH = {"name": "Bash", "input": {"command": "sleep 1; seq 1 400; echo KEPT-OUTPUT-42"}}


def script(first: list[dict]) -> dict:
    return {
        "agents": [
            {
                "name": "resumed",
                "match": {"last_user_contains": "go on"},
                "after_last": "repeat_last",
                "turns": [{"text": "went on"}],
            },
            {"name": "first", "after_last": "repeat_last", "turns": first},
        ]
    }


def last_results(result) -> list[ToolResultBlock]:
    last = conversation(result)[-1]
    return [b for b in last.content if isinstance(b, ToolResultBlock)]


async def test_the_turn_limit_keeps_the_last_results_and_a_resume_sees_them(client, git_repo):
    with scripted_model(script([{"tool_use": BASH}]), log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("Run it.", git_repo, queues, max_turns=1)
            handle = await start(client, inp, queues)
            result = await asyncio.wait_for(handle.result(), 60)
            markers = await taken_changes(handle)
            resumed = await resume_agent(client, handle.id, "go on")
            again = await asyncio.wait_for(resumed.handle.result(), 60)
    assert result.max_turns_reached
    (kept,) = last_results(result)
    assert "KEPT-OUTPUT-42" in str(kept.content) and not kept.is_error
    assert "\n399\n400\n" in str(kept.content)
    assert "last-results-kept" in markers
    assert again.final_text == "went on"
    sent = json.dumps(model.log[-1]["body"]["messages"])
    # Once, as the Bash call's result (the command itself names it too).
    assert sent.count("400\\nKEPT-OUTPUT-42") == 1, sent


async def test_a_stop_during_a_command_keeps_its_result(client, git_repo):
    with scripted_model(script([{"tool_use": BASH}, {"text": "never"}])):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("Run it.", git_repo, queues), queues)
            await wait_status(handle, lambda s: s.state == "running_tools")
            await handle.signal("stop", StopRequest(reason="enough"))
            result = await asyncio.wait_for(handle.result(), 60)
    assert result.stopped
    (kept,) = last_results(result)
    assert "KEPT-OUTPUT-42" in str(kept.content)


async def test_a_kill_mid_turn_keeps_the_calls_that_had_finished(client, git_repo):
    """A kill (TaskStop, `outlast kill`) while one call of a turn still ran lost the results
    of those that had finished: a resume read the file again, or went on without it. The
    cut-off call is kept too, answered as interrupted with the kill's words: a resume had
    dropped it, and the model ran a command again that had run in part, unwarned (a user
    test, 2026-12-07; patched `kill-answers-cut-off-calls`)."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    hold = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.1; done"}}
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}}
    after = {"name": "Bash", "input": {"command": "echo ran > after.txt"}}
    with scripted_model(
        script([{"tool_use": [read, hold, after]}, {"text": "never"}]), log_bodies=True
    ) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("Look.", git_repo, queues), queues)
            await wait_until_tool_runs(handle, "Bash")
            await handle.cancel(reason="enough")
            with contextlib.suppress(WorkflowFailureError):
                await asyncio.wait_for(handle.result(), 60)
            markers = await taken_changes(handle)
            resumed = await resume_agent(client, handle.id, "go on")
            again = await asyncio.wait_for(resumed.handle.result(), 60)
    assert "kill-keeps-results" in markers and "kill-answers-cut-off-calls" in markers
    assert again.final_text == "went on"
    sent = model.log[-1]["body"]["messages"]
    said = json.dumps(sent)
    assert "return 'hello'" in said, said  # the Read's result
    # The Bash call it cut off, with what became of it.
    assert "until [ -e released ]" in said, said
    cut, unrun = [b for b in last_results_of(sent) if b.get("is_error")]
    assert str(cut["content"]).startswith(
        "[Request interrupted by user for tool use] The agent was killed (enough) while this "
        "call ran: it may have taken effect in part or in full."
    ), cut
    # The call after it, one at a time, had not started: said so (a review).
    assert str(unrun["content"]) == (
        "[Request interrupted by user for tool use] The agent was killed (enough) before this "
        "call ran: it was not run."
    ), unrun
    assert not (git_repo / "after.txt").exists()


def last_results_of(messages: list[dict]) -> list[dict]:
    """The tool results of the request's messages (as sent)."""
    return [
        b
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


FAILING = {"error": {"status": 400, "type": "invalid_request_error", "message": "bad"}}


async def test_a_failed_model_call_keeps_the_results_it_was_to_send(client, git_repo):
    """A user test (2026-12-06): an agent whose model call failed after a Bash call ran was
    resumed from the conversation before that call: the command's run, and its output, gone
    from it (the model might run it again). The results the failed call carried are kept
    (patched failure-keeps-results), and the resume goes on from them."""
    with scripted_model(script([{"tool_use": BASH}, FAILING]), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("Run it.", git_repo, queues), queues)
            with contextlib.suppress(WorkflowFailureError):
                await asyncio.wait_for(handle.result(), 60)
            status = (await handle.describe()).status
            markers = await taken_changes(handle)
            resumed = await resume_agent(client, handle.id, "go on")
            again = await asyncio.wait_for(resumed.handle.result(), 60)
    assert status.name == "FAILED", status
    assert "failure-keeps-results" in markers
    assert again.final_text == "went on"
    sent = json.dumps(model.log[-1]["body"]["messages"])
    assert sent.count("400\\nKEPT-OUTPUT-42") == 1, sent
