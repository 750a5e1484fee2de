"""`llm.call_model` against the scripted server: streaming, the store, errors, heartbeats,
through each HTTP backend the worker may be given (`OUTLAST_MODEL_HTTP`)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import timedelta
from pathlib import Path

import anthropic
import pytest
from temporalio.testing import ActivityEnvironment

from activities import transcripts
from activities.errors import ModelConnectionFailed, ModelRequestRejected, ModelUnavailable
from activities.llm import AgentTag, ModelRequest, call_model
from activities.model_http import (
    HTTP_BACKEND_ENV,
    HTTP_BACKENDS,
    check_http_backend,
    close_clients,
    http_backend,
    model_client,
)
from activities.store import default_store
from agents.canonical import canonical_bytes
from agents.messages import Message, ToolResultBlock, ToolUseBlock
from tests.support import scripted_model

TOOLS = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]


@pytest.fixture(params=HTTP_BACKENDS, autouse=True)
def backend(request, monkeypatch):
    monkeypatch.setenv(HTTP_BACKEND_ENV, request.param)
    return request.param


@pytest.fixture
def refs(state_root):
    store = default_store()
    system = store.put(canonical_bytes(["You test.", "Working directory: /w"]))
    tools = store.put(canonical_bytes(TOOLS))
    return system, tools


def request(refs, **kw) -> ModelRequest:
    system, tools = refs
    return ModelRequest(
        model="claude-test", max_tokens=1000, system_ref=system, tools_ref=tools, **kw
    )


async def test_two_turns_by_reference(refs):
    script = {
        "agents": [
            {
                "name": "m",
                "match": {"agent_type": "Explore"},
                "turns": [
                    {
                        "text": "reading",
                        "tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/a"}},
                    },
                    {"text": "done"},
                ],
            }
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        tag = AgentTag(agent_id="a0123456789abcdef", agent_type="Explore", name="scout")
        first = await ActivityEnvironment().run(
            call_model, request(refs, append=[Message.user_text("go")], agent=tag)
        )
        use = first.message.tool_uses()[0]
        assert use.input == {"file_path": "/w/a"} and first.stop_reason == "tool_use"
        assert first.transcript.length == 2
        result = Message(role="user", content=[ToolResultBlock(tool_use_id=use.id, content="x")])
        second = await ActivityEnvironment().run(
            call_model, request(refs, transcript=first.transcript, append=[result], agent=tag)
        )
        log = model.log
    assert second.message.text() == "done" and second.transcript.length == 4
    assert log[1]["message_count"] == 3
    assert log[1]["headers"]["x-outlast-agent-type"] == "Explore"
    assert log[1]["headers"]["x-outlast-agent-name"] == "scout"
    body = log[1]["body"]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert second.usage.cache_read_input_tokens > 0
    stored = transcripts.load(default_store(), second.transcript)
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert isinstance(stored[1].content[1], ToolUseBlock)
    assert "ANTHROPIC" not in str(body) and "test-key" not in str(body)


@pytest.mark.parametrize(
    ("failure", "error", "retry"),
    [
        ({"status": 529}, ModelUnavailable, None),
        ({"status": 429, "retry_after": 2}, ModelUnavailable, timedelta(seconds=2)),
        ({"status": 500}, ModelUnavailable, None),
        ({"status": 400, "message": "bad field"}, ModelRequestRejected, None),
        ({"status": 401}, ModelRequestRejected, None),
        ({"status": 413}, ModelRequestRejected, None),
    ],
)
async def test_errors_are_classified(refs, failure, error, retry):
    script = {"agents": [{"name": "m", "turns": [{"error": failure}]}]}
    with scripted_model(script):
        with pytest.raises(error) as raised:
            await ActivityEnvironment().run(
                call_model, request(refs, append=[Message.user_text("x")])
            )
    assert raised.value.type == error.__name__
    assert raised.value.non_retryable is (error is ModelRequestRejected)
    assert raised.value.next_retry_delay == retry
    assert raised.value.details[0]["status"] == failure["status"]


async def test_unreachable_api_is_a_retryable_connection_error(refs, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with pytest.raises(ModelConnectionFailed) as raised:
        await ActivityEnvironment().run(call_model, request(refs, append=[Message.user_text("x")]))
    assert not raised.value.non_retryable


async def test_heartbeats_while_the_response_is_held_and_cancel_arrives(refs, monkeypatch):
    monkeypatch.setattr("activities.llm.HEARTBEAT_EVERY_S", 0.1)
    script = {"agents": [{"name": "m", "turns": [{"delay_ms": 5000, "text": "late"}]}]}
    with scripted_model(script) as model:
        env = ActivityEnvironment()
        beats = []
        env.on_heartbeat = lambda *d: beats.append(d)
        task = asyncio.create_task(
            env.run(call_model, request(refs, append=[Message.user_text("x")]))
        )
        await asyncio.sleep(0.8)
        assert len(beats) >= 3
        env.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=2)
        for _ in range(40):
            if model.log:
                break
            await asyncio.sleep(0.1)
        assert model.log[0]["outcome"] == "disconnected"


MESSAGE_START = (
    b"event: message_start\ndata: "
    + json.dumps(
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
        }
    ).encode()
    + b"\n\n"
)


async def test_a_stream_that_breaks_mid_response_is_a_retryable_connection_error(refs, monkeypatch):
    """A server that starts the answer, then drops the connection: on either backend the SDK
    passes on the HTTP library's own error, which the activity types like a refused call."""

    async def answer_then_drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        await reader.readexactly(int(length.group(1)))
        chunk = f"{len(MESSAGE_START):x}\r\n".encode() + MESSAGE_START + b"\r\n"
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + chunk
        )
        await writer.drain()
        writer.transport.abort()

    server = await asyncio.start_server(answer_then_drop, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    async with server:
        with pytest.raises(ModelConnectionFailed, match="broke mid-response") as raised:
            await ActivityEnvironment().run(
                call_model, request(refs, append=[Message.user_text("x")])
            )
    assert not raised.value.non_retryable


def _idle_connections_to(port: int) -> list[tuple[int, float]]:
    """(timer kind, seconds to its expiry) of each established TCP connection to `port` on
    this host, from /proc/net/tcp: kind 2 is the keep-alive timer of an idle socket."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            timer, when = fields[5].split(":")
            if remote_port == port and fields[3] == "01":
                found.append((int(timer, 16), int(when, 16) / 100))  # USER_HZ ticks
    return found


async def test_the_backend_named_pools_with_keepalive_probes_and_closes(refs, backend):
    """The client is the backend's, shared by calls, and its idle pooled connection has TCP
    keep-alive on as the SDK's httpx client sets it (idle 60 s): a half-open stream fails in
    minutes, not at the read timeout. aiohttp's default would show no timer at all."""
    script = {"agents": [{"name": "m", "turns": [{"text": "one"}, {"text": "two"}]}]}
    with scripted_model(script) as model:
        client = model_client()
        assert isinstance(client._client, anthropic.DefaultAioHttpClient) is (backend == "aiohttp")
        for _ in range(2):
            await ActivityEnvironment().run(
                call_model, request(refs, append=[Message.user_text("x")])
            )
        assert model_client() is client
        idle = _idle_connections_to(int(model.url.rsplit(":", 1)[1]))
        assert idle and all(kind == 2 and 50 < left <= 60 for kind, left in idle), idle
        await close_clients()
        assert client.is_closed()
        assert model_client() is not client
        await close_clients()


def test_the_default_backend_is_aiohttp_and_a_wrong_one_is_refused(backend):
    for unset in ({}, {HTTP_BACKEND_ENV: ""}, {HTTP_BACKEND_ENV: "  "}):
        assert http_backend(unset) == "aiohttp" == check_http_backend(unset)
    assert http_backend({HTTP_BACKEND_ENV: " HTTPX "}) == "httpx"
    with pytest.raises(ValueError, match=r"OUTLAST_MODEL_HTTP='curl' is not .* aiohttp, httpx"):
        check_http_backend({HTTP_BACKEND_ENV: "curl"})
