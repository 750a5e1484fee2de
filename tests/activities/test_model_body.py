"""The request body Outlast sends is, byte for byte, what the SDK's `messages.create` sends for
the same params; each block is encoded once while it lives (activities/model_body.py)."""

from __future__ import annotations

import gc
import json

import anthropic
import pytest

from activities import model_body
from activities.model_body import (
    messages_json,
    request_body,
    wire_messages,
    wire_system,
    wire_tools,
    with_ephemeral,
)
from agents.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from outlast.scripted_model import ScriptedModelServer, load_script
from outlast.scripted_model.matching import sha256_hex

CACHE = {"type": "ephemeral"}


def conversation() -> list[Message]:
    use = ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "/w/ä.txt", "limit": 3})
    bad = ToolUseBlock(id="toolu_2", name="Grep", input={"pattern": '\\d+\t"x"'})
    return [
        Message.user_text("read ä.txt — then grep 🙂"),
        Message(
            role="assistant",
            content=[ThinkingBlock(thinking="hm", signature="sig"), TextBlock(text="on it"), use],
        ),
        Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_1", content="a\nb\n")]),
        Message(role="assistant", content=[bad]),
        Message(
            role="user",
            content=[ToolResultBlock(tool_use_id="toolu_2", content="no", is_error=True)],
        ),
        Message.user_text("<system-reminder>queued</system-reminder>"),
    ]


def test_the_breakpoint_moves_with_the_conversation_and_leaves_no_mark_behind():
    messages = conversation()[:3]
    first = json.loads(messages_json(messages, shared_prefix=True, ephemeral=["<reminder>"]))
    assert first[-1]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "a\nb\n",
            "cache_control": CACHE,
        },
        {"type": "text", "text": "<reminder>"},
    ]
    messages += [Message(role="assistant", content=[TextBlock(text="done")])]
    second = json.loads(messages_json(messages, shared_prefix=True))
    # The block that carried the breakpoint, and the reminder after it, are as before.
    assert second[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\nb\n"}
    ]
    assert second[1]["content"][1] == {"type": "text", "text": "on it"}
    assert second[-1]["content"] == [{"type": "text", "text": "done", "cache_control": CACHE}]
    assert messages_json(messages, shared_prefix=True) == messages_json(
        messages, shared_prefix=True
    )


def test_a_blocks_encoding_is_reused_while_it_lives_and_goes_with_it():
    block = TextBlock(text="x" * 1000)
    messages = [Message(role="user", content=[block]), Message.user_text("next")]
    messages_json(messages)
    key = id(block)
    assert model_body._encoded[key][1] == json.dumps(
        {"type": "text", "text": "x" * 1000}, separators=(",", ":")
    )
    del messages, block
    gc.collect()
    assert key not in model_body._encoded


@pytest.mark.parametrize(
    "shared_prefix, ephemeral, tools, thinking, system",
    [
        (False, [], True, None, ["You are a coder.", "env: ä"]),
        (True, ["<system-reminder>plan mode</system-reminder>"], True, 2048, ["sys"]),
        (True, [], False, None, []),
    ],
)
async def test_the_body_is_the_bytes_the_sdk_sends(
    shared_prefix, ephemeral, tools, thinking, system
):
    tool_list = [
        {"name": "Read", "description": "Reads", "input_schema": {"type": "object"}},
        {"name": "Grep", "description": "Greps ✓", "input_schema": {"type": "object"}},
    ]
    messages = conversation()
    params = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 32000,
        "system": wire_system(system),
        "messages": with_ephemeral(wire_messages(messages, shared_prefix), ephemeral),
    }
    if tools:
        params["tools"] = wire_tools(tool_list)
    if thinking:
        params["thinking"] = {"type": "enabled", "budget_tokens": thinking}
    ours = request_body(
        model="claude-sonnet-5-5",
        max_tokens=32000,
        messages=messages_json(messages, shared_prefix, ephemeral),
        system=model_body.encode(wire_system(system)),
        tools=model_body.encode(wire_tools(tool_list)) if tools else None,
        thinking=params.get("thinking"),
    )
    script = load_script({"agents": [{"name": "a", "turns": [{"text": "ok"}]}]})
    with ScriptedModelServer(script) as server:
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="k", max_retries=0)
        async with await client.messages.create(**params, stream=True) as stream:
            async for _ in stream:
                pass
        await client.close()
        (record,) = server.log
    assert record["status"] == 200, record
    assert record["request_sha256"] == sha256_hex(ours)
    assert json.loads(ours)["stream"] is True
