"""The Messages API wire format: request validation, response bodies, SSE events, errors.

Validation mirrors the checks (and, where known, the wording) of the real API, so that a
protocol bug in the engine under test, such as a lost `tool_result`, fails here the same
way it would fail in production.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from outlast.scripted_model.cache import Usage, common_prefix, count_breakpoints
from outlast.scripted_model.script import ErrorSpec, Turn

MAX_BREAKPOINTS = 4


class InvalidRequest(Exception):
    """The request breaks a rule of the Messages API; answered with 400."""


class Answer(BaseModel):
    """A successful scripted response, ready to be written as JSON or as SSE."""

    model_config = ConfigDict(frozen=True)

    id: str
    model: str
    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage

    @property
    def cuts_tool_input(self) -> bool:
        """`max_tokens` with a tool_use: the last tool_use input did not finish."""
        return self.stop_reason == "max_tokens" and any(
            b["type"] == "tool_use" for b in self.content
        )


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def error_headers(spec: ErrorSpec) -> dict[str, str]:
    """`retry-after` in whole seconds when integral (how the API and SDK expect it), and
    `x-should-retry` when the script gives one."""
    headers = {}
    if spec.should_retry is not None:
        headers["x-should-retry"] = "true" if spec.should_retry else "false"
    if spec.retry_after is not None:
        seconds = spec.retry_after
        headers["retry-after"] = str(int(seconds)) if seconds == int(seconds) else str(seconds)
    return headers


def models_body(model: str) -> dict[str, Any]:
    """`GET /v1/models`: a one-entry list with the script's model."""
    entry = {
        "type": "model",
        "id": model,
        "display_name": model,
        "created_at": "2025-01-01T00:00:00Z",
    }
    return {"data": [entry], "has_more": False, "first_id": model, "last_id": model}


def _digest(*parts: object) -> str:
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


def tool_use_id(conversation_key: str, turn_index: int, block_index: int) -> str:
    """Deterministic, so a retried turn hands the engine the same tool ids."""
    return "toolu_" + _digest(conversation_key, turn_index, block_index)[:24]


def message_id(conversation_key: str, turn_index: int) -> str:
    return "msg_" + _digest(conversation_key, turn_index, "message")[:24]


RAW_INPUT = "_raw_input"
"""Key of a tool_use block's scripted verbatim JSON text; never sent as a field."""


def content_blocks(turn: Turn, conversation_key: str, turn_index: int) -> list[dict[str, Any]]:
    """The response content of a rendered turn: thinking, text, then tool_use blocks."""
    blocks: list[dict[str, Any]] = []
    if turn.thinking is not None:
        signature = _digest(conversation_key, turn_index, "signature", turn.thinking)
        blocks.append({"type": "thinking", "thinking": turn.thinking, "signature": signature})
    if turn.web_search is not None:
        blocks += web_search_blocks(turn, conversation_key, turn_index)
    if turn.text:  # `text: ""` answers as the API now and then does: with no content at all
        blocks.append({"type": "text", "text": turn.text})
    for i, tool in enumerate(turn.tool_use):
        tool_id = tool_use_id(conversation_key, turn_index, i)
        block = {"type": "tool_use", "id": tool_id, "name": tool.name, "input": tool.input}
        if tool.raw_input is not None:
            block |= {"input": {}, RAW_INPUT: tool.raw_input}
        blocks.append(block)
    return blocks


def web_search_blocks(turn: Turn, conversation_key: str, turn_index: int) -> list[dict[str, Any]]:
    """The API's blocks for a search its own tool made: the call, then its result."""
    search = turn.web_search
    assert search is not None
    call_id = "srvtoolu_" + _digest(conversation_key, turn_index, "web_search")[:24]
    result: Any
    if search.error is not None:
        result = {"type": "web_search_tool_result_error", "error_code": search.error}
    else:
        result = [
            {
                "type": "web_search_result",
                "title": hit.title,
                "url": hit.url,
                "encrypted_content": _digest(hit.url, hit.title),
                "page_age": hit.page_age,
            }
            for hit in search.results
        ]
    return [
        {
            "type": "server_tool_use",
            "id": call_id,
            "name": "web_search",
            "input": {"query": search.query},
        },
        {"type": "web_search_tool_result", "tool_use_id": call_id, "content": result},
    ]


def offers_web_search(body: dict[str, Any]) -> bool:
    return any(str(t.get("type", "")).startswith("web_search_") for t in body.get("tools") or [])


def _last_tool_index(content: list[dict[str, Any]]) -> int:
    return max((i for i, b in enumerate(content) if b["type"] == "tool_use"), default=-1)


def message_json(answer: Answer) -> dict[str, Any]:
    """The non-streaming Message body."""
    content = [{k: v for k, v in b.items() if k != RAW_INPUT} for b in answer.content]
    if answer.cuts_tool_input:
        # Non-streaming responses cannot carry half a JSON object; `{}` is what remains.
        content[_last_tool_index(content)]["input"] = {}
    return {
        "id": answer.id,
        "type": "message",
        "role": "assistant",
        "model": answer.model,
        "content": content,
        "stop_reason": answer.stop_reason,
        "stop_sequence": None,
        "usage": answer.usage.model_dump() | server_tool_usage(answer.content),
    }


def server_tool_usage(content: list[dict[str, Any]]) -> dict[str, Any]:
    """The API's count of its own tools' calls, in a response that made any (they are billed
    per call, apart from tokens; a search that failed is not)."""
    failed = {
        b["tool_use_id"]
        for b in content
        if b["type"] == "web_search_tool_result"
        and isinstance(b["content"], dict)
        and b["content"].get("type") == "web_search_tool_result_error"
    }
    searches = sum(
        1
        for b in content
        if b["type"] == "server_tool_use"
        and b.get("name") == "web_search"
        and b["id"] not in failed
    )
    if not searches:
        return {}
    return {"server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0}}


def sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def split_chunks(text: str, parts: int = 3) -> list[str]:
    """`text` in up to `parts` consecutive pieces (a stream arrives in several deltas)."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block_events(index: int, block: dict[str, Any], cut: bool) -> Iterator[bytes]:
    kind = block["type"]
    start = {"type": kind, "text": ""} if kind == "text" else dict(block)
    start.pop(RAW_INPUT, None)
    if kind == "thinking":
        start.update(thinking="", signature="")
    elif kind in ("tool_use", "server_tool_use"):
        start["input"] = {}
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": start},
    )
    for delta in _deltas(block, cut):
        yield sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def _deltas(block: dict[str, Any], cut: bool) -> list[dict[str, Any]]:
    kind = block["type"]
    if kind == "text":
        return [{"type": "text_delta", "text": t} for t in split_chunks(block["text"])]
    if kind == "thinking":
        deltas = [
            {"type": "thinking_delta", "thinking": t} for t in split_chunks(block["thinking"])
        ]
        return deltas + [{"type": "signature_delta", "signature": block["signature"]}]
    if kind == "web_search_tool_result":
        return []  # it comes whole, in its content_block_start
    raw = block.get(RAW_INPUT) or json.dumps(block["input"], ensure_ascii=False)
    if cut:
        # Stop half-way through the JSON, as when max_tokens hits while the model writes it.
        raw = raw[: len(raw) // 2]
    # The real API opens every tool input with an empty delta; engines must cope with it.
    return [{"type": "input_json_delta", "partial_json": p} for p in ["", *split_chunks(raw)]]


def message_events(answer: Answer) -> Iterator[bytes]:
    """The SSE byte chunks of a streamed response, in the real API's order."""
    start = message_json(answer) | {"content": [], "stop_reason": None}
    start["usage"] = answer.usage.model_dump() | {"output_tokens": 1}
    yield sse("message_start", {"type": "message_start", "message": start})
    cut_at = _last_tool_index(answer.content) if answer.cuts_tool_input else -1
    for index, block in enumerate(answer.content):
        events = _block_events(index, block, cut=index == cut_at)
        yield next(events)
        if index == 0:
            # The API sends its first ping right after the first content_block_start.
            yield sse("ping", {"type": "ping"})
        yield from events
    delta = {"stop_reason": answer.stop_reason, "stop_sequence": None}
    usage = {"output_tokens": answer.usage.output_tokens} | server_tool_usage(answer.content)
    yield sse("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
    yield sse("message_stop", {"type": "message_stop"})


def validate_request(body: Any, known_valid: list[Any] | None = None) -> None:
    """Check a Messages request the way the API does.

    Args:
        body: The parsed request.
        known_valid: The messages of an earlier valid request of the same conversation:
            those this one starts with are not looked at again (a 1,000-turn conversation
            repeats 2,000 messages with every request), but for the last of them, whose
            pairing with the next may have changed.

    Raises:
        InvalidRequest: with the API-style message naming the offending field.
    """
    if not isinstance(body, dict):
        raise InvalidRequest("request body must be a JSON object")
    _validate_top_level(body)
    messages = body["messages"]
    first = max(0, common_prefix(known_valid, messages) - 1) if known_valid else 0
    for i in range(first, len(messages)):
        _validate_message(i, messages[i], is_last=i == len(messages) - 1)
    _validate_roles(messages, max(1, first))
    _validate_tool_pairings(messages, first)
    found = count_breakpoints(body)
    if found > MAX_BREAKPOINTS:
        raise InvalidRequest(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )


def _validate_top_level(body: dict[str, Any]) -> None:
    for field in ("model", "max_tokens", "messages"):
        if field not in body:
            raise InvalidRequest(f"{field}: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise InvalidRequest("model: Input should be a non-empty string")
    max_tokens = body["max_tokens"]
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidRequest("max_tokens: Input should be an integer greater than or equal to 1")
    if not isinstance(body["messages"], list) or not body["messages"]:
        raise InvalidRequest("messages: at least one message is required")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise InvalidRequest("stream: Input should be a valid boolean")
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        raise InvalidRequest("system: Input should be a string or a list of text blocks")
    tools = body.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(t, dict) and t.get("name") for t in tools)
    ):
        raise InvalidRequest("tools: Input should be a list of tool definitions with a `name`")


def _validate_message(i: int, message: Any, is_last: bool) -> None:
    if not isinstance(message, dict):
        raise InvalidRequest(f"messages.{i}: Input should be an object")
    if message.get("role") not in ("user", "assistant"):
        raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    content = message.get("content")
    if not isinstance(content, str | list):
        raise InvalidRequest(f"messages.{i}.content: Input should be a string or a list of blocks")
    for j, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise InvalidRequest(f"messages.{i}.content.{j}: a content block needs a `type`")
        _validate_images(f"messages.{i}.content.{j}", block)
        if block["type"] == "text" and not str(block.get("text") or "").strip():
            raise InvalidRequest(
                f"messages.{i}.content.{j}: text content blocks must contain non-whitespace text"
            )
    if not content and not (is_last and message["role"] == "assistant"):
        raise InvalidRequest(
            f"messages.{i}: all messages must have non-empty content except for the "
            "optional final assistant message"
        )


IMAGE_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024


def _validate_images(where: str, block: dict[str, Any]) -> None:
    """An image block, or a tool_result's, as the API checks them: a known media type, valid
    base64, bytes that are what the media type says, at most 5 MB."""
    if block["type"] == "tool_result" and isinstance(block.get("content"), list):
        for k, part in enumerate(block["content"]):
            if isinstance(part, dict) and part.get("type") in ("image", "document"):
                _validate_images(f"{where}.tool_result.content.{k}", part)
        return
    if block["type"] == "document":
        _validate_document(where, block)
        return
    if block["type"] != "image":
        return
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise InvalidRequest(f"{where}.image.source: only `base64` sources are served here")
    at = f"{where}.image.source.base64"
    media_type = source.get("media_type")
    if media_type not in IMAGE_SIGNATURES:
        raise InvalidRequest(
            f"{at}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or "
            "'image/webp'"
        )
    data = source.get("data")
    if not isinstance(data, str) or len(data) > MAX_IMAGE_BASE64_BYTES:
        raise InvalidRequest(f"{at}: image exceeds 5 MB maximum")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise InvalidRequest(f"{at}.data: invalid base64 data") from None
    if not raw.startswith(IMAGE_SIGNATURES[media_type]) or (
        media_type == "image/webp" and raw[8:12] != b"WEBP"
    ):
        raise InvalidRequest(
            f"{at}.data: Image does not match the provided media type {media_type}"
        )


MAX_DOCUMENT_BASE64_BYTES = 32 * 1024 * 1024


def _validate_document(where: str, block: dict[str, Any]) -> None:
    """A PDF document block as the API checks it (only `base64` sources are served here)."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise InvalidRequest(f"{where}.document.source: only `base64` sources are served here")
    at = f"{where}.document.source.base64"
    if source.get("media_type") != "application/pdf":
        raise InvalidRequest(f"{at}.media_type: Input should be 'application/pdf'")
    data = source.get("data")
    if not isinstance(data, str) or len(data) > MAX_DOCUMENT_BASE64_BYTES:
        raise InvalidRequest(f"{at}: document exceeds 32 MB maximum")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise InvalidRequest(f"{at}.data: invalid base64 data") from None
    if b"%PDF-" not in raw[:1024]:
        raise InvalidRequest(f"{at}.data: The PDF specified was not valid.")


def _validate_roles(messages: list[dict[str, Any]], start: int) -> None:
    if messages[0]["role"] != "user":
        raise InvalidRequest("messages.0.role: the first message must use the `user` role")
    for i in range(start, len(messages)):
        if messages[i]["role"] == messages[i - 1]["role"]:
            raise InvalidRequest(
                f"messages.{i}: roles must alternate between `user` and `assistant`, "
                f"but messages {i - 1} and {i} both have role `{messages[i]['role']}`"
            )


def _tool_blocks(message: dict[str, Any]) -> tuple[list[Any], list[tuple[int, Any]]]:
    """A message's `tool_use` ids, and its `tool_result` blocks' positions and ids."""
    content = message["content"]
    uses: list[Any] = []
    results: list[tuple[int, Any]] = []
    if isinstance(content, list):
        for j, block in enumerate(content):
            kind = block.get("type")
            if kind == "tool_use":
                uses.append(block.get("id"))
            elif kind == "tool_result":
                results.append((j, block.get("tool_use_id")))
    return uses, results


def _validate_tool_pairings(messages: list[dict[str, Any]], start: int) -> None:
    # Each message's blocks are looked at once: a 1,000-turn request has 2,000 messages.
    blocks = {i: _tool_blocks(messages[i]) for i in range(max(0, start - 1), len(messages))}
    for i in range(start, len(messages)):
        message = messages[i]
        if message["role"] == "assistant":
            ids = blocks[i][0]
            if len(set(ids)) != len(ids):
                raise InvalidRequest(f"messages.{i}: `tool_use` ids must be unique")
            answered = {tid for _, tid in blocks[i + 1][1]} if i + 1 < len(messages) else set()
            missing = [tid for tid in ids if tid not in answered]
            if missing:
                raise InvalidRequest(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block "
                    "must have a corresponding `tool_result` block in the next message."
                )
            continue
        offered = set(blocks[i - 1][0]) if i > 0 else set()
        for j, tid in blocks[i][1]:
            if tid not in offered:
                raise InvalidRequest(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {tid}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
