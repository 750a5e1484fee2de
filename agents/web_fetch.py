"""`WebFetch` (spec T15): fetch a URL, turn the page into markdown, and answer the agent's
prompt about it with a small, fast model.

Carried out by one activity on the workflow's own queue (activities/web_fetch.py), where
the model calls run and their credentials live: the page never enters history, only the
small model's answer does. Only the contract, the texts and the pure decisions live here.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

WEB_FETCH_TOOL = "WebFetch"
MAX_URL_CHARS = 2000
MAX_PAGE_BYTES = 10 * 1024 * 1024
MAX_MARKDOWN_CHARS = 100_000
"""Of the page's markdown, what the small model reads; the rest is cut with a note."""
MAX_REDIRECTS = 10
WEB_FETCH_AGENT_TYPE = "web-fetch"
"""The small model's call is tagged with this agent type (`x-outlast-agent-type`), so a
scripted model can answer it apart from the agent that asked."""


class WebFetchInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(
        min_length=1, max_length=MAX_URL_CHARS, description="The URL to fetch content from"
    )
    prompt: str = Field(
        min_length=1, max_length=10_000, description="The prompt to run on the fetched content"
    )

    @field_validator("url")
    @classmethod
    def _fully_formed(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError("must be a fully-formed http(s) URL, e.g. https://example.com/page")
        if parts.username or parts.password:
            raise ValueError("must not carry a user name or password")
        try:
            parts.port  # noqa: B018 - it raises for a port that is not one
        except ValueError:
            raise ValueError("has a port that is not a number from 0 to 65535") from None
        return value.strip()


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64, compatible)."""
    if address.ipv4_mapped or address.sixtofour:
        return address.ipv4_mapped or address.sixtofour
    if address.teredo:
        return address.teredo[1]
    if address in _NAT64 or int(address) >> 32 == 0:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_local_host(host: str) -> bool:
    """A name or address that means this machine or a private network: not the public web.
    A one-label name (`devbox`, a compose service's `api`) is an intranet's."""
    host = host.strip("[]").lower().rstrip(".")
    if host in ("localhost",) or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return "." not in host
    if isinstance(address, ipaddress.IPv6Address) and (v4 := _embedded_v4(address)):
        if not v4.is_global:
            return True
    return not address.is_global


def upgraded(url: str) -> str:
    """`http://` becomes `https://` for a public host, as Claude Code does; a local one is left
    as it is (a development server rarely speaks TLS)."""
    parts = urlsplit(url)
    if parts.scheme.lower() == "http" and not is_local_host(parts.hostname or ""):
        return urlunsplit(("https", *parts[1:]))
    return url


def same_site(url: str, target: str) -> bool:
    """Whether a redirect from `url` to `target` stays on the same host (`www.` aside) and
    does not fall from https to http, which is followed; any other is reported to the model
    instead."""

    def bare(u: str) -> str:
        return (urlsplit(u).hostname or "").lower().removeprefix("www.")

    downgrade = urlsplit(url).scheme == "https" and urlsplit(target).scheme != "https"
    return bare(url) == bare(target) and not downgrade


def redirect_text(url: str, target: str, status: int) -> str:
    return (
        f"REDIRECT DETECTED: The URL redirects to a different host.\n\n"
        f"Original URL: {url}\nRedirect URL: {target}\nStatus: {status}\n\n"
        "To complete your request, fetch the redirect URL with a new WebFetch call, with the "
        "same prompt."
    )


def summarizer_prompt(markdown: str, prompt: str) -> str:
    """What the small model is asked (Claude Code's secondary-model prompt, in our words)."""
    return (
        f"Web page content:\n---\n{markdown}\n---\n\n{prompt}\n\n"
        "Provide a concise response based only on the content above. In your response:\n"
        " - Keep every quotation from the page to at most 125 characters, in quotation marks; "
        "other text must not repeat the page word for word.\n"
        " - Do not comment on the legality of the prompt or the response.\n"
        " - Never reproduce song lyrics."
    )


def cut_markdown(markdown: str) -> str:
    if len(markdown) <= MAX_MARKDOWN_CHARS:
        return markdown
    rest = len(markdown) - MAX_MARKDOWN_CHARS
    return f"{markdown[:MAX_MARKDOWN_CHARS]}\n\n[... {rest} more characters of the page cut ...]"


WEB_FETCH_DESCRIPTION = """\
- Fetches content from a specified URL and processes it using an AI model
- Takes a URL and a prompt as input
- Fetches the URL content, converts HTML to markdown
- Processes the content with the prompt using a small, fast model
- Returns the model's response about the content
- Use this tool when you need to retrieve and analyze web content

Usage notes:
  - The URL must be a fully-formed valid URL
  - HTTP URLs will be automatically upgraded to HTTPS (not for a local development server)
  - The prompt should describe what information you want to extract from the page
  - This tool is read-only and does not modify any files
  - Results may be summarized if the content is very large
  - Includes a self-cleaning 15-minute cache for faster responses when repeatedly accessing \
the same URL
  - When a URL redirects to a different host, the tool will inform you and provide the \
redirect URL. You should then make a new WebFetch request with the redirect URL to fetch \
the content.
  - Addresses on this machine or a private network are refused unless the operator allows \
them (`tools.web_fetch_private_hosts`)
  - For GitHub URLs, prefer using the gh CLI via Bash instead (e.g. gh pr view, gh issue \
view, gh api)."""
