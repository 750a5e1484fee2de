"""The model request's body as the bytes the API receives, joined from JSON already encoded.

Every call of a conversation sends all of its earlier blocks again, and the SDK copies a
request body (`copy_tree`) and encodes it whole each time: on a 1,000-turn agent that was
over a quarter of the worker's samples (py-spy, 2026-12-03), growing with the conversation.
The transcript cache hands a conversation's calls the same frozen block objects, so each
block is encoded once, while it lives, and a call joins the strings. The bytes are the SDK's
own for the same params: its encoder's settings, its key order
(`tests/activities/test_model_body.py` holds the two to each other). The price is memory: a
block's JSON is kept beside the block, as long as the transcript cache keeps the block.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from typing import Any

from agents.messages import ContentBlock, Message, merge_user_messages

encode: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode
"""As `anthropic._utils._json.encoder` encodes a body."""

CACHE = {"type": "ephemeral"}
_MARK = ',"cache_control":' + encode(CACHE) + "}"


def wire_block(block: ContentBlock) -> dict[str, Any]:
    """A block as the API takes it (an error flag only on an error)."""
    data = block.model_dump(mode="json")
    if data.get("type") == "tool_result" and not data["is_error"]:
        del data["is_error"]
    return data


_encoded: dict[int, tuple[weakref.ref[ContentBlock], str]] = {}
"""Each live block's JSON, by identity, for as long as the block lives."""


def block_json(block: ContentBlock) -> str:
    key = id(block)
    hit = _encoded.get(key)
    if hit is not None and hit[0]() is block:
        return hit[1]
    text = encode(wire_block(block))
    _encoded[key] = (weakref.ref(block, lambda _, key=key: _encoded.pop(key, None)), text)
    return text


def _marked(encoded_block: str) -> str:
    """The block with a cache breakpoint, its last key (as `{**block, "cache_control": ...}`)."""
    return encoded_block[:-1] + _MARK


def messages_json(
    messages: list[Message], shared_prefix: bool = False, ephemeral: list[str] | None = None
) -> str:
    """The messages as the API takes them, with a cache breakpoint on the last block.

    The breakpoint on the newest block lets the next turn read everything before it from the
    prompt cache; `shared_prefix` adds one on the block before it (see ModelRequest).
    `ephemeral` texts go after the last (user) message's cached blocks: they change nothing
    the next turn reads from the cache."""
    merged = merge_user_messages(messages)
    parts = []
    for i, m in enumerate(merged):
        blocks = [block_json(b) for b in m.content]
        if i == len(merged) - 1:
            if blocks:
                blocks[-1] = _marked(blocks[-1])
                if shared_prefix and len(blocks) > 1:
                    blocks[-2] = _marked(blocks[-2])
            if ephemeral and m.role == "user":
                blocks += [encode({"type": "text", "text": t}) for t in ephemeral]
        parts.append(f'{{"role":{encode(m.role)},"content":[{",".join(blocks)}]}}')
    return f"[{','.join(parts)}]"


def wire_system(blocks: list[str]) -> list[dict[str, Any]]:
    system: list[dict[str, Any]] = [{"type": "text", "text": text} for text in blocks if text]
    if system:
        system[-1]["cache_control"] = CACHE
    return system


def wire_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tools = [dict(t) for t in tools]
    if tools:
        tools[-1]["cache_control"] = CACHE
    return tools


def wire_messages(messages: list[Message], shared_prefix: bool = False) -> list[dict[str, Any]]:
    """`messages_json`'s messages as dicts, for a caller that hands them to the SDK."""
    wire = [
        {"role": m.role, "content": [wire_block(b) for b in m.content]}
        for m in merge_user_messages(messages)
    ]
    last = wire[-1]["content"] if wire else []
    if last:
        last[-1] = {**last[-1], "cache_control": CACHE}
        if shared_prefix and len(last) > 1:
            last[-2] = {**last[-2], "cache_control": CACHE}
    return wire


def with_ephemeral(wire: list[dict[str, Any]], texts: list[str]) -> list[dict[str, Any]]:
    """`texts` after the last (user) message's blocks, as `messages_json` places them."""
    if texts and wire and wire[-1]["role"] == "user":
        wire[-1]["content"].extend({"type": "text", "text": t} for t in texts)
    return wire


def request_body(
    *,
    model: str,
    max_tokens: int,
    messages: str,
    system: str,
    tools: str | None = None,
    thinking: dict[str, Any] | None = None,
) -> bytes:
    """A streamed Messages API request, keys in the order `messages.create` gives them."""
    parts = [
        f'{{"max_tokens":{encode(max_tokens)},"messages":{messages}',
        f',"model":{encode(model)},"stream":true,"system":{system}',
    ]
    if thinking is not None:
        parts.append(f',"thinking":{encode(thinking)}')
    if tools is not None:
        parts.append(f',"tools":{tools}')
    parts.append("}")
    return "".join(parts).encode()
