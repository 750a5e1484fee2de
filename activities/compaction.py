"""The store side of a compaction (agents/compaction.py): what the model is asked to sum up,
and the new conversation its summary starts.

The agent's last answer is kept as it is, after the summary, and so are the tool results
that answer it (the workflow sends them with the next call): the model goes on from its own
last step with what that step returned in full, not from a summary of it.
"""

from __future__ import annotations

from activities import transcripts
from activities.store import BlobStore
from agents.compaction import COMPACT_PROMPT, continuation, is_continuation
from agents.messages import Message
from agents.transcript import TranscriptRef
from agents.transcript_repair import for_the_api, repair_transcript


def split_last_answer(messages: tuple[Message, ...]) -> tuple[list[Message], Message | None]:
    """The conversation before the agent's last answer, and that answer (None if the
    conversation does not end with one)."""
    if messages and messages[-1].role == "assistant":
        return list(messages[:-1]), messages[-1]
    return list(messages), None


CUTS = 3
"""How many times a summary request the API refuses as too long is sent again with its oldest
quarter left out (Claude Code drops the oldest turns the same way)."""
OMITTED = (
    "[The oldest part of the conversation is left out here: with it, the request for a "
    "summary did not fit the model's window.]"
)


def to_summarize(
    store: BlobStore, ref: TranscriptRef, cuts: int = 0
) -> tuple[Message | None, list[Message]]:
    """The last answer, kept for the new conversation, and the messages the compaction call
    sends: the conversation before that answer (without its oldest `cuts` quarters), then
    the request for a summary. The request goes in the user turn that ends the conversation,
    with its tool results: the prefix the previous call sent is read from the prompt cache."""
    earlier, last = split_last_answer(transcripts.load(store, ref))
    if cuts:
        earlier = without_oldest(earlier, cuts)
    return last, for_the_api([*earlier, Message.user_text(COMPACT_PROMPT)])


def without_oldest(messages: list[Message], cuts: int) -> list[Message]:
    """`messages` without their oldest `cuts` quarters (at least `cuts` messages, never the
    last), said so; a tool call and its result are dropped together (`repair_transcript`).
    An earlier compaction's summary, which opens the conversation, stays: it is the most
    condensed part of it."""
    head = messages[:1] if messages and is_continuation(messages[0]) else []
    rest = messages[len(head) :]
    start = min(max(cuts, len(rest) * min(cuts, CUTS) // 4), max(len(rest) - 1, 0))
    return [*head, Message.user_text(OMITTED), *repair_transcript(rest[start:])]


def compacted(store: BlobStore, summary: str, last: Message | None) -> TranscriptRef:
    """A new conversation: the summary, then the last answer (its tool results follow in the
    next call, as they would have)."""
    kept = [continuation(summary), *([last] if last is not None else [])]
    return transcripts.append(store, TranscriptRef(), kept)
