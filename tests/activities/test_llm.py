"""`llm.call_model` against the scripted server: streaming, the store, errors, heartbeats,
through each HTTP backend the worker may be given (`OUTLAST_MODEL_HTTP`); and against a raw
server, answers cut off in ways the scripted model never cuts them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from datetime import timedelta

import pytest
from pydantic import ValidationError
from temporalio.testing import ActivityEnvironment

from activities import transcripts
from activities.errors import ModelConnectionFailed, ModelRequestRejected, ModelUnavailable
from activities.llm import AgentTag, ModelRequest, call_model
from activities.store import default_store
from agents.messages import Message, ToolResultBlock, ToolUseBlock
from agents.transcript import TranscriptRef
from outlast.converter import OutlastPayloadConverter
from tests.model_wire import (
    SSE_HEAD,
    backend,
    chunk,
    model_request,
    raw_server,
    refs,
    streamed_answer,
)
from tests.support import scripted_model, unanswered_listener

pytestmark = pytest.mark.usefixtures("backend")
__all__ = ["backend", "refs"]  # fixtures, used by name


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
            call_model, model_request(refs, append=[Message.user_text("go")], agent=tag)
        )
        use = first.message.tool_uses()[0]
        assert use.input == {"file_path": "/w/a"} and first.stop_reason == "tool_use"
        assert first.transcript.length == 2
        result = Message(role="user", content=[ToolResultBlock(tool_use_id=use.id, content="x")])
        second = await ActivityEnvironment().run(
            call_model, model_request(refs, transcript=first.transcript, append=[result], agent=tag)
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


async def test_an_agents_later_calls_name_its_setup_and_send_what_the_first_sent(refs):
    # Issue 9: the model, max_tokens, prompt, tools and tag are the same on every call of an
    # agent; after the first they go into history as one name, not field by field.
    script = {"agents": [{"name": "m", "turns": [{"text": "one"}, {"text": "two"}]}]}
    converter = OutlastPayloadConverter()
    tag = AgentTag(agent_id="a0123456789abcdef", agent_type="Explore", name="scout")
    with scripted_model(script, log_bodies=True) as model:
        first = await ActivityEnvironment().run(
            call_model, model_request(refs, append=[Message.user_text("go")], agent=tag)
        )
        assert first.setup_ref is not None
        later = model_request(
            refs, transcript=first.transcript, append=[Message.user_text("on")], agent=tag
        ).model_copy(update={"setup_ref": first.setup_ref})
        (payload,) = converter.to_payloads([later])
        sent = json.loads(payload.data)
        assert sent["setup_ref"] == first.setup_ref
        assert not {"model", "max_tokens", "system_ref", "tools_ref", "agent"} & set(sent)
        (received,) = converter.from_payloads([payload], [ModelRequest])
        second = await ActivityEnvironment().run(call_model, received)
        log = model.log
    assert second.message.text() == "two" and second.setup_ref is None
    one, two = log[0]["body"], log[1]["body"]
    for key in ("model", "max_tokens", "system", "tools"):
        assert two[key] == one[key], key
    assert log[1]["headers"]["x-outlast-agent-name"] == "scout"
    assert log[1]["headers"]["x-outlast-agent-id"] == "a0123456789abcdef"


def test_a_model_request_names_its_model_or_its_setup():
    with pytest.raises(ValidationError, match="names its model, or the setup_ref"):
        ModelRequest(transcript=TranscriptRef())
    assert ModelRequest(setup_ref="0" * 32).model == ""  # as an activity receives it


@pytest.mark.parametrize(
    ("failure", "error", "retry"),
    [
        ({"status": 529}, ModelUnavailable, None),
        ({"status": 429, "retry_after": 2}, ModelUnavailable, timedelta(seconds=2)),
        ({"status": 500}, ModelUnavailable, None),
        ({"status": 400, "message": "bad field"}, ModelRequestRejected, None),
        ({"status": 401}, ModelRequestRejected, None),
        ({"status": 413}, ModelRequestRejected, None),
        # The API's `x-should-retry` decides over the status, as in the SDK's own retries.
        ({"status": 500, "should_retry": False}, ModelRequestRejected, None),
        ({"status": 400, "should_retry": True}, ModelUnavailable, None),
    ],
)
async def test_errors_are_classified(refs, failure, error, retry):
    script = {"agents": [{"name": "m", "turns": [{"error": failure}]}]}
    with scripted_model(script):
        with pytest.raises(error) as raised:
            await ActivityEnvironment().run(
                call_model, model_request(refs, append=[Message.user_text("x")])
            )
    assert raised.value.type == error.__name__
    assert raised.value.non_retryable is (error is ModelRequestRejected)
    assert raised.value.next_retry_delay == retry
    assert raised.value.details[0]["status"] == failure["status"]


async def test_unreachable_api_is_a_retryable_connection_error(refs, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with pytest.raises(ModelConnectionFailed) as raised:
        await ActivityEnvironment().run(
            call_model, model_request(refs, append=[Message.user_text("x")])
        )
    assert not raised.value.non_retryable


async def test_a_connect_that_hangs_fails_the_attempt_in_seconds(refs, monkeypatch):
    """The SDK's 5 s connect limit holds under the call's own timeout: a plain number there
    set every limit, the connect's too, to the call's 600 s, so an API host that drops
    connects held each attempt for minutes before Temporal could retry it."""
    with unanswered_listener() as port:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        env = ActivityEnvironment()
        env.info = dataclasses.replace(env.info, start_to_close_timeout=timedelta(seconds=600))
        began = time.monotonic()
        with pytest.raises(ModelConnectionFailed) as raised:
            await asyncio.wait_for(
                env.run(call_model, model_request(refs, append=[Message.user_text("x")])),
                timeout=60,
            )
    # Not refused at once (a kernel may refuse instead of dropping): the limit ended it.
    assert 4 <= time.monotonic() - began < 30, raised.value
    assert not raised.value.non_retryable


async def test_heartbeats_while_the_response_is_held_and_cancel_arrives(refs, monkeypatch):
    monkeypatch.setattr("activities.llm.HEARTBEAT_EVERY_S", 0.1)
    script = {"agents": [{"name": "m", "turns": [{"delay_ms": 5000, "text": "late"}]}]}
    with scripted_model(script) as model:
        env = ActivityEnvironment()
        beats = []
        env.on_heartbeat = lambda *d: beats.append(d)
        task = asyncio.create_task(
            env.run(call_model, model_request(refs, append=[Message.user_text("x")]))
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


async def _call_through(port: int, refs, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    return await ActivityEnvironment().run(
        call_model, model_request(refs, append=[Message.user_text("x")])
    )


async def test_the_answer_names_its_model_only_when_it_is_not_the_one_asked_for(refs, monkeypatch):
    # An alias is answered by a dated model: that is news; the model asked for is not, and is
    # not written into history again on every turn (issue 9).
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n")
        writer.write(chunk(streamed_answer("hi")) + b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    async with raw_server(answer) as port:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
        request = model_request(refs, append=[Message.user_text("x")])  # asks for claude-test
        same = await ActivityEnvironment().run(call_model, request)
        alias = request.model_copy(update={"model": "claude-alias"})
        other = await ActivityEnvironment().run(call_model, alias)
    assert same.model == "" and "model" not in same.model_dump(mode="json")
    assert other.model == "claude-test"


async def test_a_stream_that_breaks_mid_response_is_a_retryable_connection_error(refs, monkeypatch):
    """A server that starts the answer, then drops the connection: on either backend the SDK
    passes on the HTTP library's own error (anthropic 2.17 and later wrapped in
    `APIConnectionError`), which the activity types like a refused call."""
    first_event = streamed_answer("x").split(b"\n\n", 1)[0] + b"\n\n"

    async def answer_then_drop(head: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n" + chunk(first_event))
        await writer.drain()
        writer.transport.abort()

    async with raw_server(answer_then_drop) as port:
        with pytest.raises(ModelConnectionFailed, match="broke mid-response") as raised:
            await _call_through(port, refs, monkeypatch)
    assert not raised.value.non_retryable


async def test_a_break_after_message_stop_keeps_the_whole_answer(refs, monkeypatch):
    """The connection drops after the last event but before the body's end: the answer is
    whole, so it is kept rather than paid for twice."""

    async def answer_then_drop(head: bytes, writer: asyncio.StreamWriter) -> None:
        body = streamed_answer("all of it")
        writer.write(SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n" + chunk(body))
        await writer.drain()
        writer.transport.abort()  # no closing chunk

    async with raw_server(answer_then_drop) as port:
        out = await _call_through(port, refs, monkeypatch)
    assert out.message.content[0].text == "all of it" and out.stop_reason == "end_turn"


async def test_an_error_event_mid_stream_is_a_retryable_unavailable_model(refs, monkeypatch):
    """The API may end an accepted stream with an `error` event (overloaded_error) instead
    of the answer: the model is busy, not the request bad, so it is retried."""
    first_event = streamed_answer("x").split(b"\n\n", 1)[0] + b"\n\n"
    error = (
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        b'"message": "Overloaded"}}\n\n'
    )

    async def answer_then_error(head: bytes, writer: asyncio.StreamWriter) -> None:
        body = chunk(first_event) + chunk(error) + b"0\r\n\r\n"
        writer.write(SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n" + body)
        await writer.drain()
        writer.close()

    async with raw_server(answer_then_error) as port:
        with pytest.raises(ModelUnavailable, match="overloaded_error") as raised:
            await _call_through(port, refs, monkeypatch)
    assert not raised.value.non_retryable


async def test_a_stream_that_ends_cleanly_before_message_stop_is_a_connection_error(
    refs, monkeypatch
):
    """Every event but `message_stop`, then a proper end of body: the answer may be cut
    anywhere, so it is retried, never taken as the model's whole reply."""
    body = streamed_answer("half an ans").rsplit(b"event: message_stop", 1)[0]

    async def answer_short(head: bytes, writer: asyncio.StreamWriter) -> None:
        length = f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
        writer.write(SSE_HEAD + length + body)
        await writer.drain()
        writer.close()

    async with raw_server(answer_short) as port:
        with pytest.raises(ModelConnectionFailed, match="ended before its message_stop"):
            await _call_through(port, refs, monkeypatch)
