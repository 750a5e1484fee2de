"""Auto-compaction: when a conversation nears the model's context window, the model sums it
up and the agent goes on from the summary, as Claude Code does (its `autoCompact`).

Without it a long agent's next call is refused as too long, and the agent fails with its work
half done. Decisions and texts only; the store side is activities/compaction.py and the
turn it happens at is in workflows/loop_model.py.
"""

from __future__ import annotations

import re

from agents.config import ModelSettings
from agents.messages import Message, TextBlock, ToolResultBlock, Usage

ANSWER_ROOM_CAP = 20_000
"""Tokens kept free for the answer, at most (Claude Code keeps min(max_tokens, 20,000))."""
BUFFER_TOKENS = 13_000
"""And a margin below that, so the call that crosses the line still fits (Claude Code's)."""
IMAGE_TOKENS = 1_600
PDF_TOKENS = 20_000
"""A PDF's length is not known where it is counted: ten pages' worth."""
SUMMARY_ENDS = frozenset({"end_turn", "max_tokens", "stop_sequence"})
"""How a summary's answer may end (max_tokens: what came is kept)."""
UNTAGGED_MIN = 500
"""A summary without the tags asked for must be at least this long: a conversation that
filled the window is never summed up in a line, and a line ("I can't help with that") would
replace all of it."""
TOO_LONG_MESSAGES = ("prompt is too long", "exceed context limit")
MAX_FAILURES = 3
"""Compactions that gave no summary in a row, after which the agent stops asking (each is a
model call over the whole conversation)."""

COMPACT_PROMPT = """\
CRITICAL: Respond with TEXT ONLY. Do NOT call any tools: this answer is a summary, and any \
tool call in it is ignored.

Your task is to create a detailed summary of the conversation so far, paying close attention \
to the user's explicit requests and your previous actions. The summary replaces the \
conversation: you will continue from it with no other memory of what came before, so capture \
every technical detail, code pattern and decision you need to go on without losing context.

First think in <analysis> tags: go through the conversation in order and note the requests, \
your approach, the decisions, the file names, code and function signatures, the errors and \
how they were fixed, and anything the user asked you to do differently.

Then write the summary in <summary> tags, with these sections:
1. Primary Request and Intent: everything the user asked for, in detail.
2. Key Technical Concepts: technologies, frameworks and patterns that matter.
3. Files and Code Sections: the files read, changed or created, why each matters, with the \
code snippets that are needed to go on.
4. Errors and Fixes: what went wrong and how it was fixed, including user feedback.
5. Problem Solving: what was solved and what is still being worked out.
6. All User Messages: every message from the user that is not a tool result.
7. Pending Tasks: what you were asked to do and have not done yet.
8. Current Work: precisely what you were doing just before this request, with file names and \
code.
9. Optional Next Step: the next step in line with the most recent request, quoting it where \
that keeps the task from drifting. Leave this out if the last task was done."""

CONTINUATION = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n{summary}\n\n"
    "Please continue the conversation from where we left it off without asking the user any "
    "further questions. Continue with the last task that you were asked to work on."
)

_ANALYSIS = re.compile(r"<analysis>.*?(</analysis>|$)", re.DOTALL)
_SUMMARY = re.compile(r"<summary>(.*?)(</summary>|$)", re.DOTALL)


def compact_at(settings: ModelSettings, max_tokens: int) -> int | None:
    """The context size, in tokens, at which the conversation is compacted; None: never."""
    if settings.auto_compact_tokens is not None:
        return settings.auto_compact_tokens or None
    return settings.context_window - min(max_tokens, ANSWER_ROOM_CAP) - BUFFER_TOKENS


def context_tokens(usage: Usage) -> int:
    """How much of the window a call's conversation takes once its answer is in it."""
    return usage.prompt_tokens + usage.output_tokens


def estimate_tokens(messages: list[Message], media: list[bool] | None = None) -> int:
    """What `messages` add to the next request, about: 4 characters of text a token, and
    for each of `media` (True: a PDF) what the API charges a large image, or a PDF of ten
    pages. Tool results not sent yet can be most of it (three parallel Reads of a big file,
    ~75,000 tokens). From the texts alone, not from the messages' JSON: a field added to a
    message must not change, on replay, whether a recorded run compacted."""
    chars = sum(_chars(block) for m in messages for block in m.content)
    return chars // 4 + sum(PDF_TOKENS if pdf else IMAGE_TOKENS for pdf in media or [])


def _chars(block: object) -> int:
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ToolResultBlock):
        if isinstance(block.content, str):
            return len(block.content)
        return sum(_chars(part) for part in block.content)
    return 0


def due(
    history: int, waiting: int, failures: int, settings: ModelSettings, max_tokens: int
) -> bool:
    """Whether the next model call is preceded by a compaction: its conversation so far
    (`history`, measured by the last call) and what waits to go with it reach the line,
    and a summary can bring it below: there is a conversation to sum up, and what waits
    (kept whole) is not over the line by itself."""
    limit = compact_at(settings, max_tokens)
    if limit is None or failures >= MAX_FAILURES or history == 0:
        return False
    return history + waiting >= limit and waiting < limit


def too_long(error_type: str | None, details: object) -> bool:
    """Whether a failed model call was refused because its conversation does not fit the
    window: a 400 whose message says so (`prompt is too long: N tokens > M maximum`, or the
    input and `max_tokens` together over the limit). Nothing else a summary could mend."""
    if error_type != "ModelRequestRejected" or not isinstance(details, dict):
        return False
    message = str(details.get("api_message", "")).lower()
    return details.get("status") == 400 and any(s in message for s in TOO_LONG_MESSAGES)


def summary_of(reply: Message, stop_reason: str | None) -> str:
    """The summary in the model's answer, or "" if it is none, since it replaces the whole
    conversation: the text in its <summary> tags (without the <analysis> before it), or an
    untagged text of at least UNTAGGED_MIN characters; nothing from an answer that did not
    end as an answer does (a refusal)."""
    if stop_reason not in SUMMARY_ENDS:
        return ""
    text = _ANALYSIS.sub("", reply.text())
    found = _SUMMARY.search(text)
    if found:
        return found.group(1).strip()
    return text.strip() if len(text.strip()) >= UNTAGGED_MIN else ""


def continuation(summary: str) -> Message:
    """The message a compacted conversation starts with."""
    return Message.user_text(CONTINUATION.format(summary=summary))


def is_continuation(message: Message) -> bool:
    """Whether `message` is the summary an earlier compaction started the conversation with."""
    opening = CONTINUATION.split("{summary}")[0]
    return message.role == "user" and message.text().startswith(opening)
