"""The store side of a compaction (agents/compaction.py): what the model is asked to sum up,
and the new conversation its summary starts.

The agent's last answer is kept as it is, after the summary, and so are the tool results
that answer it (the workflow sends them with the next call): the model goes on from its own
last step with what that step returned in full, not from a summary of it.
"""

from __future__ import annotations

from activities import transcripts
from activities.store import BlobStore
from agents.compaction import COMPACT_PROMPT, continuation
from agents.messages import Message
from agents.transcript import TranscriptRef
from agents.transcript_repair import for_the_api


def split_last_answer(messages: tuple[Message, ...]) -> tuple[list[Message], Message | None]:
    """The conversation before the agent's last answer, and that answer (None if the
    conversation does not end with one)."""
    if messages and messages[-1].role == "assistant":
        return list(messages[:-1]), messages[-1]
    return list(messages), None


def to_summarize(store: BlobStore, ref: TranscriptRef) -> tuple[Message | None, list[Message]]:
    """The last answer, kept for the new conversation, and the messages the compaction call
    sends: the conversation before that answer, then the request for a summary. The request
    goes in the user turn that ends the conversation, with its tool results: the prefix the
    previous call sent is read from the prompt cache."""
    earlier, last = split_last_answer(transcripts.load(store, ref))
    return last, for_the_api([*earlier, Message.user_text(COMPACT_PROMPT)])


def compacted(store: BlobStore, summary: str, last: Message | None) -> TranscriptRef:
    """A new conversation: the summary, then the last answer (its tool results follow in the
    next call, as they would have)."""
    kept = [continuation(summary), *([last] if last is not None else [])]
    return transcripts.append(store, TranscriptRef(), kept)
