"""Bad model output end to end (reliability row 9): a tool call cut off by max_tokens is an
error result that does nothing, and spawning past the concurrency limit is refused."""

from __future__ import annotations

import json

import pytest

from agents.config import AgentSettings
from tests.support import (
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    spawn,
    start,
    tool_results,
)
from tests.workflows.test_subagents import child_ids
from workflows.turns import CONTEXT_FULL_NOTE

pytestmark = pytest.mark.reliability

CUT_OFF = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "Writing the file.",
                    "tool_use": {
                        "name": "Write",
                        "input": {"file_path": "{{cwd}}/cut.txt", "content": "x" * 2000},
                    },
                    "stop_reason": "max_tokens",
                },
                {"text": "I will write it in smaller parts."},
            ],
        }
    ]
}


async def test_a_tool_call_cut_off_by_max_tokens_is_an_error_and_does_nothing(client, git_repo):
    with scripted_model(CUT_OFF) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("write", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and len(model.log) == 2
    (cut,) = tool_results(result)
    assert cut.is_error and "max_tokens" in cut.content, cut.content
    assert not (git_repo / "cut.txt").exists()


async def test_an_answer_with_no_content_does_not_break_the_next_call(client, git_repo):
    """The API answers a turn with no content now and then (and a text block may stream
    empty); it refuses such a message in a later request. An agent that got one while a
    background sub-agent was out went on at its notification and failed that call."""
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [{"delay_ms": 1500, "text": "HELPED"}],
            },
            # Its turns are counted from the conversation, where the empty answer is not.
            {
                "name": "main-done",
                "match": {"conversation_contains": ["HELPED"]},
                "turns": [{"text": "MAIN-DONE"}],
                "after_last": "repeat_last",
            },
            {
                "name": "main",
                "turns": [{"tool_use": spawn("helper", "help", background=True)}, {"text": ""}],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "MAIN-DONE", result
    assert all(r["status"] == 200 for r in model.log), [r["status"] for r in model.log]


CONTEXT_FULL = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "tool_use": {"name": "Bash", "input": {"command": "touch cut.txt"}},
                    "stop_reason": "model_context_window_exceeded",
                },
                {"text": "Out of room."},
            ],
        }
    ]
}


async def test_a_tool_call_cut_off_by_the_context_window_is_an_error_and_does_nothing(
    client, git_repo
):
    """`model_context_window_exceeded` ends a response mid-output as max_tokens does: the
    cut call ran with the input that had arrived."""
    with scripted_model(CONTEXT_FULL):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    (cut,) = tool_results(result)
    assert cut.is_error and "context window" in cut.content, cut.content
    assert not (git_repo / "cut.txt").exists()


async def test_an_answer_cut_off_by_max_tokens_is_taken_up_where_it_stopped(client, git_repo):
    """As Claude Code does: an answer max_tokens cut off (no tool call in it) is followed by
    a request to go on, three times in a row at most, and the agent's answer is the whole of
    it. The cut answer ended the agent: a parent got half a report as all of it."""
    cut = {"text": "PART-ONE ", "stop_reason": "max_tokens"}
    script = {"agents": [{"name": "main", "turns": [cut, {"text": "PART-TWO"}]}]}
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    assert result.final_text == "PART-ONE PART-TWO" and result.turns == 2, result
    assert "Output token limit hit" in json.dumps(model.log[-1]["body"]["messages"][-1])
    script = {"agents": [{"name": "main", "turns": [cut], "after_last": "repeat_last"}]}
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    assert result.turns == 4 and len(model.log) == 4 and result.status == "completed", result
    # Cut in its thinking, with no text: the answer is what follows, not an earlier turn's
    # words ("Reading." glued to the rest).
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}}
    thinking_cut = {"thinking": "long thoughts", "stop_reason": "max_tokens"}
    script = {
        "agents": [
            {
                "name": "rest",
                "match": {"conversation_contains": ["Output token limit hit"]},
                "turns": [{"text": "REST"}],
                "after_last": "repeat_last",
            },
            {"name": "main", "turns": [{"text": "Reading.", "tool_use": read}, thinking_cut]},
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    assert result.final_text == "REST" and result.turns == 3, result


async def test_an_answer_the_context_window_cut_off_says_so(client, git_repo):
    """No room is left to take it up (as after max_tokens): the answer says it was cut off,
    so a parent does not take half a report for the whole."""
    cut = {"text": "HALF A REPORT", "stop_reason": "model_context_window_exceeded"}
    with scripted_model({"agents": [{"name": "main", "turns": [cut]}]}):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    assert result.final_text == "HALF A REPORT" + CONTEXT_FULL_NOTE, result
    assert result.status == "completed" and result.turns == 1


MALFORMED = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "tool_use": [
                        # A trailing comma, then a single-quoted key: both are not JSON.
                        {"name": "Write", "raw_input": '{"file_path": "{{cwd}}/bad.txt",}'},
                        {"name": "Bash", "raw_input": "{'command': 'touch bad2.txt'}"},
                        {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}},
                    ]
                },
                {"text": "Fixed my JSON."},
            ],
        }
    ]
}


async def test_tool_input_that_is_not_json_is_an_error_and_does_nothing(client, git_repo):
    """The SDK's stream does not parse every malformed input: whatever it makes of one, the
    call is an error result the model can fix, its siblings still run, and nothing is made."""
    with scripted_model(MALFORMED) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("write", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and len(model.log) == 2
    write, bash, read = tool_results(result)
    assert write.is_error and bash.is_error, (write.content, bash.content)
    assert not read.is_error and "# sample" in read.content
    assert not (git_repo / "bad.txt").exists() and not (git_repo / "bad2.txt").exists()


def slow_kid(name: str) -> dict:
    return {
        "name": name,
        "match": {"agent_name": name},
        "turns": [{"delay_ms": 1500, "text": f"{name} done"}],
    }


RUNAWAY = {
    "agents": [
        slow_kid("k1"),
        slow_kid("k2"),
        slow_kid("k3"),
        {
            "name": "main",
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": [spawn(n, f"task {n}", True) for n in ("k1", "k2", "k3")]},
                {"text": "waiting for the helpers"},
            ],
        },
    ]
}


async def test_runaway_spawning_stops_at_the_concurrency_limit(client, git_repo):
    config = fast_config(agents=AgentSettings(max_concurrent=2))
    with scripted_model(RUNAWAY):
        async with running_workers(client) as queues:
            inp = agent_input("fan out", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            result = await handle.result()
            started = await child_ids(handle)
    assert sorted(i.rsplit("/", 1)[1] for i in started) == ["k1", "k2"]
    first, second, third = tool_results(result)[:3]
    assert not first.is_error and not second.is_error
    assert third.is_error and "Too many sub-agents running (2, max 2)" in third.content
