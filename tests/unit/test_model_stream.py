"""The raw-stream accumulator: what a model call keeps from the events, and how each kind of
tool input (good, cut off, not JSON, not an object) comes out."""

from __future__ import annotations

from anthropic.types import (
    InputJSONDelta,
    MessageDeltaUsage,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    ServerToolUsage,
    TextBlock,
    TextDelta,
    ToolUseBlock,
)
from anthropic.types import Message as WireMessage
from anthropic.types import Usage as WireUsage
from anthropic.types.raw_message_delta_event import Delta

from activities.model_stream import Accumulator, parse_tool_input, usage_of
from agents.messages import INVALID_TOOL_INPUT
from agents.messages import TextBlock as OurText
from agents.messages import ToolUseBlock as OurToolUse
from workflows.turns import INVALID_JSON_MESSAGE, check_call


def events(*tool_json: str):
    """The events as the activity reads them: each the JSON object the API sent (built here
    from the SDK's types, so that their shape is the API's)."""
    for event in typed_events(*tool_json):
        yield event.to_dict()


def typed_events(*tool_json: str):
    start = WireMessage(
        id="msg_1", type="message", role="assistant", model="m", content=[],
        stop_reason=None, stop_sequence=None,
        usage=WireUsage(input_tokens=10, output_tokens=1, cache_read_input_tokens=4),
    )  # fmt: skip
    yield RawMessageStartEvent(type="message_start", message=start)
    yield RawContentBlockStartEvent(
        type="content_block_start", index=0, content_block=TextBlock(type="text", text="")
    )
    for piece in ("Hel", "lo"):
        yield RawContentBlockDeltaEvent(
            type="content_block_delta", index=0, delta=TextDelta(type="text_delta", text=piece)
        )
    yield RawContentBlockStopEvent(type="content_block_stop", index=0)
    for i, raw in enumerate(tool_json, start=1):
        block = ToolUseBlock(type="tool_use", id=f"t{i}", name="Read", input={})
        yield RawContentBlockStartEvent(type="content_block_start", index=i, content_block=block)
        for piece in ("", raw[:5], raw[5:]):
            yield RawContentBlockDeltaEvent(
                type="content_block_delta",
                index=i,
                delta=InputJSONDelta(type="input_json_delta", partial_json=piece),
            )
        yield RawContentBlockStopEvent(type="content_block_stop", index=i)
    yield RawMessageDeltaEvent(
        type="message_delta",
        delta=Delta(stop_reason="tool_use", stop_sequence=None),
        usage=MessageDeltaUsage(output_tokens=42),
    )


def test_text_tools_usage_and_stop_reason_are_kept():
    acc = Accumulator()
    for event in events('{"file_path": "/a"}', ""):
        acc.feed(event)
    assert not acc.complete  # no message_stop yet: the stream may have been cut
    acc.feed(RawMessageStopEvent(type="message_stop").to_dict())
    assert acc.complete
    msg = acc.message()
    assert (msg.id, msg.model, msg.stop_reason) == ("msg_1", "m", "tool_use")
    assert msg.usage.input_tokens == 10 and msg.usage.output_tokens == 42
    assert msg.usage.cache_read_input_tokens == 4  # message_delta did not repeat it
    assert msg.content == [
        OurText(text="Hello"),
        OurToolUse(id="t1", name="Read", input={"file_path": "/a"}),
        OurToolUse(id="t2", name="Read", input={}),
    ]


def test_server_tool_searches_are_counted_and_kept_when_a_delta_omits_them():
    searched = MessageDeltaUsage(
        output_tokens=5,
        server_tool_use=ServerToolUsage(web_search_requests=2, web_fetch_requests=0),
    )
    after = usage_of(searched)
    assert after.web_search_requests == 2 and after.output_tokens == 5
    later = usage_of(MessageDeltaUsage(output_tokens=9), after)
    assert later.web_search_requests == 2 and later.output_tokens == 9
    assert usage_of(MessageDeltaUsage(output_tokens=1)).web_search_requests == 0
    # The same from a streamed event's JSON, where an absent count is null or left out.
    wire = {"output_tokens": 5, "input_tokens": None, "server_tool_use": {"web_search_requests": 2}}
    after = usage_of(wire, usage_of({"input_tokens": 7}))
    assert (after.input_tokens, after.output_tokens, after.web_search_requests) == (7, 5, 2)
    assert usage_of({"output_tokens": 9}, after).web_search_requests == 2


def test_tool_inputs():
    assert parse_tool_input('{"a": [1, 2]}') == {"a": [1, 2]}
    assert parse_tool_input("  ") == {}
    # Cut off by max_tokens: what is complete, as the SDK keeps it (the loop refuses the call).
    assert parse_tool_input('{"file_path": "/a", "content": "par') == {"file_path": "/a"}
    for bad in ('{"a": 1,}', "{'a': 1}", "not json", "[1, 2]", '"text"'):
        parsed = parse_tool_input(bad)
        assert list(parsed) == [INVALID_TOOL_INPUT], bad


def test_a_bad_input_is_an_error_result_the_model_can_fix():
    acc = Accumulator()
    for event in events('{"file_path": "/a",}'):
        acc.feed(event)
    (_, block) = acc.message().content
    result = check_call(block, {"Read": object})  # type: ignore[dict-item]
    assert result.is_error and INVALID_JSON_MESSAGE in result.content
    assert 'began: {"file_path"' in result.content


def test_thinking_and_its_signature_are_kept_and_blocks_not_kept_are_left_out():
    """Thinking must go back to the API as it came (with its signature, or redacted); a
    server tool's blocks (web search) are the API's own and are not part of the message."""
    acc = Accumulator()
    wire = [
        {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "Let me "}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "see."}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": "sig=="}},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "redacted_thinking", "data": "opaque"}},
        {"type": "content_block_start", "index": 2,
         "content_block": {"type": "server_tool_use", "id": "s", "name": "web_search",
                           "input": {}}},
        {"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 3,
         "delta": {"type": "citations_delta", "citation": {"type": "x"}}},
        {"type": "ping"},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]  # fmt: skip
    for event in wire:
        acc.feed(event)
    msg = acc.message()
    assert acc.complete and msg.stop_reason == "end_turn" and msg.usage.output_tokens == 3
    assert [b.model_dump() for b in msg.content] == [
        {"type": "thinking", "thinking": "Let me see.", "signature": "sig=="},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": ""},
    ]


def test_usage_left_out_or_null_keeps_what_came_before():
    """`message_start` may carry no usage and `message_delta` a null or no `usage`: the
    counts so far stand."""
    acc = Accumulator()
    for event in (
        {"type": "message_start", "message": {"id": "m", "model": "x", "usage": None}},
        {"type": "message_delta", "delta": {"stop_reason": None}, "usage": {"output_tokens": 4}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": None},
        {"type": "message_delta", "delta": {"stop_reason": None}},
        {"type": "message_stop"},
    ):
        acc.feed(event)
    msg = acc.message()
    assert (msg.stop_reason, msg.usage.output_tokens, msg.usage.input_tokens) == ("end_turn", 4, 0)
