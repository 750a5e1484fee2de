"""Request validation like the real API, plus the non-message endpoints."""

from __future__ import annotations

import base64
import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anthropic
import pytest

from outlast.scripted_model import ScriptedModelServer
from tests.scripted_model.conftest import ClientFn, ServeFn, request, user

SCRIPT = {"agents": [{"name": "m", "turns": [{"text": "a"}, {"text": "b"}]}]}
TOOL_ID = "toolu_aaaaaaaaaaaaaaaaaaaaaaaa"


def tool_use(tool_id: str = TOOL_ID) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": tool_id, "name": "Read", "input": {}}],
    }


def tool_result(tool_id: str = TOOL_ID) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "x"}],
    }


async def rejected(client: anthropic.AsyncAnthropic, **kwargs: Any) -> str:
    with pytest.raises(anthropic.BadRequestError) as error:
        await client.messages.create(**kwargs)
    assert error.value.type == "invalid_request_error"
    return str(error.value.api_message)


async def test_missing_tool_result(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT)
    messages = [user("hi"), tool_use(), user("no result here")]
    message = await rejected(client_for(server), **request(messages))
    assert "without `tool_result`" in message and TOOL_ID in message and "messages.1" in message
    assert server.log[-1]["outcome"] == "invalid"
    assert server.log[-1]["status"] == 400


async def test_tool_use_as_last_message_has_no_result(serve: ServeFn, client_for: ClientFn) -> None:
    message = await rejected(client_for(serve(SCRIPT)), **request([user("hi"), tool_use()]))
    assert "without `tool_result`" in message


async def test_orphan_tool_result(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT))
    extra = tool_result("toolu_bbbbbbbbbbbbbbbbbbbbbbbb")["content"]
    answered = tool_result()
    messages = [user("hi"), tool_use(), {"role": "user", "content": answered["content"] + extra}]
    message = await rejected(client, **request(messages))
    assert "unexpected `tool_use_id`" in message and "toolu_bbbb" in message
    assert "messages.2.content.1" in message
    messages = [user("hi"), {"role": "assistant", "content": "text only"}, tool_result()]
    message = await rejected(client, **request(messages))
    assert "unexpected `tool_use_id`" in message and "messages.2.content.0" in message


async def test_roles_must_alternate_and_start_with_user(
    serve: ServeFn, client_for: ClientFn
) -> None:
    client = client_for(serve(SCRIPT))
    message = await rejected(client, **request([user("a"), user("b")]))
    assert "alternate" in message and "messages.1" in message
    message = await rejected(client, **request([{"role": "assistant", "content": "x"}]))
    assert "first message" in message


async def test_at_most_four_cache_breakpoints(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT)
    client = client_for(server)
    cached = {"type": "ephemeral"}
    system = [{"type": "text", "text": f"part {i}", "cache_control": cached} for i in range(5)]
    message = await rejected(client, **request([user("hi")], system=system))
    assert "maximum of 4" in message and "Found 5" in message
    ok = await client.messages.create(**request([user("hi")], system=system[:4]))
    assert ok.content[0].text == "a"


async def test_valid_tool_round_trip_passes(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT))
    message = await client.messages.create(**request([user("hi"), tool_use(), tool_result()]))
    assert message.content[0].text == "b"


PNG = (Path(__file__).resolve().parents[1] / "activities" / "images" / "red.png").read_bytes()


def image_result(media_type: str, data: str) -> dict[str, Any]:
    source = {"type": "base64", "media_type": media_type, "data": data}
    block = {
        "type": "tool_result",
        "tool_use_id": TOOL_ID,
        "content": [{"type": "image", "source": source}],
    }
    return {"role": "user", "content": [block]}


async def test_an_image_in_a_tool_result_passes(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT))
    result = image_result("image/png", base64.b64encode(PNG).decode())
    message = await client.messages.create(**request([user("hi"), tool_use(), result]))
    assert message.content[0].text == "b"


@pytest.mark.parametrize(
    ("media_type", "data", "expected"),
    [
        (
            "image/jpeg",
            base64.b64encode(PNG).decode(),
            "Image does not match the provided media type image/jpeg",
        ),
        ("image/bmp", base64.b64encode(PNG).decode(), "media_type: Input should be"),
        ("image/png", "not base64!", "invalid base64 data"),
    ],
)
async def test_an_image_the_api_would_refuse_is_refused(
    serve: ServeFn, client_for: ClientFn, media_type: str, data: str, expected: str
) -> None:
    client = client_for(serve(SCRIPT))
    result = image_result(media_type, data)
    message = await rejected(client, **request([user("hi"), tool_use(), result]))
    assert "messages.2.content.0.tool_result.content.0.image.source.base64" in message
    assert expected in message


def document_result(media_type: str, data: str) -> dict[str, Any]:
    source = {"type": "base64", "media_type": media_type, "data": data}
    block = {
        "type": "tool_result",
        "tool_use_id": TOOL_ID,
        "content": [{"type": "text", "text": "[pdf]"}, {"type": "document", "source": source}],
    }
    return {"role": "user", "content": [block]}


PDF = b"%PDF-1.3\n%fake but headed\n"


@pytest.mark.parametrize(
    ("media_type", "data", "expected"),
    [
        ("application/pdf", base64.b64encode(PDF).decode(), None),
        ("application/pdf", base64.b64encode(PNG).decode(), "The PDF specified was not valid"),
        ("text/plain", base64.b64encode(PDF).decode(), "Input should be 'application/pdf'"),
        ("application/pdf", "not base64!", "invalid base64 data"),
    ],
)
async def test_a_pdf_document_in_a_tool_result_is_checked_as_the_api_does(
    serve: ServeFn, client_for: ClientFn, media_type: str, data: str, expected: str | None
) -> None:
    client = client_for(serve(SCRIPT))
    result = document_result(media_type, data)
    if expected is None:
        message = await client.messages.create(**request([user("hi"), tool_use(), result]))
        assert message.content[0].text == "b"
        return
    message = await rejected(client, **request([user("hi"), tool_use(), result]))
    assert "messages.2.content.0.tool_result.content.1.document.source" in message
    assert expected in message


def raw_post(server: ScriptedModelServer, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    try:
        conn.request("POST", path, body=body, headers={"content-type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"max_tokens": 10, "messages": [user("x")]}, "model: Field required"),
        ({"model": "m", "messages": [user("x")]}, "max_tokens: Field required"),
        ({"model": "m", "max_tokens": 10}, "messages: Field required"),
        ({"model": "m", "max_tokens": 0, "messages": [user("x")]}, "max_tokens"),
        ({"model": "m", "max_tokens": 5, "messages": [user("")]}, "non-empty content"),
    ],
)
def test_required_fields(serve: ServeFn, body: dict[str, Any], expected: str) -> None:
    status, answer = raw_post(serve(SCRIPT), "/v1/messages", json.dumps(body).encode())
    assert status == 400
    assert answer["type"] == "error"
    assert answer["error"]["type"] == "invalid_request_error"
    assert expected in answer["error"]["message"]


def test_body_that_is_not_json(serve: ServeFn) -> None:
    server = serve(SCRIPT)
    status, answer = raw_post(server, "/v1/messages", b"{not json")
    assert status == 400 and "JSON" in answer["error"]["message"]
    assert server.log[-1]["outcome"] == "invalid"


def test_other_endpoints(serve: ServeFn) -> None:
    server = serve(SCRIPT)
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    try:
        conn.request("GET", "/healthz")
        health = conn.getresponse()
        assert (health.status, health.read()) == (200, b"ok")
        conn.request("GET", "/v1/nope")
        missing = conn.getresponse()
        assert missing.status == 404
        assert json.loads(missing.read())["error"]["type"] == "not_found_error"
        assert missing.getheader("request-id")
    finally:
        conn.close()
    status, answer = raw_post(server, "/v1/complete", b"{}")
    assert status == 404 and answer["type"] == "error"


def test_what_a_known_valid_request_began_with_is_not_checked_again_but_the_rest_is() -> None:
    """A conversation's next request repeats the last one: only what changed is looked at, the
    pairing of the last repeated message with the next included."""
    from outlast.scripted_model.wire import InvalidRequest, validate_request

    first = [user("go"), tool_use(), tool_result()]
    valid = {"model": "m", "max_tokens": 10, "messages": first}
    validate_request(valid)
    unanswered = [*first, tool_use("toolu_bbbbbbbbbbbbbbbbbbbbbbbb"), user("no result")]
    with pytest.raises(InvalidRequest, match="without `tool_result`"):
        validate_request({**valid, "messages": unanswered}, first)
    # An earlier message changed: the prefix it no longer shares is checked in full.
    stray = [user("go"), tool_use(), tool_result("toolu_cccccccccccccccccccccccc")]
    with pytest.raises(InvalidRequest, match="messages.1: `tool_use` ids were found without"):
        validate_request({**valid, "messages": stray}, first)
    longer = [*first, {"role": "assistant", "content": "done"}, user("more")]
    validate_request({**valid, "messages": longer}, first)
