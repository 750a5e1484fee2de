"""Every sub-agent leaves its conversation as a JSONL output file (R29, R40)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import agent_input, notifications, running_workers, scripted_model, spawn, start


async def test_output_file_is_a_linear_sidechain_transcript(client, git_repo):
    script = {
        "agents": [
            {
                "name": "kid",
                "match": {"agent_name": "kid"},
                "turns": [
                    {"tool_use": {"name": "Glob", "input": {"pattern": "**/*.py"}}},
                    {"text": "kid found app.py"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("kid", "find python files", True)},
                    {"text": "waiting"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    (note,) = notifications(result)
    path = Path(re.search(r"<output-file>(.*)</output-file>", note).group(1))
    assert path.name.startswith("agent-a") and path.suffix == ".jsonl"
    assert path.parent.name == "subagents" and handle.id in str(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
    assert lines[0]["message"]["content"][0]["text"] == "find python files"
    assert all(line["isSidechain"] for line in lines)
    assert [line["parentUuid"] for line in lines] == [None] + [line["uuid"] for line in lines[:-1]]
    meta = json.loads(path.with_suffix(".meta.json").read_text())
    assert meta["agentType"] == "general-purpose" and meta["description"] == "task kid"


async def test_a_compacted_sub_agents_output_file_keeps_what_came_before_the_summary(
    client, git_repo
):
    """The file is the whole story: the conversation as it was compacted, a boundary line (as
    in Claude Code's transcripts), then the conversation that went on from the summary."""
    from tests.workflows.test_compaction import NEAR_FULL, read, summarizer

    script = {
        "agents": [
            summarizer({"text": "<summary>KID-GIST</summary>"}),
            {
                "name": "kid-after",
                "match": {"agent_name": "kid", "conversation_contains": ["KID-GIST"]},
                "turns": [{"text": "unused"}, {"text": "kid done"}],
            },
            {
                "name": "kid",
                "match": {"agent_name": "kid"},
                "turns": [
                    {"tool_use": read("README.md")},
                    {"tool_use": read("README.md"), "extra_input_tokens": NEAR_FULL},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [{"tool_use": spawn("kid", "read the readme", True)}, {"text": "waiting"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    (note,) = notifications(result)
    assert "kid done" in note, note
    path = Path(re.search(r"<output-file>(.*)</output-file>", note).group(1))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    kinds = [line.get("subtype", line["type"]) for line in lines]
    assert kinds == [
        *["user", "assistant", "user", "assistant"],  # as it was when compacted
        "compact_boundary",
        *["user", "assistant", "user", "assistant"],  # the summary, its last step, on
    ], kinds
    assert lines[0]["message"]["content"][0]["text"] == "read the readme"
    assert "KID-GIST" in lines[5]["message"]["content"][0]["text"]
    assert [line["parentUuid"] for line in lines] == [None] + [line["uuid"] for line in lines[:-1]]
