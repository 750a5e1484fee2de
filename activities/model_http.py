"""The HTTP transport under the model client, and the clients the worker keeps.

aiohttp (the `anthropic` SDK's `aiohttp` extra) by default: with many agents calling at once,
httpx's connection pool made each call about twice as slow in wall time (encode/httpx#3215),
and per call the SDK spent ~35% less of the worker's CPU on aiohttp (bench/RESULTS.md,
bench/model_transport.py). `OUTLAST_MODEL_HTTP=httpx` keeps the SDK's own default, for a
network where only it works.

The SDK's httpx client turns on TCP keep-alive probes (idle 60 s, every 60 s, 5 of them), so a
connection that went half-open during a long streamed answer fails in minutes instead of at
the read timeout (the call's start-to-close timeout); its aiohttp client does not, so the
connector here sets the same options on every socket it opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import os
import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import anthropic
import httpx2

HTTP_BACKEND_ENV = "OUTLAST_MODEL_HTTP"
HTTP_BACKENDS = ("aiohttp", "httpx")


BROKEN_STREAM = (httpx2.TransportError,)
"""What a streamed answer raises when its connection breaks, times out between events or ends
early, on either backend (aiohttp's errors arrive mapped to these), with anthropic before 2.17:
those wrap them in `APIConnectionError` only before the response. 2.17 and later wrap any
error reading the body too (`APITimeoutError` for a timeout). httpx2 is the SDK's HTTP
library."""


def http_backend(environ: Mapping[str, str] = os.environ) -> str:
    """The backend `OUTLAST_MODEL_HTTP` names (unset or blank: aiohttp); any other value is
    refused with a sentence."""
    value = environ.get(HTTP_BACKEND_ENV, "").strip().lower() or HTTP_BACKENDS[0]
    if value not in HTTP_BACKENDS:
        raise ValueError(
            f"{HTTP_BACKEND_ENV}={environ[HTTP_BACKEND_ENV]!r} is not a model HTTP backend; "
            f"use one of: {', '.join(HTTP_BACKENDS)}"
        )
    return value


def check_http_backend(environ: Mapping[str, str] = os.environ) -> str:
    """At worker start: the backend, refused unless it can be used. Without this a worker in a
    virtual environment that predates the aiohttp dependency would fail every model call, and
    Temporal would retry each for its whole retry window."""
    backend = http_backend(environ)
    if backend == "aiohttp" and not _aiohttp_usable():
        raise RuntimeError(
            f"{HTTP_BACKEND_ENV} is aiohttp (the default) but aiohttp 3.12 or later is not "
            f"installed: reinstall Outlast (it depends on anthropic[aiohttp] and aiohttp>=3.12) "
            f"or set {HTTP_BACKEND_ENV}=httpx"
        )
    return backend


def check_base_url(environ: Mapping[str, str] = os.environ) -> str | None:
    """At worker start: `ANTHROPIC_BASE_URL`, refused unless it is an http(s) URL with a
    host. A mistyped one (no scheme, a typo in it) fails every call as a connection error,
    which Temporal would retry for the call's whole retry window."""
    url = environ.get("ANTHROPIC_BASE_URL")
    if url is None:
        return None
    parts = urlsplit(url)
    # The SDK takes the value as it is: set but empty, it sends to no host at all.
    if url != url.strip() or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"ANTHROPIC_BASE_URL={url!r} is not an http:// or https:// URL with a host, "
            "e.g. https://api.anthropic.com"
        )
    return url


def check_credentials() -> None:
    """At worker start: the SDK has something to authenticate with, found its own way
    (`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, an Anthropic profile, workload identity
    federation, an `Authorization` or `X-Api-Key` header in `ANTHROPIC_CUSTOM_HEADERS`).
    Without it every model call raises the SDK's `TypeError`, which Temporal
    would retry for the call's whole retry window while every agent waits.

    Raises:
        RuntimeError: no credentials, or a profile the environment names that cannot be read.
    """
    try:
        client = anthropic.AsyncAnthropic(open_telemetry=False)
    except anthropic.AnthropicError as e:
        raise RuntimeError(f"The model API credentials cannot be loaded: {e}") from None
    # A gateway's key may come as a header instead (`ANTHROPIC_CUSTOM_HEADERS`), which the
    # SDK's own check accepts too. Looked up by hand: `httpx2.Headers` refuses a non-ASCII
    # value the SDK sends as it is.
    sent = any(
        name.lower() in ("authorization", "x-api-key") and isinstance(value, str) and value
        for name, value in client.default_headers.items()
    )
    if not (client.api_key or client.auth_token or getattr(client, "credentials", None) or sent):
        raise RuntimeError(
            "ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN or an Anthropic profile), "
            "so the worker cannot call the model. Set it; for a compatible server such as "
            "`outlast fake-model`, set ANTHROPIC_BASE_URL too (any key works there)."
        )


def _aiohttp_usable() -> bool:
    """aiohttp with the connector's `socket_factory` (3.12), and the SDK's transport for it
    where this module expects it."""
    if importlib.util.find_spec("aiohttp") is None:
        return False
    import aiohttp

    try:
        from anthropic._vendor.httpx_aiohttp import AiohttpTransport  # noqa: F401
    except ImportError:
        return False
    return "socket_factory" in inspect.signature(aiohttp.TCPConnector).parameters


def keepalive_options() -> list[tuple[int, int, int]]:
    """The socket options the SDK's httpx client sets (anthropic._base_client)."""
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    idle = getattr(socket, "TCP_KEEPIDLE", None) or getattr(socket, "TCP_KEEPALIVE", None)
    for option, value in (
        (getattr(socket, "TCP_KEEPINTVL", None), 60),
        (getattr(socket, "TCP_KEEPCNT", None), 5),
        (idle, 60),  # TCP_KEEPALIVE is macOS's name for it
    ):
        if option is not None:
            options.append((socket.IPPROTO_TCP, option, value))
    return options


def _keepalive_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    family, type_, proto = addr_info[:3]
    sock = socket.socket(family=family, type=type_, proto=proto)
    for level, option, value in keepalive_options():
        with contextlib.suppress(OSError):  # an option this kernel lacks: probes still help
            sock.setsockopt(level, option, value)
    return sock


def _with_keepalive(transport: Any) -> Any:
    """`transport` (the SDK's vendored aiohttp transport) opening its session with a connector
    that sets keep-alive; the session is made at the first request, in the loop making it,
    as the transport's own would be, with the SSL context it made from the environment."""
    import aiohttp

    def session() -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=transport.limits.max_connections or 0,  # None and 0: no limit
            keepalive_timeout=transport.limits.keepalive_expiry,
            ssl=transport.ssl_context,
            socket_factory=_keepalive_socket,
        )
        return aiohttp.ClientSession(connector=connector)

    transport.client = session
    return transport


class _KeepAliveAioHttpClient(anthropic.DefaultAioHttpClient):
    """The SDK's aiohttp client with keep-alive on every connection: the direct one and one
    per proxy the environment names (HTTP_PROXY and the like, which passing a `transport`
    would turn off)."""

    def _init_transport(self, *args: Any, **kwargs: Any) -> Any:
        return _with_keepalive(super()._init_transport(*args, **kwargs))

    def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> Any:
        return _with_keepalive(super()._init_proxy_transport(*args, **kwargs))


def sdk_client(**options: Any) -> anthropic.AsyncAnthropic:
    """An SDK client on the configured backend, without retries (Temporal owns them) and
    without the SDK's own spans; `options` go to `AsyncAnthropic` (the benchmarks' plain
    loops pass a base URL).

    The worker's `GenAISpans` already makes one GenAI `chat` span per model call. The SDK
    makes another, with the same operation and token counts, wherever a global tracer
    provider is set (the worker sets one to export): a tracing backend would count every
    call and every token twice. Off, the SDK also skips building its span's attributes on
    every call (1.6% of a fan-out worker's samples, even with nothing exported), and its
    `ANTHROPIC_OPEN_TELEMETRY_*` variables, one of which puts prompts into spans, are not
    read. Were it turned on, its spans would lack the answer's model, id and usage: it reads
    them from typed stream events, and `llm.call_model` takes each event as JSON."""
    http = _KeepAliveAioHttpClient() if http_backend() == "aiohttp" else None
    return anthropic.AsyncAnthropic(
        max_retries=0, http_client=http, **{"open_telemetry": False, **options}
    )


_clients: dict[
    asyncio.AbstractEventLoop, dict[tuple[str | None, str | None, str], anthropic.AsyncAnthropic]
] = {}
"""Per event loop (an aiohttp session belongs to the loop that opened it), until
`close_clients`; a worker process has one loop."""


def model_client() -> anthropic.AsyncAnthropic:
    """This loop's client for the worker's environment, shared by every call so connections
    are pooled. Key and base URL come only from the environment: they never enter history."""
    env = os.environ
    key = (env.get("ANTHROPIC_BASE_URL"), env.get("ANTHROPIC_API_KEY"), http_backend())
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    if key not in clients:
        clients[key] = sdk_client()
    return clients[key]


async def close_clients() -> None:
    """Close this loop's clients. Only once nothing in this loop calls the model any more:
    an aiohttp stream whose session is closed under it waits for its read timeout."""
    for client in _clients.pop(asyncio.get_running_loop(), {}).values():
        with contextlib.suppress(Exception):
            await client.close()
