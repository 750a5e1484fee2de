"""Fixtures for the scripted model tests: a real server per test and real SDK clients."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anthropic
import pytest
import pytest_asyncio

from outlast.scripted_model import ScriptedModelServer

SYSTEM = "You are a scripted test agent.\nWorking directory: /work/proj\nPlatform: linux"

ServeFn = Callable[..., ScriptedModelServer]
ClientFn = Callable[[ScriptedModelServer], anthropic.AsyncAnthropic]


@pytest.fixture
def serve() -> Iterator[ServeFn]:
    """Start a `ScriptedModelServer` for a script; every one is stopped after the test."""
    servers: list[ScriptedModelServer] = []

    def start(script: Any, **kwargs: Any) -> ScriptedModelServer:
        server = ScriptedModelServer(script, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest_asyncio.fixture
async def client_for() -> AsyncIterator[ClientFn]:
    """Real `AsyncAnthropic` clients (no retries) bound to a server; closed after the test."""
    clients: list[anthropic.AsyncAnthropic] = []

    def make(server: ScriptedModelServer) -> anthropic.AsyncAnthropic:
        client = anthropic.AsyncAnthropic(api_key="test", base_url=server.url, max_retries=0)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant_of(message: Any) -> dict[str, Any]:
    """An SDK response as the assistant message param of the next request."""
    blocks = [block.model_dump(exclude_none=True) for block in message.content]
    for block in blocks:
        block.pop("parsed_output", None)
    return {"role": "assistant", "content": blocks}


def tool_results(message: Any, content: str = "ok") -> dict[str, Any]:
    """A user message answering every tool_use of `message`."""
    results = [
        {"type": "tool_result", "tool_use_id": block.id, "content": content}
        for block in message.content
        if block.type == "tool_use"
    ]
    return {"role": "user", "content": results}


def request(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """Keyword arguments for `messages.create` / `messages.stream`."""
    return {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": SYSTEM,
        "messages": messages,
    } | extra
