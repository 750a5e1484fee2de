"""The Skill tool (T17) in an agent: the model sees the skills there are and gets a skill's
instructions back by calling it, beside other read-only calls of the same turn."""

from __future__ import annotations

import asyncio

from tests.activities.test_skill import write_skill
from tests.support import agent_input, running_workers, scripted_model, start, tool_results


async def test_an_agent_sees_the_skills_and_loads_one(client, git_repo):
    write_skill(git_repo, "review", "description: Review a pull request", "Review PR $ARGUMENTS.")
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {
                        "tool_use": [
                            {"name": "Skill", "input": {"skill": "review", "args": "42"}},
                            {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}},
                        ]
                    },
                    {"tool_use": {"name": "Skill", "input": {"skill": "made-up"}}},
                    {"text": "Reviewed."},
                ],
            }
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("review PR 42", git_repo, queues), queues)
            result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed", result.error
    loaded, read, unknown = tool_results(result)
    assert not loaded.is_error and loaded.content.endswith("Review PR 42.")
    assert f"Base directory for this skill: {git_repo}/.claude/skills/review" in loaded.content
    assert not read.is_error
    assert unknown.is_error and "Unknown skill: made-up" in unknown.content
    tools = {t["name"]: t for t in model.log[0]["body"]["tools"]}
    assert "- review: Review a pull request" in tools["Skill"]["description"]
