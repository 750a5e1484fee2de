"""An agent turn by turn on a real dev server, real tools and the scripted model."""

from __future__ import annotations

from agents.config import AgentSettings
from tests.support import (
    activity_attempts,
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    start,
)
from workflows.contracts import TranscriptView

READ_THEN_ANSWER = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "Reading it.",
                    "tool_use": [
                        {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}},
                        {"name": "Glob", "input": {"pattern": "**/*.md"}},
                    ],
                },
                {"text": "greet() returns 'hello'."},
            ],
        }
    ]
}


async def test_agent_reads_and_answers(client, git_repo):
    (git_repo / "CLAUDE.md").write_text("House rules MARKER-4410")
    with scripted_model(READ_THEN_ANSWER, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("What does greet return?", git_repo, queues), queues
            )
            result = await handle.result()
            view = await handle.query("transcript", result_type=TranscriptView)
    assert result.status == "completed"
    assert result.final_text == "greet() returns 'hello'."
    assert result.turns == 2 and result.usage.tool_uses == 2
    assert [m.role for m in view.messages] == ["user", "assistant", "user", "assistant"]
    assert view.transcript == result.transcript and view.transcript.length == 4
    assert result.usage.total_tokens > 0
    names = [name for name, _ in await activity_attempts(handle)]
    assert names.count("llm.call_model") == 2
    assert {"tool.read", "tool.glob", "prompt.render_context", "agents.load_definitions"} <= set(
        names
    )
    assert "MARKER-4410" in str(model.log[0]["body"]["system"])  # general-purpose keeps CLAUDE.md
    second = model.log[1]
    assert second["outcome"] == "completed" and second["message_count"] == 3
    assert second["usage"]["cache_read_input_tokens"] > 0


async def test_a_read_only_built_in_keeps_claude_md_when_slim_context_is_off(client, git_repo):
    """R15 gates Explore's and Plan's slim context on `agents.slim_subagent_context`."""
    (git_repo / "CLAUDE.md").write_text("House rules MARKER-4410")
    script = {"agents": [{"name": "main", "turns": [{"text": "Looked."}]}]}
    config = fast_config(agents=AgentSettings(slim_subagent_context=False))
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("look", git_repo, queues, agent_type="Explore", config=config)
            await (await start(client, inp, queues)).result()
    system = str(model.log[0]["body"]["system"])
    assert "MARKER-4410" in system and "Current branch" in system
