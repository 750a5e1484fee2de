"""Where an ended agent's worktree session stood, read from its conversation: its end left
the worktree (kept if it held changes, removed if not), and a resumed run works in the main
checkout. The conversation's last word was "The session now works in the worktree", so the
resumed agent wrote to the main checkout, on its branch, untold (a user test, 2026-12-07).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from agents.messages import Message, TextBlock, ToolResultBlock

ENTERED = re.compile(
    r"^(?:Created a worktree|Switched to the existing worktree) at (?P<path>.+?) on branch "
    r"(?P<branch>\S+)\. The session now works in the worktree"
)
LEFT = (
    "Left the worktree",
    "Removed the worktree",
    "Your worktree session ended",
    "(Your last run ended while you worked in the worktree",
)
"""What ExitWorktree's results, a continued run's note (`worktree_session.left_note`, in a
system reminder) and this module's own note (in the message that resumed it) say."""


def _texts(message: Message) -> Iterable[str]:
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            if isinstance(block.content, str):
                yield block.content
            else:
                yield from (p.text for p in block.content if isinstance(p, TextBlock))
        elif isinstance(block, TextBlock) and message.role == "user":
            yield block.text


def session_worktree(messages: Iterable[Message]) -> tuple[str, str] | None:
    """The worktree (path, branch) the conversation was working in when it ended, if any."""
    at: tuple[str, str] | None = None
    for message in messages:
        for text in _texts(message):
            if entered := ENTERED.match(text):
                at = (entered["path"], entered["branch"])
            elif any(said in text for said in LEFT):
                at = None
    return at


def left_worktree_note(messages: Iterable[Message], root: str, here: bool = True) -> str | None:
    """For the message that resumes the agent: where it works now, and where its worktree
    is, if its last run ended in one. `here`: the checkout is on this machine, to look."""
    at = session_worktree(messages)
    if at is None:
        return None
    path, branch = at
    if not here:
        fate = f"it is kept there, on branch {branch}, if it held changes, and removed if not"
    elif Path(path).is_dir():
        fate = f"it is kept there, on branch {branch}"
    else:
        fate = "it was removed, as nothing in it had changed"
    return (
        f"(Your last run ended while you worked in the worktree {path}: {fate}. This run "
        f"works in {root}, not in the worktree; call EnterWorktree with name "
        f"{Path(path).name} to work there again.)"
    )
