"""WebFetch (T15): a page fetched over real HTTP from a local server, made markdown, and
answered about by the (scripted) small model; what the model can act on comes back as an
answer, never as a failed activity."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import aiohttp
import aiohttp.abc
import pytest
from pydantic import ValidationError
from temporalio.testing import ActivityEnvironment

from activities import web_fetch as web_fetch_module
from activities.web_fetch import WebFetchRequest, _fetch, web_fetch
from agents.web_fetch import (
    MAX_MARKDOWN_CHARS,
    WEB_FETCH_AGENT_TYPE,
    WebFetchInput,
    cut_markdown,
    is_local_host,
    same_site,
    upgraded,
)
from tests.support import scripted_model

PAGE = b"""<html><head><title>T</title><style>body{color:red}</style>
<script>alert('x')</script></head><body><h1>Release notes</h1>
<p>Version <b>2.0</b> adds <a href="/docs">docs</a>.</p><ul><li>one</li><li>two</li></ul>
</body></html>"""


class Handler(BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        status, headers, body = self.routes.get(self.path, (404, {}, b"missing"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def site(routes: dict[str, tuple[int, dict[str, str], bytes]]) -> Iterator[str]:
    """A local web server answering `routes`; yields its base URL (http://127.0.0.1:port)."""
    handler = type("Routes", (Handler,), {"routes": routes})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


HTML = {"content-type": "text/html; charset=utf-8"}


def test_the_input_must_be_a_full_http_url():
    assert WebFetchInput(url=" https://example.com/a ", prompt="p").url == "https://example.com/a"
    for bad in (
        "example.com",
        "ftp://example.com",
        "file:///etc/passwd",
        "https://u:p@x.org/",
        "https://example.com:99999/",
    ):
        with pytest.raises(ValidationError):
            WebFetchInput(url=bad, prompt="p")


def test_hosts_urls_and_redirects():
    for local in (
        "localhost",
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "[::1]",
        "169.254.169.254",
        "100.64.0.1",
        "::ffff:127.0.0.1",
        "::127.0.0.1",  # IPv4-compatible
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "devbox",  # one label: an intranet's name
    ):
        assert is_local_host(local), local
    assert not is_local_host("example.com") and not is_local_host("8.8.8.8")
    assert upgraded("http://example.com/x?q=1") == "https://example.com/x?q=1"
    assert upgraded("http://127.0.0.1:8000/") == "http://127.0.0.1:8000/"
    assert same_site("https://www.example.com/a", "https://example.com/b")
    assert not same_site("https://example.com/a", "https://evil.example.net/")
    assert not same_site("https://example.com/a", "http://example.com/a")  # no downgrade
    assert upgraded("http://devbox:8000/") == "http://devbox:8000/"
    long = "x" * (MAX_MARKDOWN_CHARS + 10)
    assert cut_markdown(long).endswith("[... 10 more characters of the page cut ...]")


async def test_a_page_becomes_markdown_without_its_scripts():
    with site({"/": (200, HTML, PAGE)}) as base:
        markdown = await _fetch(base + "/", allow_private=True)
    assert "# Release notes" in markdown
    assert "Version **2.0** adds [docs](/docs)." in markdown
    assert "- one" in markdown and "- two" in markdown
    assert "alert" not in markdown and "color:red" not in markdown


async def test_redirects_on_the_host_are_followed_and_to_another_are_reported():
    routes = {
        "/old": (301, {"location": "/new"}, b""),
        "/new": (200, {"content-type": "text/plain"}, b"plain text here"),
    }
    with site(routes) as base:
        other = base.replace("127.0.0.1", "localhost")
        routes["/away"] = (302, {"location": other + "/new"}, b"")
        assert await _fetch(base + "/old", allow_private=True) == "plain text here"
        req = WebFetchRequest(input=WebFetchInput(url=base + "/away", prompt="p"), model="m")
        req = req.model_copy(update={"allow_private": True})
        out = await ActivityEnvironment().run(web_fetch, req)
    assert not out.is_error  # a redirect is information, not a failure
    assert out.content.startswith("REDIRECT DETECTED") and f"{other}/new" in out.content


@pytest.mark.parametrize(
    ("route", "words"),
    [
        ((404, HTML, b"gone"), "HTTP 404"),
        ((200, {"content-type": "image/png"}, b"\x89PNG"), "not a web page"),
    ],
)
async def test_what_the_model_can_act_on_is_an_error_answer(route, words):
    with site({"/x": route}) as base:
        req = WebFetchRequest(
            input=WebFetchInput(url=base + "/x", prompt="p"), model="m", allow_private=True
        )
        out = await ActivityEnvironment().run(web_fetch, req)
    assert out.is_error and words in out.content


async def test_private_hosts_are_refused_unless_allowed():
    with site({"/": (200, HTML, PAGE)}) as base:
        req = WebFetchRequest(input=WebFetchInput(url=base + "/", prompt="p"), model="m")
        out = await ActivityEnvironment().run(web_fetch, req)
    assert out.is_error and "private network" in out.content


async def test_the_small_model_answers_about_the_page_and_a_second_fetch_is_cached():
    web_fetch_module._cache.clear()
    script = {
        "agents": [
            {
                "name": "reader",
                "match": {"agent_type": WEB_FETCH_AGENT_TYPE},
                "after_last": "repeat_last",
                "turns": [{"text": "Version 2.0 adds docs."}],
            }
        ]
    }
    hits = []
    routes = {"/notes": (200, HTML, PAGE)}
    with site(routes) as base, scripted_model(script, log_bodies=True) as model:
        url = base + "/notes"
        req = WebFetchRequest(
            input=WebFetchInput(url=url, prompt="What does 2.0 add?"),
            model="claude-haiku-5-5",
            allow_private=True,
        )
        first = await ActivityEnvironment().run(web_fetch, req)
        routes["/notes"] = (500, HTML, b"down now")  # a refetch would fail
        second = await ActivityEnvironment().run(web_fetch, req)
        hits = model.log
    assert first.content == second.content == "Version 2.0 adds docs."
    body = hits[0]["body"]
    assert body["model"] == "claude-haiku-5-5"
    asked = body["messages"][0]["content"]
    asked = asked if isinstance(asked, str) else asked[0]["text"]
    assert "# Release notes" in asked and asked.rstrip().endswith("Never reproduce song lyrics.")
    assert "What does 2.0 add?" in asked


async def test_a_name_that_resolves_inside_is_refused_where_aiohttp_resolves_it():
    """DNS rebinding: the check is the resolver the connection uses, not a lookup before."""

    class Rebinding(aiohttp.abc.AbstractResolver):
        async def resolve(self, host, port=0, family=socket.AF_INET):
            address = "127.0.0.1" if host == "rebind.example" else "93.184.215.14"
            return [
                {
                    "hostname": host,
                    "host": address,
                    "port": port,
                    "family": family,
                    "proto": 0,
                    "flags": 0,
                }
            ]

        async def close(self):
            pass

    resolver = web_fetch_module._Public()
    resolver._inner = Rebinding()
    with pytest.raises(web_fetch_module._Answer, match="private network"):
        await resolver.resolve("rebind.example", 80)
    assert (await resolver.resolve("public.example", 80))[0]["host"] == "93.184.215.14"


def test_old_html_and_odd_charsets_still_become_text():
    nested = b"<html><body>" + b"<p>para " * 2000 + b"end</body></html>"
    text = web_fetch_module._markdown(nested, "text/html", None)
    assert text.startswith("para") and text.rstrip().endswith("end")
    latin = "<html><head><meta charset='windows-1252'></head><body>caf\xe9</body></html>"
    assert "café" in web_fetch_module._markdown(latin.encode("cp1252"), "text/html", None)
    assert web_fetch_module._markdown(b"plain", "text/plain; charset=utf8mb4", "utf8mb4") == "plain"


async def test_a_page_a_private_hosts_run_fetched_is_not_another_runs():
    web_fetch_module._cache.clear()
    script = {"agents": [{"name": "r", "after_last": "repeat_last", "turns": [{"text": "ok"}]}]}
    with site({"/": (200, HTML, PAGE)}) as base, scripted_model(script):
        inp = WebFetchInput(url=base + "/", prompt="p")
        allowed = WebFetchRequest(input=inp, model="m", allow_private=True)
        first = await ActivityEnvironment().run(web_fetch, allowed)
        refused = await ActivityEnvironment().run(web_fetch, WebFetchRequest(input=inp, model="m"))
    assert first.content == "ok" and first.usage is not None
    assert refused.is_error and "private network" in refused.content
