"""The shutdown handshake (R68): requests are recognised, answers validated."""

import json

from agents.team_protocol import (
    ShutdownResponseMessage,
    parse_shutdown_response,
    shutdown_request_id,
    shutdown_request_text,
)


def test_a_request_round_trips_and_other_mail_is_not_one():
    assert shutdown_request_id(shutdown_request_text("shutdown-b-1", "done")) == "shutdown-b-1"
    assert shutdown_request_id("please stop") is None
    assert shutdown_request_id(json.dumps({"type": "hello", "request_id": "x"})) is None
    assert shutdown_request_id(json.dumps({"type": "shutdown_request"})) is None


def answer(**fields) -> str:
    return json.dumps({"type": "shutdown_response", "request_id": "r1", **fields})


def test_answers_are_checked_against_open_requests():
    ok = parse_shutdown_response(answer(approve=True), ["r1"])
    assert isinstance(ok, ShutdownResponseMessage) and ok.approve
    assert "No open shutdown request r1" in parse_shutdown_response(answer(approve=True), [])
    assert "Not a shutdown_response" in parse_shutdown_response("yes, stopping", ["r1"])
    assert "Unknown message type" in parse_shutdown_response(
        json.dumps({"type": "hi", "request_id": "r1", "approve": True}), ["r1"]
    )


def test_a_rejection_needs_a_reason():
    assert "needs a reason" in parse_shutdown_response(answer(approve=False), ["r1"])
    kept = parse_shutdown_response(answer(approve=False, reason="mid-edit"), ["r1"])
    assert isinstance(kept, ShutdownResponseMessage) and kept.reason == "mid-edit"


def test_a_message_nested_too_deep_or_oddly_typed_is_plain_mail():
    """json raises RecursionError on deep nesting; in a workflow that failed the task on every
    retry (a teammate's message wedged the recipient). An unhashable "type" raised too."""
    from agents.team_protocol import protocol_type, shutdown_request_id, with_request_id

    deep = "[" * 100_000 + "]" * 100_000
    assert protocol_type(deep) is None and shutdown_request_id(deep) is None
    assert with_request_id(deep, "sd-1") is None
    assert protocol_type('{"type": ["shutdown_request"]}') is None
    assert protocol_type('{"type": "plan_approval_response"}') == "plan_approval_response"
