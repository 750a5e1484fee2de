"""Shared parts of the model-call tests: the request, the HTTP backend fixture, and a raw
Messages server that answers in ways the scripted model never does (a dropped connection,
a body cut short, a proxy's view of the request)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from activities.llm import ModelRequest
from activities.model_http import HTTP_BACKEND_ENV, HTTP_BACKENDS
from activities.store import default_store
from agents.canonical import canonical_bytes

TOOLS = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"


@pytest.fixture(params=HTTP_BACKENDS)
def backend(request, monkeypatch):
    """Each test that asks for it runs on both transports."""
    monkeypatch.setenv(HTTP_BACKEND_ENV, request.param)
    return request.param


@pytest.fixture
def refs(state_root):
    store = default_store()
    system = store.put(canonical_bytes(["You test.", "Working directory: /w"]))
    tools = store.put(canonical_bytes(TOOLS))
    return system, tools


def model_request(refs, **kw) -> ModelRequest:
    system, tools = refs
    return ModelRequest(
        model="claude-test", max_tokens=1000, system_ref=system, tools_ref=tools, **kw
    )


def streamed_answer(text: str) -> bytes:
    """A whole streamed Messages answer, as SSE."""
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 1, "output_tokens": 0},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (never the closing one)."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


Respond = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def raw_server(respond: Respond) -> AsyncIterator[int]:
    """A server on 127.0.0.1 that reads each request whole and hands its head to `respond`,
    which writes the answer; yields the port."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        await reader.readexactly(int(length.group(1)))
        await respond(head, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]
