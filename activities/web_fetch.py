"""The `WebFetch` activity (spec T15): fetch a page, make it markdown, ask the small model.

Runs on the workflow's own queue, where the model calls run: the page's bytes stay in this
activity, and only the small model's answer is its result (and so in history). Idempotent:
a GET, then a model call; a retry fetches again (or hits the 15-minute cache of this
worker). A page the model can do something about (a 404, a redirect to another host, a type
that is not text, a host that does not answer) is an `is_error` answer; a model outage is a
failure Temporal retries.

Private addresses are refused where aiohttp resolves the name it connects to (`_Public`),
so a name that answers a public address to a check and a private one to the connection
(DNS rebinding) is refused too.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities.errors import OutlastError
from activities.heartbeats import heartbeating
from activities.llm import ask_once, text_of
from agents.messages import Usage
from agents.web_fetch import (
    MAX_PAGE_BYTES,
    MAX_REDIRECTS,
    WEB_FETCH_AGENT_TYPE,
    WebFetchInput,
    cut_markdown,
    is_local_host,
    redirect_text,
    same_site,
    summarizer_prompt,
    upgraded,
)

REDIRECTS = frozenset({301, 302, 303, 307, 308})
CACHE_S = 15 * 60
CACHE_ENTRIES = 64
FETCH_BUDGET_S = 60.0
"""The whole fetch, redirects and conversion included, within the activity's 4 minutes."""
MAX_PARSED_BYTES = 2 * 1024 * 1024
"""Of an HTML page, what is parsed: more than the 100,000 characters of markdown the small
model reads, without the seconds and memory a 10 MB tree would take."""
USER_AGENT = "Outlast-WebFetch/1"
_cache: OrderedDict[str, tuple[float, str]] = OrderedDict()
"""(policy, URL) -> (when, markdown cut for the model): Claude Code's self-cleaning
15-minute cache, per worker."""
_convert = ThreadPoolExecutor(max_workers=2, thread_name_prefix="web-fetch")
"""Its own threads: a slow page never holds the default executor the worker's file tools,
payload store and name lookups share."""


class WebFetchRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    input: WebFetchInput
    model: str
    """The small model that answers the prompt about the page (config `tools.web_fetch_model`)."""
    max_tokens: int = 4096
    allow_private: bool = False
    """Fetch addresses on this machine or a private network (`tools.web_fetch_private_hosts`)."""
    agent_id: str = ""
    agent_name: str = ""


class WebToolOutput(BaseModel):
    model_config = ConfigDict(frozen=True)

    content: str
    is_error: bool = Field(default=False, exclude_if=lambda v: not v)
    usage: Usage | None = Field(default=None, exclude_if=lambda v: v is None)
    """The small model's tokens, for the agent's totals."""


class WebFetchFailed(OutlastError):
    """The page could not be fetched for a reason a retry may mend."""


class _Answer(Exception):
    """Something the model should be told instead of the page (is_error unless a redirect)."""

    def __init__(self, text: str, is_error: bool = True) -> None:
        super().__init__(text)
        self.text, self.is_error = text, is_error


def _private_refusal(host: str) -> _Answer:
    return _Answer(
        f"{host} is on this machine or a private network; WebFetch fetches public pages only "
        "(an operator can allow private hosts with tools.web_fetch_private_hosts)."
    )


class _Public(AbstractResolver):
    """aiohttp's resolver, refusing a name any of whose addresses is not public."""

    def __init__(self) -> None:
        self._inner = aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        if any(is_local_host(str(r["host"])) for r in found):
            raise _private_refusal(host)
        return found

    async def close(self) -> None:
        await self._inner.close()


def _short(text: str, limit: int = 200) -> str:
    """A header value echoed to the agent, which the page wrote: bounded, on one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _decoded(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know (`utf8mb4`)
        return body.decode("utf-8", errors="replace")


def _html_markdown(body: bytes, charset: str | None) -> str:
    # Imported here: a worker that never fetches a page never loads them.
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    try:
        # Bytes, so a `<meta charset>` is honoured where the header names none.
        soup = BeautifulSoup(body[:MAX_PARSED_BYTES], "html.parser", from_encoding=charset)
    except LookupError:
        soup = BeautifulSoup(_decoded(body[:MAX_PARSED_BYTES], None), "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg", "iframe"]):
        tag.decompose()
    try:
        converted = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    except RecursionError:
        # Old HTML whose unclosed tags nest a level each: its text, without the markup.
        converted = soup.get_text("\n")
    return "\n".join(line.rstrip() for line in converted.splitlines()).strip()


def _markdown(body: bytes, content_type: str, charset: str | None) -> str:
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml") or (
        not kind and b"<html" in body[:1000].lower()
    ):
        return _html_markdown(body, charset)
    if kind.startswith("text/") or kind.endswith(("json", "xml", "javascript")):
        return _decoded(body, charset)
    raise _Answer(f"The URL returned {_short(kind or 'an unknown type', 100)}, not a web page.")


def _connector_answer(url: str, error: aiohttp.ClientError) -> _Answer | None:
    """A failure retrying cannot mend, as an answer; None for one it may."""
    host = urlsplit(url).hostname or url
    if isinstance(error, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return _Answer(f"{host} has no valid TLS certificate for https: {_short(str(error))}")
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        return _Answer(f"The host {host} could not be found (DNS).")
    if isinstance(error, aiohttp.InvalidURL):
        return _Answer(f"{_short(url)} is not a URL that can be fetched.")
    if isinstance(error, aiohttp.ClientConnectorError):
        return _Answer(f"{host} did not accept a connection: {_short(str(error))}")
    return None


async def _fetch(url: str, allow_private: bool) -> str:
    """The page at `url` as markdown, cut for the small model."""
    headers = {
        "user-agent": USER_AGENT,
        "accept": "text/html, text/markdown, text/plain;q=0.9, */*;q=0.8",
    }
    connector = aiohttp.TCPConnector(resolver=None if allow_private else _Public())
    timeout = aiohttp.ClientTimeout(total=FETCH_BUDGET_S)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, headers=headers) as s:
        for _ in range(MAX_REDIRECTS + 1):
            host = urlsplit(url).hostname or ""
            if not allow_private and is_local_host(host):
                raise _private_refusal(host)
            try:
                async with s.get(url, allow_redirects=False) as response:
                    location = response.headers.get("location")
                    if response.status in REDIRECTS and location:
                        target = _short(urljoin(url, location), 2000)
                        if not same_site(url, target):
                            raise _Answer(redirect_text(url, target, response.status), False)
                        url = target
                        continue
                    if response.status >= 400:
                        raise _Answer(f"Fetching {url} failed: HTTP {response.status}.")
                    body = bytearray()
                    async for chunk in response.content.iter_chunked(64 * 1024):
                        body += chunk
                        if len(body) > MAX_PAGE_BYTES:
                            raise _Answer(f"The page at {url} is over 10 MB.")
                    kind = response.headers.get("content-type", "")
                    page = await asyncio.get_running_loop().run_in_executor(
                        _convert, _markdown, bytes(body), kind, response.charset
                    )
                    return cut_markdown(page)
            except TimeoutError:
                raise _Answer(f"Fetching {url} took over {FETCH_BUDGET_S:g} s.") from None
            except aiohttp.ClientError as e:
                if (answer := _connector_answer(url, e)) is not None:
                    raise answer from None
                raise WebFetchFailed(f"Fetching {url} failed: {type(e).__name__}: {e}") from None
    raise _Answer(f"Fetching {url} was redirected more than {MAX_REDIRECTS} times.")


def _cached(key: str) -> str | None:
    now = time.monotonic()
    for stale in [k for k, (when, _) in _cache.items() if now - when > CACHE_S]:
        del _cache[stale]
    hit = _cache.get(key)
    return hit[1] if hit else None


def _remember(key: str, markdown: str) -> None:
    _cache[key] = (time.monotonic(), markdown)
    while len(_cache) > CACHE_ENTRIES:
        _cache.popitem(last=False)


async def _ask(req: WebFetchRequest, markdown: str) -> tuple[str, Usage]:
    headers = {
        "x-outlast-agent-type": WEB_FETCH_AGENT_TYPE,
        "x-outlast-agent-id": req.agent_id,
        "x-outlast-agent-name": req.agent_name,
    }
    prompt = summarizer_prompt(markdown, req.input.prompt)
    answer = await ask_once(
        req.model, req.max_tokens, [{"role": "user", "content": prompt}], headers
    )
    return text_of(answer.blocks) or "(The model gave no answer about the page.)", answer.usage


@activity.defn(name="tool.web_fetch")
async def web_fetch(req: WebFetchRequest) -> WebToolOutput:
    """The small model's answer to the prompt about the page at the URL."""
    url = upgraded(req.input.url)
    # Keyed by the policy too: a page a private-hosts run fetched is not another run's.
    key = f"{req.allow_private}:{url}"
    async with heartbeating():
        try:
            markdown = _cached(key)
            if markdown is None:
                markdown = await _fetch(url, req.allow_private)
                _remember(key, markdown)
        except _Answer as answer:
            return WebToolOutput(content=answer.text, is_error=answer.is_error)
        text, usage = await _ask(req, markdown)
        return WebToolOutput(content=text, usage=usage)
