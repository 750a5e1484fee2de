"""activities/model_http.py: the transport each backend gives the model client (keep-alive,
proxies, pooling and closing), and the worker-start checks of its settings."""

from __future__ import annotations

import asyncio
import os
import socket
import sys

import anthropic
import pytest
from temporalio.testing import ActivityEnvironment

from activities.llm import call_model
from activities.model_http import (
    HTTP_BACKEND_ENV,
    check_base_url,
    check_credentials,
    check_http_backend,
    close_clients,
    http_backend,
    model_client,
)
from agents.messages import Message
from tests.model_wire import SSE_HEAD, backend, model_request, raw_server, refs, streamed_answer
from tests.support import CREDENTIAL_VARS, scripted_model
from tests.workflows.test_plan_mode import cli

__all__ = ["backend", "refs"]  # fixtures, used by name


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
                call_model, model_request(refs, append=[Message.user_text("x")])
            )
        assert model_client() is client
        assert _keepalive_to(int(model.url.rsplit(":", 1)[1])) == [(1, 60)]
        await close_clients()
        assert client.is_closed()
        assert model_client() is not client
        await close_clients()


async def test_a_proxy_named_in_the_environment_is_used_with_keepalive(refs, backend, monkeypatch):
    """HTTP_PROXY carries the call (here the proxy answers it itself), on either backend, and
    on aiohttp the connection to the proxy has keep-alive too."""
    seen: list[bytes] = []
    checked = asyncio.Event()

    async def proxy(head: bytes, writer: asyncio.StreamWriter) -> None:
        seen.append(head.split(b"\r\n", 1)[0])
        body = streamed_answer("through the proxy")
        writer.write(SSE_HEAD + f"content-length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        await checked.wait()  # held open while the test reads the socket's options
        writer.close()

    async with raw_server(proxy) as port:
        for name in ("NO_PROXY", "ALL_PROXY", "HTTPS_PROXY", "REQUEST_METHOD"):
            monkeypatch.delenv(name, raising=False)
            monkeypatch.delenv(name.lower(), raising=False)
        for name in ("HTTP_PROXY", "http_proxy"):  # urllib prefers the lower-case one
            monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://model.invalid:9")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        out = await ActivityEnvironment().run(
            call_model, model_request(refs, append=[Message.user_text("x")])
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


async def test_no_credentials_stop_the_worker_at_start(monkeypatch, tmp_path):
    """Without a key every model call would fail with the SDK's TypeError, retried for the
    call's six-hour window while every agent waits: `python -m worker`, `outlast worker` and
    `dev` refuse to start instead, with a sentence (a profile found the SDK's way counts)."""
    for var in CREDENTIAL_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no Anthropic profile on disk either
    with pytest.raises(RuntimeError, match="ANTHROPIC_API_KEY is not set"):
        check_credentials()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "worker",
        env={**os.environ, "TEMPORAL_ADDRESS": "127.0.0.1:1"},
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 2, err
    assert b"worker: ANTHROPIC_API_KEY is not set" in err and b"Traceback" not in err, err
    code, out = await cli("127.0.0.1:1", "worker")
    assert code == 2 and "ANTHROPIC_API_KEY is not set" in out and "Traceback" not in out, out
    # What to do instead, if all it is for is a finished run's details.
    assert "or, to only answer queries, pass --no-model." in " ".join(out.split()), out

    # A gateway's key in a header the SDK sends counts too.
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "Authorization: Bearer gateway-token")
    check_credentials()
    monkeypatch.delenv("ANTHROPIC_CUSTOM_HEADERS")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "t")
    check_credentials()
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    check_credentials()
    # Other headers may hold what the SDK sends as it is, non-ASCII too.
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: café")
    check_credentials()
