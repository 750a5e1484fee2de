"""`llm.call_model` against the scripted server: streaming, the store, errors, heartbeats,
through each HTTP backend the worker may be given (`OUTLAST_MODEL_HTTP`)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
from datetime import timedelta

import anthropic
import pytest
from temporalio.testing import ActivityEnvironment

from activities import transcripts
from activities.errors import ModelConnectionFailed, ModelRequestRejected, ModelUnavailable
from activities.llm import AgentTag, ModelRequest, call_model
from activities.model_http import (
    HTTP_BACKEND_ENV,
    HTTP_BACKENDS,
    check_base_url,
    check_http_backend,
    close_clients,
    http_backend,
    model_client,
)
from activities.store import default_store
from agents.canonical import canonical_bytes
from agents.messages import Message, ToolResultBlock, ToolUseBlock
from tests.support import scripted_model
from tests.workflows.test_plan_mode import cli

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


async def test_a_break_after_message_stop_keeps_the_whole_answer(refs, monkeypatch):
    """The connection drops after the last event but before the body's end: the answer is
    whole, so it is kept rather than paid for twice."""
    body = _streamed_answer("all of it")

    async def answer_then_drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        await reader.readexactly(int(length.group(1)))
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + f"{len(body):x}\r\n".encode() + body + b"\r\n"
        )
        await writer.drain()
        writer.transport.abort()  # no closing chunk

    server = await asyncio.start_server(answer_then_drop, "127.0.0.1", 0)
    monkeypatch.setenv(
        "ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    async with server:
        out = await ActivityEnvironment().run(
            call_model, request(refs, append=[Message.user_text("x")])
        )
    assert out.message.content[0].text == "all of it" and out.stop_reason == "end_turn"


async def test_a_stream_that_ends_cleanly_before_message_stop_is_a_connection_error(
    refs, monkeypatch
):
    """Every event but `message_stop`, then a proper end of body: the answer may be cut
    anywhere, so it is retried, never taken as the model's whole reply."""
    body = _streamed_answer("half an ans").rsplit(b"event: message_stop", 1)[0]

    async def answer_short(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        await reader.readexactly(int(length.group(1)))
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer_short, "127.0.0.1", 0)
    monkeypatch.setenv(
        "ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    async with server:
        with pytest.raises(ModelConnectionFailed, match="ended before its message_stop"):
            await ActivityEnvironment().run(
                call_model, request(refs, append=[Message.user_text("x")])
            )


def _keepalive_to(port: int) -> list[tuple[int, int]]:
    """(SO_KEEPALIVE, TCP_KEEPIDLE) of each of this process's TCP sockets connected to
    `port`, read from the sockets themselves (Linux: /proc/self/fd)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            copy = os.dup(int(fd))
        except OSError:
            continue  # closed meanwhile
        try:
            sock = socket.socket(fileno=copy)
        except OSError:
            os.close(copy)
            continue
        with sock:
            if sock.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            if sock.type != socket.SOCK_STREAM:
                continue
            try:
                peer_port = sock.getpeername()[1]
            except OSError:
                continue  # listening or not connected
            if peer_port == port:
                on = sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
                found.append((on, sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)))
    return found


async def test_the_backend_named_pools_with_keepalive_probes_and_closes(refs, backend):
    """The client is the backend's, shared by calls, and its pooled connection has TCP
    keep-alive on as the SDK's httpx client sets it (idle 60 s): a half-open stream fails in
    minutes, not at the read timeout. The SDK's own aiohttp client would show (0, 7200)."""
    script = {"agents": [{"name": "m", "turns": [{"text": "one"}, {"text": "two"}]}]}
    with scripted_model(script) as model:
        client = model_client()
        assert isinstance(client._client, anthropic.DefaultAioHttpClient) is (backend == "aiohttp")
        for _ in range(2):
            await ActivityEnvironment().run(
                call_model, request(refs, append=[Message.user_text("x")])
            )
        assert model_client() is client
        assert _keepalive_to(int(model.url.rsplit(":", 1)[1])) == [(1, 60)]
        await close_clients()
        assert client.is_closed()
        assert model_client() is not client
        await close_clients()


def _streamed_answer(text: str) -> bytes:
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


async def test_a_proxy_named_in_the_environment_is_used_with_keepalive(refs, backend, monkeypatch):
    """HTTP_PROXY carries the call (here the proxy answers it itself), on either backend, and
    on aiohttp the connection to the proxy has keep-alive too."""
    seen: list[bytes] = []
    checked = asyncio.Event()

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        await reader.readexactly(int(length.group(1)))
        seen.append(head.split(b"\r\n", 1)[0])
        body = _streamed_answer("through the proxy")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        await checked.wait()  # held open while the test reads the socket's options
        writer.close()

    server = await asyncio.start_server(proxy, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    for name in ("NO_PROXY", "ALL_PROXY", "HTTPS_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name in ("HTTP_PROXY", "http_proxy"):  # urllib prefers the lower-case one
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://model.invalid:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    async with server:
        out = await ActivityEnvironment().run(
            call_model, request(refs, append=[Message.user_text("x")])
        )
        try:
            if backend == "aiohttp":  # the SDK's httpx client sets it on direct connections only
                assert _keepalive_to(port) == [(1, 60)]
        finally:
            checked.set()
        await close_clients()
    assert out.message.content[0].text == "through the proxy"
    assert seen == [b"POST http://model.invalid:9/v1/messages HTTP/1.1"]


def test_the_default_backend_is_aiohttp_and_a_wrong_one_is_refused(backend):
    for unset in ({}, {HTTP_BACKEND_ENV: ""}, {HTTP_BACKEND_ENV: "  "}):
        assert http_backend(unset) == "aiohttp" == check_http_backend(unset)
    assert http_backend({HTTP_BACKEND_ENV: " HTTPX "}) == "httpx"
    with pytest.raises(ValueError, match=r"OUTLAST_MODEL_HTTP='curl' is not .* aiohttp, httpx"):
        check_http_backend({HTTP_BACKEND_ENV: "curl"})


def test_an_aiohttp_without_socket_factory_stops_the_worker_at_start(backend, monkeypatch):
    """aiohttp before 3.12 (a virtual environment from before this dependency) cannot set
    keep-alive: refused at start, not at each model call."""
    import aiohttp

    class OldConnector:
        def __init__(self, *, limit: int = 100, ssl: object = True) -> None: ...

    monkeypatch.setattr(aiohttp, "TCPConnector", OldConnector)
    with pytest.raises(RuntimeError, match=r"aiohttp 3\.12 or later .* OUTLAST_MODEL_HTTP=httpx"):
        check_http_backend({})
    assert check_http_backend({HTTP_BACKEND_ENV: "httpx"}) == "httpx"


def test_a_mistyped_base_url_stops_the_worker_at_start(backend):
    for good in ("http://127.0.0.1:8080", "https://api.anthropic.com/", "https://h/v1"):
        assert check_base_url({"ANTHROPIC_BASE_URL": good}) == good
    assert check_base_url({}) is None
    bad_ones = ("localhost:8080", "htps://x.example", "https://", "x.example", "", " https://h")
    for bad in bad_ones:
        with pytest.raises(ValueError, match=r"is not an http:// or https:// URL with a host"):
            check_base_url({"ANTHROPIC_BASE_URL": bad})


async def test_the_cli_refuses_a_mistyped_worker_setting_before_starting(monkeypatch):
    """`outlast worker` (and `dev`, and `run` with its worker) says what is wrong and exits,
    with no traceback and nothing started."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "localhost:8080")
    code, out = await cli("127.0.0.1:1", "worker")
    assert code != 0 and "ANTHROPIC_BASE_URL='localhost:8080' is not an http" in out, out
    assert "Traceback" not in out
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv(HTTP_BACKEND_ENV, "curl")
    code, out = await cli("127.0.0.1:1", "worker")
    assert code != 0 and "OUTLAST_MODEL_HTTP='curl'" in out and "Traceback" not in out, out
