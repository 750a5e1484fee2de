"""Auto-compaction end to end: an agent whose conversation nears the context window has the
model sum it up, and goes on from the summary and its own last step (agents/compaction.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agents.compaction import MAX_FAILURES
from tests.support import (
    FAST_MODEL,
    agent_input,
    conversation,
    fast_config,
    running_workers,
    scripted_model,
    start,
    taken_changes,
    tool_results,
)
from tests.workflows.test_plan_mode import cli
from workflows.contracts import StopRequest
from workflows.loop_model import AUTO_COMPACT, COMPACT_WHEN_TOO_LONG

pytestmark = pytest.mark.reliability

NEAR_FULL = 180_000
"""Reported on top of a real answer's input tokens: past the default line (167,000)."""
SUMMARY_ASKED = "create a detailed summary of the conversation so far"


def read(name: str) -> dict[str, Any]:
    return {"name": "Read", "input": {"file_path": f"{{{{cwd}}}}/{name}"}}


def edit(name: str, old: str) -> dict[str, Any]:
    path = f"{{{{cwd}}}}/{name}"
    return {"name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": "X"}}


def summarizer(*turns: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "summarizer",
        "match": {"last_user_contains": SUMMARY_ASKED},
        "turns": list(turns),
        "after_last": "repeat_last",
    }


def after_summary(*turns: dict[str, Any]) -> dict[str, Any]:
    """The agent once its conversation is the summary's: its turns count from the compacted
    conversation, which starts with one answer of the agent's (index 1)."""
    return {
        "name": "after",
        "match": {"conversation_contains": ["THE-GIST"]},
        "turns": list(turns),
        "after_last": "repeat_last",
    }


def requests_of(model, agent: str) -> list[dict[str, Any]]:
    return [r for r in model.log if r.get("agent") == agent and r["status"] == 200]


def texts(request: dict[str, Any]) -> str:
    return str(request["body"]["messages"])


COMPACTED = {
    "agents": [
        summarizer({"text": "<analysis>going over it</analysis><summary>THE-GIST</summary>"}),
        after_summary(
            {"text": "unused"},
            {"tool_use": [edit("README.md", "sample"), edit("notes.txt", "NOTES")]},
            {"text": "DONE-AFTER-COMPACTION"},
        ),
        {
            "name": "main",
            "turns": [
                {"text": "Reading the README.", "tool_use": read("README.md")},
                {
                    "text": "Reading the notes.",
                    "tool_use": read("notes.txt"),
                    "extra_input_tokens": NEAR_FULL,
                },
            ],
        },
    ]
}
"""Two reads, the second answered near the context window; then a summary, and an answer
from the compacted conversation."""


async def test_a_full_conversation_is_summed_up_and_the_agent_goes_on_from_its_last_step(
    client, dev_server, git_repo
):
    (git_repo / "notes.txt").write_text("NOTES-CONTENT\n")
    with scripted_model(COMPACTED, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("ORIGINAL-TASK: read the files", git_repo, queues)
            handle = await start(client, inp, queues)
            result = await handle.result()
            # `outlast transcript` shows what the summary replaced, then the rest.
            code, shown = await cli(dev_server.address, "transcript", handle.id, "--compacted")
            _, now = await cli(dev_server.address, "transcript", handle.id)
            _, as_json = await cli(
                dev_server.address, "transcript", handle.id, "--compacted", "--json"
            )
    assert result.status == "completed" and result.final_text == "DONE-AFTER-COMPACTION", result
    [asked] = requests_of(model, "summarizer")
    # The model summed up the conversation before its last answer, the README's result too.
    assert "ORIGINAL-TASK" in texts(asked) and "Reading the notes." not in texts(asked)
    after = requests_of(model, "after")[0]
    sent = after["body"]["messages"]
    assert "ORIGINAL-TASK" not in texts(after), "the early conversation was not dropped"
    assert sent[0]["role"] == "user" and "THE-GIST" in str(sent[0]["content"])
    assert "going over it" not in texts(after)
    # Its last step is kept as it was, and the result of that step comes in full.
    assert sent[1]["role"] == "assistant" and "Reading the notes." in str(sent[1]["content"])
    assert "NOTES-CONTENT" in str(sent[2]["content"])
    # The agent's conversation is the compacted one from here on.
    messages = conversation(result)
    assert "THE-GIST" in messages[0].text() and len(messages) == 6
    # It no longer has the README it read before: an edit needs a new Read. The notes, whose
    # result it was sent after the summary, it may edit.
    readme, notes = tool_results(result)[-2:]
    assert readme.is_error and "has not been read" in readme.content, readme
    assert not notes.is_error and (git_repo / "notes.txt").read_text() == "X-CONTENT\n"
    assert AUTO_COMPACT in await taken_changes(handle)
    flat = " ".join(shown.split())
    assert code == 0 and flat.index("ORIGINAL-TASK") < flat.index("compacted here"), shown
    assert flat.index("compacted here") < flat.index("THE-GIST") < flat.index("DONE-AFTER"), shown
    assert "ORIGINAL-TASK" not in now and "THE-GIST" in now and "compacted here" not in now, now
    segments = [json.loads(line)["segment"] for line in as_json.splitlines()]
    assert segments == sorted(segments) and set(segments) == {0, 1}, as_json
    # Its usage counts the compaction call as well.
    assert result.usage.tokens.output_tokens == sum(r["usage"]["output_tokens"] for r in model.log)


async def test_a_compaction_without_a_summary_loses_nothing_and_is_not_tried_for_ever(
    client, git_repo
):
    """An answer with no text (a tool call, against the request) is no summary: the agent
    goes on with its whole conversation, and after MAX_FAILURES such answers in a row stops
    asking, rather than paying a call over the whole conversation every turn."""
    full = {"text": "Again.", "tool_use": read("README.md"), "extra_input_tokens": NEAR_FULL}
    script = {
        "agents": [
            summarizer({"tool_use": read("README.md")}),
            {
                "name": "main",
                "turns": [
                    {"text": "Reading.", "tool_use": read("README.md")},
                    *[full] * (MAX_FAILURES + 1),
                    {"text": "FINISHED"},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("TASK-TEXT", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "FINISHED", result
    assert len(requests_of(model, "summarizer")) == MAX_FAILURES
    main = requests_of(model, "main")
    assert len(main) == MAX_FAILURES + 3
    # Every call after a failed compaction has the whole conversation and the last results.
    assert all("TASK-TEXT" in texts(r) for r in main)
    assert len(tool_results(result)) == MAX_FAILURES + 2


async def test_a_stop_that_comes_during_the_summary_ends_the_agent_with_no_call_after_it(
    client, git_repo
):
    """The summary of a full window takes a while: a stop sent meanwhile must not be
    followed by another model call, nor by the tools it would ask for."""
    script = {
        "agents": [
            summarizer({"delay_ms": 3_000, "text": "<summary>THE-GIST</summary>"}),
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [
                    {"text": "Reading.", "tool_use": read("README.md")},
                    {
                        "text": "Again.",
                        "tool_use": read("README.md"),
                        "extra_input_tokens": NEAR_FULL,
                    },
                    {"tool_use": {"name": "Bash", "input": {"command": "touch after-stop.txt"}}},
                ],
            },
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)

            await until_summarizing(handle)
            await handle.signal("stop", StopRequest(reason="enough"))
            result = await handle.result()
    assert result.stopped, result
    assert [r["agent"] for r in model.log if r["agent"] == "main"] == ["main", "main"]
    assert not (git_repo / "after-stop.txt").exists()


async def until_summarizing(handle) -> None:
    for _ in range(300):
        pending = (await handle.describe()).raw_description.pending_activities
        if any(a.activity_type.name == "llm.compact" for a in pending):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("no compaction started within 30 s")


LINE = 20_000
"""Above a first call (the system prompt and the tools, ~11,000 tokens), below it with the
big file's ~12,000 waiting."""


async def test_tool_results_not_sent_yet_count_toward_the_line(client, git_repo):
    """The last call's conversation was below the line, but with the big result waiting
    for the next call it is over: the summary comes before that call, not after the API
    has refused it."""
    (git_repo / "big.txt").write_text(
        "".join(f"line {i:05d} of a big file\n" for i in range(1_500))
    )
    script = {
        "agents": [
            summarizer({"text": "<summary>THE-GIST</summary>"}),
            after_summary({"text": "DONE"}),
            {"name": "main", "turns": [{"text": "Reading.", "tool_use": read("big.txt")}]},
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            line = {"auto_compact_tokens": LINE}
            config = fast_config(model=FAST_MODEL.model_copy(update=line))
            inp = agent_input("go", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert result.final_text == "DONE", result
    first = model.log[0]["usage"]
    assert sum(first.values()) < LINE - 5_000, first  # the line was not reached by the call
    assert [r["agent"] for r in model.log] == ["main", "summarizer", "after"]


async def test_a_planning_agent_compacted_is_told_plan_mode_again_and_keeps_its_plan_file(
    client, git_repo
):
    """The plan-mode instructions went with the old conversation: the next turn has the
    full reminder, which knows the plan file is there (a new Write of it would be refused:
    the agent has not read it since the summary)."""
    write_plan = {"name": "Write", "input": {"file_path": "{{plan_file}}", "content": "# Plan\n"}}
    script = {
        "agents": [
            summarizer({"text": "<summary>THE-GIST</summary>"}),
            after_summary({"text": "planning on"}),
            {
                "name": "main",
                "turns": [
                    {"tool_use": write_plan},
                    {"tool_use": read("README.md"), "extra_input_tokens": NEAR_FULL},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("plan a change", git_repo, queues, permission_mode="plan")
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert result.final_text == "planning on", result
    after = texts(requests_of(model, "after")[0])
    assert "A plan file already exists" in after and "No plan file exists yet" not in after
    assert "## Workflow" in after, "not the full reminder"


TOO_LONG = {
    "agents": [
        summarizer({"text": "<summary>THE-GIST</summary>"}),
        after_summary({"text": "unused"}, {"text": "DONE-AFTER-REFUSAL"}),
        {
            "name": "main",
            "turns": [
                {"text": "Reading.", "tool_use": read("README.md")},
                # The estimate fell short: the API refuses the call as too long.
                {
                    "error": {
                        "status": 400,
                        "type": "invalid_request_error",
                        "message": "prompt is too long: 210000 tokens > 200000 maximum",
                    }
                },
            ],
        },
    ]
}
"""A call refused as too long for the window, then a summary, and the same call again."""


async def test_a_call_refused_as_too_long_is_sent_again_after_a_summary(client, git_repo):
    with scripted_model(TOO_LONG, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("TASK-TEXT", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "DONE-AFTER-REFUSAL", result
    assert [(r["agent"], r["status"]) for r in model.log] == [
        ("main", 200),
        ("main", 400),
        ("summarizer", 200),
        ("after", 200),
    ]
    # Sent again with the Read's result, after the summary in place of what came before.
    sent = texts(requests_of(model, "after")[0])
    assert "THE-GIST" in sent and "TASK-TEXT" not in sent and "# sample" in sent
    assert COMPACT_WHEN_TOO_LONG in await taken_changes(handle)


async def test_with_compaction_off_a_call_refused_as_too_long_fails_the_agent(client, git_repo):
    """`DISABLE_AUTO_COMPACT=1` (`model.auto_compact_tokens: 0`) means never, after a refusal
    too."""
    from temporalio.client import WorkflowFailureError

    off = fast_config(model=FAST_MODEL.model_copy(update={"auto_compact_tokens": 0}))
    with scripted_model(TOO_LONG) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=off), queues)
            try:
                await handle.result()
                raise AssertionError("the agent went on")
            except WorkflowFailureError as e:
                assert "prompt is too long" in str(e.cause), e.cause
    assert [r["agent"] for r in model.log] == ["main", "main"]


async def test_a_summary_request_too_long_is_sent_again_without_its_oldest_part(client, git_repo):
    """The conversation no longer fits even to be summed up: as Claude Code does, the
    oldest part is left out of the request (and the request says so) until it fits."""
    from activities.compaction import OMITTED

    too_long = {"status": 400, "type": "invalid_request_error", "message": "prompt is too long"}
    script = {
        "agents": [
            {
                "name": "refused",
                "match": {
                    "last_user_contains": SUMMARY_ASKED,
                    "conversation_contains": ["ORIGINAL-TASK"],
                },
                "turns": [{"error": too_long}],
                "after_last": "repeat_last",
            },
            summarizer({"text": "<summary>THE-GIST</summary>"}),
            after_summary({"text": "unused"}, {"text": "DONE"}),
            {
                "name": "main",
                "turns": [
                    *[{"tool_use": read("README.md")}] * 3,
                    {"tool_use": read("README.md"), "extra_input_tokens": NEAR_FULL},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("ORIGINAL-TASK", git_repo, queues)
            result = await (await start(client, inp, queues)).result()
    assert result.final_text == "DONE", result
    assert [r["agent"] for r in model.log] == ["main"] * 4 + ["refused", "summarizer", "after"]
    asked = requests_of(model, "summarizer")[0]["body"]["messages"]
    assert OMITTED in str(asked[0]["content"]) and "ORIGINAL-TASK" not in str(asked)
