"""Building the assistant message from the raw event stream of a model call.

The SDK's `MessageStream` parses each tool input as it streams and raises when the model's
JSON does not parse, which would fail the whole call (and its retries, which get the same
answer) over what is only a bad tool call. Here the stream is read raw and each tool input is
parsed once at the end: a cut-off input is completed the way the SDK does (partial mode), and
one that is not JSON at all becomes an input carrying `INVALID_TOOL_INPUT`, which the agent
loop turns into an `is_error` result the model can fix (reliability row 9).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from jiter import from_json

from agents.messages import (
    INVALID_TOOL_INPUT,
    ContentBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)

_SHOWN_INPUT_CHARS = 300


def parse_tool_input(raw: str) -> dict[str, Any]:
    """The tool input the model streamed; see the module docstring for the bad cases."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as e:
        try:
            value = from_json(raw.encode(), partial_mode=True)  # cut off by max_tokens
        except ValueError:
            return {INVALID_TOOL_INPUT: f"{e}; the input began: {raw[:_SHOWN_INPUT_CHARS]}"}
    if not isinstance(value, dict):
        return {INVALID_TOOL_INPUT: f"the input is a JSON {type(value).__name__}, not an object"}
    return value


@dataclass
class StreamedMessage:
    """What one streamed model call produced."""

    id: str = ""
    model: str = ""
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    content: list[ContentBlock] = field(default_factory=list)


@dataclass
class Accumulator:
    """Feed it the stream's events in order, each as its JSON object (the SDK's stream
    yields them so when asked for `object`: building its typed event for each, only to read
    a few fields, cost a fifth of the call's CPU in the worker: 2.13 against 1.71 ms per
    call, bench/stream_events.py); `message()` at the end."""

    _msg: StreamedMessage = field(default_factory=StreamedMessage)
    _blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    complete: bool = False
    """`message_stop` arrived: a stream that ends without it was cut, whatever came before."""

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = event["message"]
            self._msg.id, self._msg.model = message["id"], message["model"]
            self._msg.usage = usage_of(message.get("usage") or {})
        elif kind == "content_block_start":
            self._blocks[event["index"]] = {**event["content_block"], "_json": ""}
        elif kind == "content_block_delta":
            _apply_delta(self._blocks[event["index"]], event["delta"])
        elif kind == "message_delta":
            self._msg.stop_reason = event["delta"].get("stop_reason") or self._msg.stop_reason
            self._msg.usage = usage_of(event.get("usage") or {}, self._msg.usage)
        elif kind == "message_stop":
            self.complete = True

    def message(self) -> StreamedMessage:
        blocks = (_block(self._blocks[i]) for i in sorted(self._blocks))
        self._msg.content = [b for b in blocks if b is not None]
        return self._msg


def _apply_delta(block: dict[str, Any], delta: dict[str, Any]) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    elif kind == "input_json_delta":
        block["_json"] += delta["partial_json"]
    # citations_delta and kinds added later carry nothing this project keeps


def _block(raw: dict[str, Any]) -> ContentBlock | None:
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(text=raw.get("text", ""))
    if kind == "thinking":
        return ThinkingBlock(thinking=raw.get("thinking", ""), signature=raw.get("signature") or "")
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(data=raw.get("data", ""))
    if kind == "tool_use":
        # A tool_use normally starts with `input: {}` and streams its JSON; keep a start value
        # only when nothing was streamed.
        streamed = raw["_json"]
        start = raw.get("input") if isinstance(raw.get("input"), dict) else {}
        tool_input = parse_tool_input(streamed) if streamed.strip() else start
        return ToolUseBlock(id=raw["id"], name=raw["name"], input=tool_input)
    return None


def usage_of(wire: Any, before: Usage = Usage()) -> Usage:
    """`before` with every count the API's usage carries (the SDK's object, or a streamed
    event's JSON); message_delta repeats only some of them, and the server-side tools' calls
    come in a nested object when there were any."""

    def pick(name: str, source: Any = wire) -> int:
        value = _field(source, name)
        return value if value is not None else getattr(before, name)

    servers = _field(wire, "server_tool_use")
    return Usage(
        input_tokens=pick("input_tokens"),
        output_tokens=pick("output_tokens"),
        cache_creation_input_tokens=pick("cache_creation_input_tokens"),
        cache_read_input_tokens=pick("cache_read_input_tokens"),
        web_search_requests=pick("web_search_requests", servers),
    )


def _field(source: Any, name: str) -> Any:
    return source.get(name) if isinstance(source, dict) else getattr(source, name, None)
