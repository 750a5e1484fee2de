"""The shutdown handshake between a team and a teammate (spec R68, R72), as pure parsing.

A graceful stop ("terminate") is asked, not imposed: the team sends a `shutdown_request`
message; the teammate answers `shutdown_response` through SendMessage to "team", approving
(it stops when that turn ends) or rejecting with a reason (it keeps working). A kill is
Temporal cancellation and needs no answer.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, ValidationError

TEAM_ADDRESS = "team"
"""The address a teammate answers protocol messages to."""
PROTOCOL_TYPES = frozenset(
    {"shutdown_request", "shutdown_response", "plan_approval_request", "plan_approval_response"}
)


class ShutdownRequestMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str = "shutdown_request"
    request_id: str
    reason: str = ""


class ShutdownResponseMessage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    request_id: str
    approve: bool
    reason: str | None = None


def shutdown_request_text(request_id: str, reason: str) -> str:
    return json.dumps(
        ShutdownRequestMessage(request_id=request_id, reason=reason).model_dump(),
        ensure_ascii=False,
    )


def _json_object(text: str) -> dict | None:
    """`text` as a JSON object, or None. Deep nesting is None too: json raises
    RecursionError, which in a workflow fails its task again on every retry."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _protocol(text: str, kind: str) -> dict | None:
    """`text` as a protocol message of type `kind`, or None."""
    data = _json_object(text)
    return data if data is not None and data.get("type") == kind else None


def protocol_type(text: str) -> str | None:
    """The type if `text` is one of the team's structured protocol messages, else None."""
    kind = (_json_object(text) or {}).get("type")
    return kind if isinstance(kind, str) and kind in PROTOCOL_TYPES else None


def _request_id(data: dict | None) -> str | None:
    request_id = (data or {}).get("request_id")
    return request_id if isinstance(request_id, str) and request_id else None


def shutdown_request_id(text: str) -> str | None:
    """The request id if `text` is a shutdown request, else None."""
    return _request_id(_protocol(text, "shutdown_request"))


def with_request_id(text: str, request_id: str) -> str | None:
    """`text` with `request_id` filled in if it is a shutdown request that has none (the spec
    has the asker give only `reason`; the answer must echo an id), else None."""
    data = _protocol(text, "shutdown_request")
    if data is None or _request_id(data) is not None:
        return None
    return json.dumps({**data, "request_id": request_id}, ensure_ascii=False)


def response_request_id(text: str) -> str | None:
    """The request id `text` answers if it is a shutdown response, else None."""
    return _request_id(_protocol(text, "shutdown_response"))


def parse_shutdown_response(text: str, open_requests: list[str]) -> ShutdownResponseMessage | str:
    """The teammate's answer, or what is wrong with it (for an `is_error` tool result)."""
    usage = (
        'Messages to "team" answer a shutdown request: {"type": "shutdown_response", '
        '"request_id": "<id>", "approve": true} (or "approve": false with a "reason").'
    )
    try:
        answer = ShutdownResponseMessage.model_validate_json(text)
    except (ValidationError, ValueError):
        return f"Not a shutdown_response. {usage}"
    if answer.type != "shutdown_response":
        return f"Unknown message type '{answer.type}'. {usage}"
    if answer.request_id not in open_requests:
        known = ", ".join(open_requests) or "none"
        return f"No open shutdown request {answer.request_id} (open: {known})."
    if not answer.approve and not (answer.reason or "").strip():
        return "Rejecting a shutdown request needs a reason: say why you must go on."
    return answer
