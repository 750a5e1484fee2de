"""The activity behind R82's spot-check (agents/spot_check.py): what a verifier really ran,
read from its conversation in the store, against the passing checks of its report."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities import transcripts
from activities.store import default_store
from agents.builtin.verification import Check
from agents.compaction import is_continuation
from agents.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agents.spot_check import CommandRun, unbacked
from agents.transcript import TranscriptRef


class SpotCheckInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    transcript: TranscriptRef
    """The verifier's conversation as it ended."""
    checks: list[Check]


@activity.defn(name="verification.spot_check")
async def spot_check(req: SpotCheckInput) -> str:
    """Why the report's PASS does not stand (a passing check never run, or its output never
    printed); "" if it does. Reads only: a retry gives the same answer."""

    def load() -> str:
        return judge(transcripts.load(default_store(), req.transcript), req.checks)

    return await asyncio.to_thread(load)


def judge(messages: Sequence[Message], checks: Sequence[Check]) -> str:
    """`unbacked` for a conversation; "" (not judged) for one that was compacted: the calls
    before the compaction are gone from it, and a check run then would read as never run."""
    if any(is_continuation(m) for m in messages):
        return ""
    runs, later = tool_runs(messages)
    return unbacked(checks, runs, later)


OUTPUT_TOOLS = frozenset({"TaskOutput", "BashOutput", "AgentOutputTool"})
"""The tools through which a background command's output comes (T11 and its aliases)."""


def tool_runs(messages: Sequence[Message]) -> tuple[list[CommandRun], list[str]]:
    """The Bash calls of a conversation with what each returned, and what its TaskOutput
    calls returned."""
    calls: dict[str, ToolUseBlock] = {}
    runs: list[CommandRun] = []
    later: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                calls[block.id] = block
            elif isinstance(block, ToolResultBlock) and (call := calls.get(block.tool_use_id)):
                if call.name == "Bash":
                    command = str(call.input.get("command", ""))
                    runs.append(CommandRun(command=command, output=_text(block)))
                elif call.name in OUTPUT_TOOLS:
                    later.append(_text(block))
    return runs, later


def _text(block: ToolResultBlock) -> str:
    if isinstance(block.content, str):
        return block.content
    return "\n".join(p.text for p in block.content if isinstance(p, TextBlock))
