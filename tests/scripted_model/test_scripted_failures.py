"""Scripted errors: `fail` attempts, `error` turns, `after_last: error`, unknown variables."""

from __future__ import annotations

import asyncio

import anthropic
import pytest

from tests.scripted_model.conftest import ClientFn, ServeFn, request, user


async def test_fail_entries_then_the_answer(serve: ServeFn, client_for: ClientFn) -> None:
    turn = {"fail": [529, {"status": 429, "retry_after": 1}], "text": "done"}
    server = serve({"agents": [{"name": "m", "turns": [turn]}]})
    client = client_for(server)

    with pytest.raises(anthropic.InternalServerError) as overloaded:
        await client.messages.create(**request([user("hi")]))
    assert isinstance(overloaded.value, anthropic.OverloadedError)
    assert overloaded.value.status_code == 529
    assert overloaded.value.type == "overloaded_error"
    assert overloaded.value.request_id

    with pytest.raises(anthropic.RateLimitError) as limited:
        async with client.messages.stream(**request([user("hi")])) as stream:
            await stream.get_final_message()
    assert limited.value.status_code == 429
    assert limited.value.response.headers["retry-after"] == "1"
    assert "x-should-retry" not in limited.value.response.headers
    assert limited.value.type == "rate_limit_error"

    message = await client.messages.create(**request([user("hi")]))
    assert message.content[0].text == "done"
    assert [(r["attempt"], r["status"], r["outcome"]) for r in server.log] == [
        (1, 529, "error"),
        (2, 429, "error"),
        (3, 200, "completed"),
    ]


async def test_a_fail_entry_can_carry_the_apis_retry_verdict(
    serve: ServeFn, client_for: ClientFn
) -> None:
    turn = {"fail": [{"status": 500, "should_retry": False}], "text": "done"}
    client = client_for(serve({"agents": [{"name": "m", "turns": [turn]}]}))
    with pytest.raises(anthropic.InternalServerError) as failed:
        await client.messages.create(**request([user("hi")]))
    assert failed.value.response.headers["x-should-retry"] == "false"


async def test_attempts_are_counted_per_conversation(serve: ServeFn, client_for: ClientFn) -> None:
    turn = {"fail": [500], "text": "ok"}
    server = serve({"agents": [{"name": "m", "turns": [turn]}]})
    client = client_for(server)
    for prompt in ("first conversation", "second conversation"):
        with pytest.raises(anthropic.InternalServerError) as failed:
            await client.messages.create(**request([user(prompt)]))
        assert failed.value.status_code == 500
        assert failed.value.type == "api_error"
    message = await client.messages.create(**request([user("first conversation")]))
    assert message.content[0].text == "ok"


async def test_error_turn_answers_every_attempt(serve: ServeFn, client_for: ClientFn) -> None:
    error = {"status": 400, "type": "invalid_request_error", "message": "bad"}
    server = serve({"agents": [{"name": "m", "turns": [{"error": error}]}]})
    client = client_for(server)
    for _ in range(2):
        with pytest.raises(anthropic.BadRequestError) as rejected:
            await client.messages.create(**request([user("hi")]))
        assert rejected.value.api_message == "bad"
        assert rejected.value.body == {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "bad"},
        }
    assert [r["outcome"] for r in server.log] == ["error", "error"]


async def test_status_defaults_for_error_types(serve: ServeFn, client_for: ClientFn) -> None:
    turn = {"fail": [401, 403, 404, 413], "text": "finally"}
    server = serve({"agents": [{"name": "m", "turns": [turn]}]})
    client = client_for(server)
    expected = [
        (anthropic.AuthenticationError, "authentication_error"),
        (anthropic.PermissionDeniedError, "permission_error"),
        (anthropic.NotFoundError, "not_found_error"),
        (anthropic.ContentTooLargeError, "request_too_large"),
    ]
    for error_class, error_type in expected:
        with pytest.raises(error_class) as raised:
            await client.messages.create(**request([user("hi")]))
        assert raised.value.type == error_type


async def test_after_last_error(serve: ServeFn, client_for: ClientFn) -> None:
    agent = {"name": "short", "turns": [{"text": "one"}], "after_last": "error"}
    server = serve({"agents": [agent]})
    messages = [user("hi"), {"role": "assistant", "content": "one"}, user("more")]
    with pytest.raises(anthropic.InternalServerError) as failed:
        await client_for(server).messages.create(**request(messages))
    assert failed.value.status_code == 500
    assert "short" in str(failed.value.api_message)


async def test_unknown_variable_is_a_500_naming_it(serve: ServeFn, client_for: ClientFn) -> None:
    turn = {"tool_use": {"name": "Read", "input": {"file_path": "{{repo_root}}/a.py"}}}
    server = serve({"agents": [{"name": "m", "turns": [turn, {"text": "next"}]}]})
    client = client_for(server)
    with pytest.raises(anthropic.InternalServerError) as failed:
        await client.messages.create(**request([user("hi")]))
    assert failed.value.status_code == 500
    assert "{{repo_root}}" in str(failed.value.api_message)
    record = server.log[-1]
    assert (record["status"], record["outcome"]) == (500, "error")
    assert "repo_root" in record["error"]
    # The server lives on.
    messages = [user("hi"), {"role": "assistant", "content": "x"}, user("y")]
    assert (await client.messages.create(**request(messages))).content[0].text == "next"


async def test_missing_cwd_says_where_it_comes_from(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve({"agents": [{"name": "m", "turns": [{"text": "in {{cwd}}"}]}]})
    with pytest.raises(anthropic.InternalServerError) as failed:
        await client_for(server).messages.create(**request([user("hi")], system="no env here"))
    assert "Working directory" in str(failed.value.api_message)


async def test_concurrent_attempts_are_counted_once_each(
    serve: ServeFn, client_for: ClientFn
) -> None:
    turn = {"fail": [529, 529, 429], "text": "ok"}
    server = serve({"agents": [{"name": "m", "turns": [turn]}]})
    client = client_for(server)
    calls = [client.messages.create(**request([user("hi")])) for _ in range(8)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    statuses = sorted(getattr(r, "status_code", 200) for r in results)
    assert statuses == [200] * 5 + [429, 529, 529]
    assert sorted(r["attempt"] for r in server.log) == list(range(1, 9))
