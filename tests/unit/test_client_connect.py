"""`outlast.client.connect` from code, where no server answers."""

from __future__ import annotations

import pytest

from outlast.client import ServerUnreachable, connect


async def test_no_server_is_refused_in_a_sentence_as_a_runtime_error():
    """It was the SDK's `RuntimeError: Failed client connect: ...` with the transport's debug
    dump (a user test, 2026-12-07); still a RuntimeError, for code that caught that."""
    with pytest.raises(ServerUnreachable) as refused:
        await connect("127.0.0.1:9")
    assert str(refused.value) == (
        "cannot reach Temporal at 127.0.0.1:9: nothing listens there (connection refused)"
    )
    assert isinstance(refused.value, RuntimeError) and refused.value.address == "127.0.0.1:9"
