"""Which errors of a waiting call mean "the server is away" to a follow, not a refusal."""

from __future__ import annotations

import pytest
from temporalio.service import RPCError, RPCStatusCode

from outlast.server_away import server_away


@pytest.mark.parametrize(
    ("status", "message", "away"),
    [
        (RPCStatusCode.UNAVAILABLE, "tcp connect error", True),
        (RPCStatusCode.DEADLINE_EXCEEDED, "deadline has elapsed", True),
        # A graceful stop of the server (`outlast server-stop`, a deploy) under the follow's
        # long poll: it ended `outlast run` with exit 2, and its own worker with it (a user
        # test, 2026-12-05).
        (RPCStatusCode.UNKNOWN, "transport error", True),
        (RPCStatusCode.UNKNOWN, "something the server said", False),
        (RPCStatusCode.NOT_FOUND, "workflow not found", False),
        (RPCStatusCode.PERMISSION_DENIED, "transport error", False),
    ],
)
def test_a_closed_connection_is_the_server_away_and_a_refusal_is_not(status, message, away):
    assert server_away(RPCError(message, status, b"")) is away
