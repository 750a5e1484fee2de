"""Agent selection (headers, prompt, system, last user message, fallback) and variables."""

from __future__ import annotations

import anthropic
import pytest

from tests.scripted_model.conftest import ClientFn, ServeFn, request, user

SCRIPT = {
    "agents": [
        {
            "name": "explorer",
            "match": {"agent_type": "Explore"},
            "turns": [{"text": "exploring"}],
        },
        {
            "name": "reviewer",
            "match": {"agent_name": "reviewer", "header": {"X-Team": "blue"}},
            "turns": [{"text": "reviewing"}],
        },
        {
            "name": "planner",
            "match": {"prompt_contains": "make a plan"},
            "turns": [{"text": "plan"}],
        },
        {
            "name": "strict",
            "match": {"system_contains": "STRICT MODE"},
            "turns": [{"text": "strict"}],
        },
        {
            "name": "resumer",
            "match": {"last_user_contains": "tests passed"},
            "turns": [{"text": "unused"}, {"text": "resumed"}],
        },
        {"name": "main", "turns": [{"text": "fallback"}]},
    ]
}


async def ask(client: anthropic.AsyncAnthropic, messages: list, **extra) -> str:
    message = await client.messages.create(**request(messages, **extra))
    return message.content[0].text


async def test_match_by_headers(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT)
    client = client_for(server)
    explore = {"x-outlast-agent-type": "Explore", "x-outlast-agent-id": "a1"}
    assert await ask(client, [user("hi")], extra_headers=explore) == "exploring"
    review = {"x-outlast-agent-name": "reviewer", "x-team": "blue"}
    assert await ask(client, [user("hi")], extra_headers=review) == "reviewing"
    # Every condition must hold: the name alone is not enough.
    partial = {"x-outlast-agent-name": "reviewer", "x-team": "red"}
    assert await ask(client, [user("hi")], extra_headers=partial) == "fallback"
    assert server.log[0]["headers"] == {**explore, "x-stainless-timeout": "600"}
    assert [r["agent"] for r in server.log] == ["explorer", "reviewer", "main"]


async def test_match_by_prompt_system_and_last_user(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT))
    assert await ask(client, [user("please make a plan for X")]) == "plan"
    strict = [{"type": "text", "text": "base"}, {"type": "text", "text": "STRICT MODE on"}]
    assert await ask(client, [user("hi")], system=strict) == "strict"
    resumed = [
        user("run them"),
        {"role": "assistant", "content": "running"},
        {"role": "user", "content": [{"type": "text", "text": "ok: all tests passed"}]},
    ]
    assert await ask(client, resumed) == "resumed"
    # The prompt condition looks at the FIRST user message only.
    later = [user("hello"), {"role": "assistant", "content": "yes"}, user("make a plan")]
    assert await ask(client, later) == "(script exhausted)"


async def test_last_user_text_includes_tool_results(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT))
    first = await client.messages.create(
        **request([user("x")], extra_headers={"x-outlast-agent-type": "none"})
    )
    tool_id = "toolu_000000000000000000000001"
    messages = [
        user("x"),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": [{"type": "text", "text": "3 tests passed"}],
                }
            ],
        },
    ]
    assert first.content[0].text == "fallback"
    assert await ask(client, messages) == "resumed"


async def test_no_match_without_fallback(serve: ServeFn, client_for: ClientFn) -> None:
    script = {"agents": [a for a in SCRIPT["agents"] if a["name"] != "main"]}
    server = serve(script)
    with pytest.raises(anthropic.BadRequestError) as rejected:
        await client_for(server).messages.create(**request([user("hi")]))
    message = str(rejected.value.api_message)
    assert rejected.value.type == "invalid_request_error"
    assert "explorer" in message and "resumer" in message
    assert server.log[-1]["outcome"] == "invalid"
    assert server.log[-1]["agent"] is None


async def test_cwd_and_var_substitution(serve: ServeFn, client_for: ClientFn) -> None:
    turn = {
        "text": "working in {{cwd}} on {{ticket}}",
        "tool_use": {
            "name": "Edit",
            "input": {"file_path": "{{cwd}}/calc.py", "edits": [{"note": "{{ticket}}", "n": 3}]},
        },
    }
    server = serve({"agents": [{"name": "m", "turns": [turn]}]}, variables={"ticket": "BUG-7"})
    message = await client_for(server).messages.create(**request([user("hi")]))
    assert message.content[0].text == "working in /work/proj on BUG-7"
    assert message.content[1].input == {
        "file_path": "/work/proj/calc.py",
        "edits": [{"note": "BUG-7", "n": 3}],
    }


async def test_cwd_comes_from_each_request(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve({"agents": [{"name": "m", "turns": [{"text": "{{cwd}}"}]}]})
    client = client_for(server)
    for path in ("/tmp/a", "/tmp/b c"):
        system = f"Intro.\n<env>\nWorking directory: {path}\nPlatform: linux\n</env>"
        assert await ask(client, [user("hi")], system=system) == path
