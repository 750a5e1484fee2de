"""The request's messages: each block's wire form is reused between calls, never changed."""

import gc

from activities import llm
from activities.llm import wire_messages, with_ephemeral
from agents.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

CACHE = {"type": "ephemeral"}


def conversation() -> list[Message]:
    use = ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "/w/a.txt"})
    return [
        Message.user_text("read a.txt"),
        Message(role="assistant", content=[TextBlock(text="reading"), use]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_1", content="a\n")]),
    ]


def test_the_breakpoint_moves_with_the_conversation_and_leaves_no_mark_behind():
    messages = conversation()
    first = with_ephemeral(wire_messages(messages, shared_prefix=True), ["<reminder>"])
    assert first[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\n", "cache_control": CACHE},
        {"type": "text", "text": "<reminder>"},
    ]
    messages += [Message(role="assistant", content=[TextBlock(text="done")])]
    second = wire_messages(messages, shared_prefix=True)
    # The block that carried the breakpoint, and the reminder after it, are as before.
    assert second[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\n"}
    ]
    assert second[1]["content"][0] == {"type": "text", "text": "reading"}
    assert second[-1]["content"] == [{"type": "text", "text": "done", "cache_control": CACHE}]
    # The same conversation again: the same request, from the reused wire forms.
    assert wire_messages(messages, shared_prefix=True) == second


def test_a_blocks_wire_form_is_reused_while_it_lives_and_goes_with_it():
    block = TextBlock(text="x" * 1000)
    messages = [Message(role="user", content=[block]), Message.user_text("next")]
    assert wire_messages(messages)[0]["content"][0] is wire_messages(messages)[0]["content"][0]
    key = id(block)
    assert key in llm._wired
    del messages, block
    gc.collect()
    assert key not in llm._wired
