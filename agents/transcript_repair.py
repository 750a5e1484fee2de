"""Making a stopped agent's transcript valid to continue (R66).

An agent killed mid-round leaves tool_use blocks without results, and an interrupted turn
can leave a thinking-only or blank assistant message; the API refuses all three. The
filters mirror Claude Code's `filterUnresolvedToolUses`, `filterOrphanedThinkingOnlyMessages`
and `filterWhitespaceOnlyAssistantMessages`.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.messages import (
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def _result_ids(message: Message | None) -> set[str]:
    if message is None or message.role != "user":
        return set()
    return {b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)}


def _keep_assistant(message: Message) -> bool:
    thinking_only = all(
        isinstance(b, ThinkingBlock | RedactedThinkingBlock) for b in message.content
    )
    blank = all(isinstance(b, TextBlock) and not b.text.strip() for b in message.content)
    return bool(message.content) and not thinking_only and not blank


def for_the_api(messages: Sequence[Message]) -> list[Message]:
    """`messages` as a request may carry them: blank text blocks out of assistant messages,
    and assistant messages with nothing else left out. The API answers a turn with no content
    now and then, and refuses it (and a blank text block) in a later request: an agent that
    got one and went on (mail, a notification) failed its next call."""
    sent: list[Message] = []
    for message in messages:
        if message.role == "assistant":
            content = [b for b in message.content if not isinstance(b, TextBlock) or b.text.strip()]
            if not _keep_assistant(Message(role="assistant", content=content)):
                continue
            if len(content) != len(message.content):
                message = Message(role="assistant", content=content)
        sent.append(message)
    return sent


def repair_transcript(messages: Sequence[Message]) -> list[Message]:
    """`messages` without unresolved tool uses, thinking-only or blank assistant messages,
    and without tool results whose tool use was dropped."""
    kept: list[Message] = []
    for i, message in enumerate(messages):
        if message.role == "assistant":
            answered = _result_ids(messages[i + 1] if i + 1 < len(messages) else None)
            content = [
                b for b in message.content if not isinstance(b, ToolUseBlock) or b.id in answered
            ]
            message = Message(role="assistant", content=content)
            if not _keep_assistant(message):
                continue
        else:
            asked = {
                b.id
                for b in (kept[-1].content if kept and kept[-1].role == "assistant" else [])
                if isinstance(b, ToolUseBlock)
            }
            content = [
                b
                for b in message.content
                if not isinstance(b, ToolResultBlock) or b.tool_use_id in asked
            ]
            if not content:
                continue
            message = Message(role="user", content=content)
        if kept and kept[-1].role == message.role:
            kept[-1] = Message(role=message.role, content=[*kept[-1].content, *message.content])
        else:
            kept.append(message)
    return kept
