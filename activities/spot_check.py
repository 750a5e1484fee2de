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
    runs, outputs = tool_runs(messages)
    return unbacked(checks, runs, outputs)


def tool_runs(messages: Sequence[Message]) -> tuple[list[CommandRun], list[str]]:
    """The Bash calls of a conversation with what each returned, and every tool's output."""
    commands: dict[str, str] = {}
    runs: list[CommandRun] = []
    outputs: list[str] = []
    for message in messages:
        if isinstance(message.content, str):
            continue
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name == "Bash":
                commands[block.id] = str(block.input.get("command", ""))
            elif isinstance(block, ToolResultBlock):
                text = _text(block)
                outputs.append(text)
                if block.tool_use_id in commands:
                    runs.append(CommandRun(command=commands[block.tool_use_id], output=text))
    return runs, outputs


def _text(block: ToolResultBlock) -> str:
    if isinstance(block.content, str):
        return block.content
    return "\n".join(p.text for p in block.content if isinstance(p, TextBlock))
