"""Successful answers through the real SDK: JSON and SSE, text, thinking, tool_use, turns."""

from __future__ import annotations

import json
import re

from tests.scripted_model.conftest import (
    ClientFn,
    ServeFn,
    assistant_of,
    request,
    tool_results,
    user,
)

TOOLS_TURN = {
    "text": "I'll look around first.",
    "tool_use": [
        {"name": "Glob", "input": {"pattern": "**/*.py"}},
        {"name": "Grep", "input": {"pattern": "def add", "path": "/src"}},
    ],
}


async def test_json_text_turn(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve({"agents": [{"name": "main", "turns": [{"text": "hello there"}]}]})
    message = await client_for(server).messages.create(**request([user("hi")]))
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "hello there"
    assert message.stop_reason == "end_turn"
    assert message.model == "claude-test"
    assert re.fullmatch(r"msg_[0-9a-f]{24}", message.id)
    assert message.usage.output_tokens > 0


async def test_streaming_text_turn(serve: ServeFn, client_for: ClientFn) -> None:
    text = "a streamed answer that arrives in several deltas"
    server = serve(
        {"model": "claude-scripted", "agents": [{"name": "m", "turns": [{"text": text}]}]}
    )
    deltas: list[str] = []
    async with client_for(server).messages.stream(**request([user("hi")])) as stream:
        async for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                deltas.append(event.delta.text)
        final = await stream.get_final_message()
    assert len(deltas) > 1 and "".join(deltas) == text
    assert final.content[0].text == text
    assert final.stop_reason == "end_turn"
    assert final.model == "claude-scripted"
    assert final.usage.output_tokens > 1
    assert server.log[-1]["stream"] is True


async def test_thinking_block_precedes_text(serve: ServeFn, client_for: ClientFn) -> None:
    turn = {"thinking": "let me think", "text": "answer"}
    server = serve({"agents": [{"name": "m", "turns": [turn]}]})
    client = client_for(server)
    created = await client.messages.create(**request([user("hi")]))
    async with client.messages.stream(**request([user("hi")])) as stream:
        streamed = await stream.get_final_message()
    for message in (created, streamed):
        assert [b.type for b in message.content] == ["thinking", "text"]
        assert message.content[0].thinking == "let me think"
        assert message.content[0].signature


async def test_multi_tool_use_ids_are_deterministic(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve({"agents": [{"name": "m", "turns": [TOOLS_TURN, {"text": "done"}]}]})
    client = client_for(server)
    first = await client.messages.create(**request([user("find add")]))
    assert first.stop_reason == "tool_use"
    tools = [b for b in first.content if b.type == "tool_use"]
    assert [(t.name, t.input) for t in tools] == [
        ("Glob", {"pattern": "**/*.py"}),
        ("Grep", {"pattern": "def add", "path": "/src"}),
    ]
    assert all(re.fullmatch(r"toolu_[0-9a-f]{24}", t.id) for t in tools)
    assert len({t.id for t in tools}) == 2
    async with client.messages.stream(**request([user("find add")])) as stream:
        retried = await stream.get_final_message()
    assert [b.id for b in retried.content if b.type == "tool_use"] == [t.id for t in tools]
    assert [b.input for b in retried.content if b.type == "tool_use"] == [t.input for t in tools]
    other = await client.messages.create(**request([user("another conversation")]))
    assert {b.id for b in other.content if b.type == "tool_use"}.isdisjoint({t.id for t in tools})


async def test_turn_index_follows_assistant_messages(serve: ServeFn, client_for: ClientFn) -> None:
    turns = [
        TOOLS_TURN,
        {"tool_use": {"name": "Read", "input": {"file_path": "/a"}}},
        {"text": "end"},
    ]
    server = serve({"agents": [{"name": "m", "turns": turns}]})
    client = client_for(server)
    messages = [user("go")]
    first = await client.messages.create(**request(messages))
    messages += [assistant_of(first), tool_results(first)]
    second = await client.messages.create(**request(messages))
    assert [b.name for b in second.content if b.type == "tool_use"] == ["Read"]
    messages += [assistant_of(second), tool_results(second)]
    third = await client.messages.create(**request(messages))
    assert third.content[0].text == "end"
    # Stateless: asking turn 1 again (a replay) answers turn 1 again.
    again = await client.messages.create(**request(messages[:3]))
    assert [b.name for b in again.content if b.type == "tool_use"] == ["Read"]
    assert [r["turn"] for r in server.log] == [0, 1, 2, 1]


async def test_after_last_modes(serve: ServeFn, client_for: ClientFn) -> None:
    script = {
        "agents": [
            {
                "name": "rep",
                "match": {"prompt_contains": "rep"},
                "turns": [{"text": "again"}],
                "after_last": "repeat_last",
            },
            {"name": "end", "match": {"prompt_contains": "end"}, "turns": [{"text": "once"}]},
        ]
    }
    server = serve(script)
    client = client_for(server)
    for prompt, expected in (("rep", "again"), ("end", "(script exhausted)")):
        messages = [user(prompt), {"role": "assistant", "content": "x"}, user("more")]
        message = await client.messages.create(**request(messages))
        assert message.content[0].text == expected
        assert message.stop_reason == "end_turn"


async def test_max_tokens_cuts_the_last_tool_input(serve: ServeFn, client_for: ClientFn) -> None:
    content = "line of text\n" * 20
    turn = {
        "stop_reason": "max_tokens",
        "text": "writing",
        "tool_use": {"name": "Write", "input": {"file_path": "/x", "content": content}},
    }
    server = serve({"agents": [{"name": "m", "turns": [turn]}]})
    client = client_for(server)
    created = await client.messages.create(**request([user("write")]))
    assert created.stop_reason == "max_tokens"
    assert created.content[0].text == "writing"
    assert created.content[1].input == {}
    async with client.messages.stream(**request([user("write")])) as stream:
        streamed = await stream.get_final_message()
    assert streamed.stop_reason == "max_tokens"
    partial = streamed.content[1].input
    assert partial.get("content") != content
    assert set(partial) <= {"file_path", "content"}


async def test_explicit_stop_reason_and_models_endpoint(
    serve: ServeFn, client_for: ClientFn
) -> None:
    turn = {"text": "paused", "stop_reason": "pause_turn"}
    server = serve({"model": "claude-scripted", "agents": [{"name": "m", "turns": [turn]}]})
    client = client_for(server)
    message = await client.messages.create(**request([user("hi")]))
    assert message.stop_reason == "pause_turn"
    models = await client.models.list()
    assert [m.id for m in models.data] == ["claude-scripted"]


async def test_raw_event_sequence(serve: ServeFn, client_for: ClientFn) -> None:
    turn = {
        "thinking": "think",
        "text": "say",
        "tool_use": {"name": "Read", "input": {"a": "b" * 30}},
    }
    server = serve({"agents": [{"name": "m", "turns": [turn]}]})
    stream = await client_for(server).messages.create(**request([user("hi")]), stream=True)
    events = [event async for event in stream]
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    start = events[0].message
    assert start.content == [] and start.stop_reason is None
    assert start.usage.output_tokens == 1
    assert start.usage.cache_read_input_tokens == 0
    assert start.usage.cache_creation_input_tokens == 0
    blocks = [e.content_block.type for e in events if e.type == "content_block_start"]
    assert blocks == ["thinking", "text", "tool_use"]
    assert kinds.count("content_block_stop") == 3
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert {d.type for d in deltas} == {
        "thinking_delta",
        "signature_delta",
        "text_delta",
        "input_json_delta",
    }
    json_parts = [d.partial_json for d in deltas if d.type == "input_json_delta"]
    assert json_parts[0] == "" and len(json_parts) > 2
    assert json.loads("".join(json_parts)) == {"a": "b" * 30}
    assert events[-2].delta.stop_reason == "tool_use"
    assert events[-2].usage.output_tokens > 1
