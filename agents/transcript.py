"""A conversation held by reference.

The transcript lives in the content-addressed store as a chain of nodes, each naming its
predecessor, like commits. A workflow carries only the head's name and the message count,
so the bytes it records per turn do not depend on how long the conversation already is,
and a fork or a resumed run can continue from any head without copying it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TranscriptRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    head: str | None = None
    """Name of the newest node; None for an empty transcript."""
    length: int = 0
    """Number of messages in the whole chain."""
