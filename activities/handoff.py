"""The hand-off classifier activity (spec R42).

It is an activity, not a workflow-side call, so a stronger judge (an LLM call, a hosted
classifier) can replace the rules later without touching workflow code or its histories. The
caller fails open: if this activity errors or times out, the child's result is still
delivered, with `HANDOFF_UNAVAILABLE` prepended.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from agents.handoff import classify_handoff_text


class HandoffInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    """The sub-agent's output (or transcript) as plain text."""
    agent_type: str = ""
    """The sub-agent's type; unused by the rules, kept for a future judge and for tracing."""


class HandoffVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    flagged: bool
    reasons: list[str] = []


@activity.defn(name="classifier.classify_handoff")
async def classify_handoff(inp: HandoffInput) -> HandoffVerdict:
    """Decide whether a sub-agent's output tries to instruct its parent.

    Rule-based for now (`agents.handoff.classify_handoff_text`); an LLM judge can be plugged
    in here later behind the same input and verdict, e.g. run only when the rules are unsure.
    """
    # A whole transcript can be megabytes; the regex scan runs off the event loop.
    reasons = await asyncio.to_thread(classify_handoff_text, inp.text)
    return HandoffVerdict(flagged=bool(reasons), reasons=reasons)
