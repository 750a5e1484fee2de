"""Boundary types survive the pydantic data converter unchanged, and usage adds up."""

from temporalio.contrib.pydantic import pydantic_data_converter

from agents.messages import (
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)


def roundtrip(value, type_):
    payloads = pydantic_data_converter.payload_converter.to_payloads([value])
    return pydantic_data_converter.payload_converter.from_payloads(payloads, [type_])[0]


def test_message_with_every_block_type_roundtrips():
    message = Message(
        role="assistant",
        content=[
            ThinkingBlock(thinking="hmm", signature="sig"),
            RedactedThinkingBlock(data="xx"),
            TextBlock(text="I'll read it"),
            ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "/a", "limit": 3}),
        ],
    )
    back = roundtrip(message, Message)
    assert back == message
    assert isinstance(back.content[3], ToolUseBlock)
    assert back.tool_uses()[0].input == {"file_path": "/a", "limit": 3}


def test_tool_result_and_text_helpers():
    user = Message(
        role="user",
        content=[ToolResultBlock(tool_use_id="t", content="boom", is_error=True)],
    )
    assert roundtrip(user, Message).content[0].is_error is True
    assert Message.user_text("hi").text() == "hi"
    assert (
        Message(role="assistant", content=[TextBlock(text="a"), TextBlock(text="b")]).text()
        == "a\nb"
    )


def test_usage_adds_and_counts_every_prompt_token():
    a = Usage(input_tokens=10, output_tokens=5, cache_creation_input_tokens=100)
    b = Usage(input_tokens=2, output_tokens=7, cache_read_input_tokens=100)
    total = a + b
    assert total == Usage(
        input_tokens=12,
        output_tokens=12,
        cache_creation_input_tokens=100,
        cache_read_input_tokens=100,
    )
    assert b.prompt_tokens == 102
