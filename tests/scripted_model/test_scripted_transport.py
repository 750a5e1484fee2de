"""HTTP behaviour: held responses, clients that go away, keep-alive, threads, the JSONL log."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anthropic
import pytest

from outlast.scripted_model import ScriptedModelServer
from tests.scripted_model.conftest import ClientFn, ServeFn, request, user

SCRIPT = {
    "agents": [
        {
            "name": "slow",
            "match": {"prompt_contains": "slow"},
            "turns": [{"delay_ms": 5000, "text": "late"}],
        },
        {
            "name": "held",
            "match": {"prompt_contains": "held"},
            "turns": [{"delay_ms": 600, "text": "held"}],
        },
        {"name": "fast", "turns": [{"text": "quick"}]},
    ]
}


def address(server: ScriptedModelServer) -> tuple[str, int]:
    parts = urlsplit(server.url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def raw_request(body: dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    head = (
        "POST /v1/messages HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


def wait_for_record(server: ScriptedModelServer, count: int, timeout: float = 3.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = server.log
        if len(records) >= count:
            return records
        time.sleep(0.02)
    raise AssertionError(f"expected {count} log records, have {server.log}")


async def test_client_gone_while_held_is_logged_disconnected(
    serve: ServeFn, client_for: ClientFn
) -> None:
    server = serve(SCRIPT)
    started = time.monotonic()
    with socket.create_connection(address(server)) as sock:
        sock.sendall(raw_request(request([user("slow please")])))
        await asyncio.sleep(0.2)
    records = await asyncio.to_thread(wait_for_record, server, 1)
    assert time.monotonic() - started < 3
    assert records[0]["outcome"] == "disconnected"
    assert (records[0]["agent"], records[0]["turn"], records[0]["attempt"]) == ("slow", 0, 1)
    message = await client_for(server).messages.create(**request([user("next")]))
    assert message.content[0].text == "quick"


async def test_sdk_timeout_while_held(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT)
    client = client_for(server).with_options(timeout=0.3)
    with pytest.raises(anthropic.APITimeoutError):
        await client.messages.create(**request([user("slow")]))
    records = await asyncio.to_thread(wait_for_record, server, 1)
    assert records[0]["outcome"] == "disconnected"


async def test_delay_holds_only_its_own_request(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT)
    client = client_for(server)
    held = asyncio.create_task(client.messages.create(**request([user("slow")])))
    await asyncio.sleep(0.05)
    fast = await client.messages.create(**request([user("fast one")]))
    assert fast.content[0].text == "quick"
    assert not held.done()
    held.cancel()
    await asyncio.gather(held, return_exceptions=True)


async def test_delay_ms_delays_the_answer(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT | {"latency_ms": 100})
    client = client_for(server)
    started = time.monotonic()
    message = await client.messages.create(**request([user("held")]))
    assert message.content[0].text == "held"
    assert time.monotonic() - started >= 0.7
    assert server.log[0]["duration_ms"] >= 700


def test_json_responses_keep_the_connection_alive(serve: ServeFn) -> None:
    server = serve(SCRIPT)
    conn = http.client.HTTPConnection(*address(server), timeout=5)
    try:
        body = json.dumps(request([user("hi")]))
        conn.request(
            "POST", "/v1/messages", body=body, headers={"content-type": "application/json"}
        )
        first = conn.getresponse()
        assert first.status == 200 and json.loads(first.read())["content"][0]["text"] == "quick"
        sock = conn.sock
        conn.request("GET", "/healthz")
        second = conn.getresponse()
        assert second.read() == b"ok"
        assert conn.sock is sock and sock is not None
    finally:
        conn.close()


def test_event_streams_are_chunked_and_keep_the_connection_alive(serve: ServeFn) -> None:
    server = serve(SCRIPT)
    conn = http.client.HTTPConnection(*address(server), timeout=5)
    try:
        body = json.dumps({**request([user("hi")]), "stream": True})
        conn.request(
            "POST", "/v1/messages", body=body, headers={"content-type": "application/json"}
        )
        first = conn.getresponse()
        assert first.getheader("transfer-encoding") == "chunked"
        events = first.read().decode()
        assert events.startswith("event: message_start") and "event: message_stop" in events
        sock = conn.sock
        conn.request("GET", "/healthz")
        assert conn.getresponse().read() == b"ok"
        assert conn.sock is sock and sock is not None
    finally:
        conn.close()


async def test_the_sdk_streams_twice_over_one_connection(
    serve: ServeFn, client_for: ClientFn
) -> None:
    server = serve(SCRIPT)
    client = client_for(server)
    for _ in range(2):
        async with client.messages.stream(**request([user("hi")])) as stream:
            message = await stream.get_final_message()
        assert message.content[0].text == "quick"
    # One connection served both: the handler threads' sockets are the server's record of it.
    assert len(server._httpd.connections) == 1


async def test_jsonl_log_file(serve: ServeFn, client_for: ClientFn, tmp_path: Path) -> None:
    log_path = tmp_path / "model.jsonl"
    server = serve(SCRIPT, log_path=log_path, log_bodies=True)
    client = client_for(server)
    headers = {"x-outlast-agent-type": "general-purpose", "x-other": "dropped"}
    await client.messages.create(**request([user("hi")], extra_headers=headers))
    async with client.messages.stream(**request([user("hi")])) as stream:
        await stream.get_final_message()
    # The client can have its answer before the handler thread appends the record; the log
    # property waits for those, so read it before the file.
    records = server.log
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert lines == records
    first = lines[0]
    assert first["seq"] == 1 and lines[1]["seq"] == 2
    assert first["agent"] == "fast" and first["turn"] == 0 and first["attempt"] == 1
    assert first["status"] == 200 and first["outcome"] == "completed"
    assert first["stop_reason"] == "end_turn" and first["stream"] is False
    assert set(first["usage"]) == {
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    }
    assert first["message_count"] == 1 and first["tools"] == [] and first["prefix_hashes"] == []
    # Outlast's agent headers, and the read timeout the SDK gives the request (its default).
    assert first["headers"] == {
        "x-outlast-agent-type": "general-purpose",
        "x-stainless-timeout": "600",
    }
    assert len(first["request_sha256"]) == 64 and first["ts"].startswith("20")
    assert first["body"]["messages"] == [user("hi")]
    assert lines[1]["stream"] is True


async def test_bodies_are_not_logged_by_default(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT)
    await client_for(server).messages.create(**request([user("hi")]))
    assert "body" not in server.log[0]


def test_stop_releases_held_responses() -> None:
    server = ScriptedModelServer(SCRIPT).start()
    with socket.create_connection(address(server)) as sock:
        sock.sendall(raw_request(request([user("slow")])))
        time.sleep(0.1)
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2
        sock.settimeout(2)
        assert sock.recv(1024) == b""
    assert server.log[0]["outcome"] == "disconnected"


def test_context_manager_and_url() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        assert server.url.startswith("http://127.0.0.1:")
        conn = http.client.HTTPConnection(*address(server), timeout=5)
        conn.request("GET", "/healthz")
        assert conn.getresponse().status == 200
        conn.close()
    with socket.socket() as probe:
        assert probe.connect_ex(address(server)) != 0
