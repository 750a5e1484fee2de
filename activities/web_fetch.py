"""The `WebFetch` activity (spec T15): fetch a page, make it markdown, ask the small model.

Runs on the workflow's own queue, where the model calls run: the page's bytes stay in this
activity, and only the small model's answer is its result (and so in history). Idempotent:
a GET, then a model call; a retry fetches again (or hits the 15-minute cache of this
worker). A page the model can do something about (a 404, a redirect to another host, a type
that is not text) is an `is_error` answer; a model or network outage is a failure Temporal
retries.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import OrderedDict
from urllib.parse import urljoin, urlsplit

import aiohttp
from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.errors import OutlastError
from activities.llm import complete_text
from activities.tools.base import ToolOutput
from activities.workspace import heartbeating
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
FETCH_TIMEOUT_S = 30.0
USER_AGENT = "Outlast-WebFetch/1 (+https://github.com/outlast)"
_cache: OrderedDict[str, tuple[float, str]] = OrderedDict()
"""URL -> (when, markdown): Claude Code's self-cleaning 15-minute cache, per worker."""


class WebFetchRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    input: WebFetchInput
    model: str
    """The small model that answers the prompt about the page (config `tools.web_fetch_model`)."""
    max_tokens: int = 4096
    allow_private: bool = False
    """Fetch addresses on this machine or a private network (`tools.web_fetch_private_hosts`)."""
    agent_id: str = ""


class WebFetchFailed(OutlastError):
    """The page could not be fetched for a reason a retry may mend (network, server)."""


class _Answer(Exception):
    """Something the model should be told instead of the page (is_error unless a redirect)."""

    def __init__(self, text: str, is_error: bool = True) -> None:
        super().__init__(text)
        self.text, self.is_error = text, is_error


async def _check_host(url: str, allow_private: bool) -> None:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if allow_private:
        return
    refused = _Answer(
        f"{host} is on this machine or a private network; WebFetch fetches public pages only "
        "(an operator can allow private hosts with tools.web_fetch_private_hosts)."
    )
    if is_local_host(host):
        raise refused
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise _Answer(f"The host {host} could not be found (DNS).") from None
    # Every address it resolves to: a name that points inside is refused like the address.
    if any(is_local_host(str(info[4][0])) for info in found):
        raise refused


def _markdown(body: bytes, content_type: str, encoding: str | None) -> str:
    text = body.decode(encoding or "utf-8", errors="replace")
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:1000]):
        # Imported here: a worker that never fetches a page never loads them.
        from bs4 import BeautifulSoup
        from markdownify import MarkdownConverter

        soup = BeautifulSoup(text, "html.parser")
        for tag in soup(["script", "style", "noscript", "template", "svg", "iframe"]):
            tag.decompose()
        converted = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
        return "\n".join(line.rstrip() for line in converted.splitlines()).strip()
    if kind.startswith("text/") or kind.endswith(("json", "xml", "javascript")):
        return text
    raise _Answer(f"The URL returned {kind or 'an unknown type'}, which is not a web page.")


async def _fetch(url: str, allow_private: bool) -> tuple[str, str]:
    """The page at `url` as markdown, and the URL it was finally read from."""
    headers = {"user-agent": USER_AGENT, "accept": "text/html, text/markdown, text/*;q=0.9"}
    timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
        for _ in range(MAX_REDIRECTS + 1):
            await _check_host(url, allow_private)
            try:
                async with session.get(url, allow_redirects=False) as response:
                    location = response.headers.get("location")
                    if response.status in REDIRECTS and location:
                        target = urljoin(url, location)
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
                    # Parsing megabytes of HTML takes seconds: not on the worker's event loop,
                    # which its workflows share.
                    page = await asyncio.to_thread(_markdown, bytes(body), kind, response.charset)
                    return page, url
            except (aiohttp.ClientError, TimeoutError) as e:
                raise WebFetchFailed(f"Fetching {url} failed: {type(e).__name__}: {e}") from None
    raise _Answer(f"Fetching {url} was redirected more than {MAX_REDIRECTS} times.")


def _cached(url: str) -> str | None:
    now = time.monotonic()
    for key in [k for k, (when, _) in _cache.items() if now - when > CACHE_S]:
        del _cache[key]
    hit = _cache.get(url)
    return hit[1] if hit else None


def _remember(url: str, markdown: str) -> None:
    _cache[url] = (time.monotonic(), markdown)
    while len(_cache) > CACHE_ENTRIES:
        _cache.popitem(last=False)


async def _ask(req: WebFetchRequest, markdown: str) -> str:
    headers = {"x-outlast-agent-type": WEB_FETCH_AGENT_TYPE, "x-outlast-agent-id": req.agent_id}
    prompt = summarizer_prompt(markdown, req.input.prompt)
    text = await complete_text(req.model, req.max_tokens, prompt, headers)
    return text or "(The model gave no answer about the page.)"


@activity.defn(name="tool.web_fetch")
async def web_fetch(req: WebFetchRequest) -> ToolOutput:
    """The small model's answer to the prompt about the page at the URL."""
    url = upgraded(req.input.url)
    async with heartbeating():
        try:
            markdown = _cached(url)
            if markdown is None:
                markdown, final = await _fetch(url, req.allow_private)
                _remember(url, markdown)
                _remember(final, markdown)
        except _Answer as answer:
            return ToolOutput(content=answer.text, is_error=answer.is_error)
        return ToolOutput(content=await _ask(req, cut_markdown(markdown)))
