"""Auto-compaction end to end: an agent whose conversation nears the context window has the
model sum it up, and goes on from the summary and its own last step (agents/compaction.py)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.compaction import MAX_FAILURES
from tests.support import (
    agent_input,
    conversation,
    patch_ids,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from workflows.agent_loop import AUTO_COMPACT

pytestmark = pytest.mark.reliability

NEAR_FULL = 180_000
"""Reported on top of a real answer's input tokens: past the default line (167,000)."""
SUMMARY_ASKED = "create a detailed summary of the conversation so far"


def read(name: str) -> dict[str, Any]:
    return {"name": "Read", "input": {"file_path": f"{{{{cwd}}}}/{name}"}}


def summarizer(*turns: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "summarizer",
        "match": {"last_user_contains": SUMMARY_ASKED},
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
        {
            "name": "after",
            "match": {"conversation_contains": ["THE-GIST"]},
            "turns": [{"text": "DONE-AFTER-COMPACTION"}],
            "after_last": "repeat_last",
        },
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
    client, git_repo
):
    (git_repo / "notes.txt").write_text("NOTES-CONTENT\n")
    with scripted_model(COMPACTED, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("ORIGINAL-TASK: read the files", git_repo, queues)
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "DONE-AFTER-COMPACTION", result
    [asked] = requests_of(model, "summarizer")
    # The model summed up the conversation before its last answer, the README's result too.
    assert "ORIGINAL-TASK" in texts(asked) and "Reading the notes." not in texts(asked)
    [after] = requests_of(model, "after")
    sent = after["body"]["messages"]
    assert "ORIGINAL-TASK" not in texts(after), "the early conversation was not dropped"
    assert sent[0]["role"] == "user" and "THE-GIST" in str(sent[0]["content"])
    assert "going over it" not in texts(after)
    # Its last step is kept as it was, and the result of that step comes in full.
    assert sent[1]["role"] == "assistant" and "Reading the notes." in str(sent[1]["content"])
    assert "NOTES-CONTENT" in str(sent[2]["content"])
    # The agent's conversation is the compacted one from here on.
    messages = conversation(result)
    assert "THE-GIST" in messages[0].text() and len(messages) == 4
    assert [r.content for r in tool_results(result)][-1].count("NOTES-CONTENT") == 1
    assert AUTO_COMPACT in await patch_ids(handle)
    # Its usage counts the compaction call as well.
    assert result.usage.tokens.output_tokens > 0


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
