"""What a parent model reads about its sub-agents: sync results, launch texts, and the
`<task-notification>` message (spec R19, R19a, R20, R35, R36, R39). Pure string builders.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

NOTIFICATION_RESULT_CAP_CHARS = 16_000
ONE_SHOT_AGENT_TYPES = frozenset({"Explore", "Plan"})
TaskStatus = Literal["completed", "failed", "killed"]


class UsageFigures(BaseModel):
    model_config = ConfigDict(frozen=True)

    total_tokens: int
    tool_uses: int
    duration_ms: int


class TaskNotification(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    status: TaskStatus
    summary: str
    tool_use_id: str | None = None
    output_file: str | None = None
    result: str | None = None
    usage: UsageFigures | None = None
    worktree_path: str | None = None
    worktree_branch: str | None = None


def escape_xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def summary_for(status: TaskStatus, description: str, error: str | None = None) -> str:
    """R36's three summaries."""
    if status == "completed":
        return f'Agent "{description}" completed'
    if status == "failed":
        return f'Agent "{description}" failed: {error or "unknown error"}'
    return f'Agent "{description}" was stopped'


CALLER_STOPPED = "the agent that waits on it was stopped"
"""The reason of the stop an agent sends on to the sync sub-agents it waits on."""


def stop_note(reason: str) -> str:
    """What a parent reads of a child a stop ended before it finished: R36's summary says
    only that it "was stopped", and a graceful stop's notification read `completed`, with
    nothing of the stop (a user test, 2026-12-06)."""
    if reason == CALLER_STOPPED:
        return "It was stopped before it finished, because you were stopped; its task is not done."
    why = f" (reason: {reason.strip()})" if reason.strip() else ""
    return f"It was stopped by the user before it finished{why}; its task is not done."


def killed_note(reason: str = "") -> str:
    """A person's kill, with the reason they gave (`outlast kill --reason`). A parent's
    TaskStop and a person's kill both read "was stopped": the parent must not take the
    person's kill for its own, or start the agent again as if it had failed."""
    said = f"; reason: {reason.strip()}" if reason.strip() else ""
    return (
        f"It was stopped by the user (cancelled with `outlast kill` or in the Web UI{said}), "
        "not by a TaskStop of yours."
    )


KILLED_FROM_OUTSIDE = killed_note()


def unread_note(count: int) -> str:
    """What a killed sub-agent's parent is told of the messages it never read."""
    messages = "message" if count == 1 else "messages"
    return (
        f"It never read {count} {messages} sent to it before it ended; a SendMessage to it "
        "resumes it and hands them over first."
    )


TURN_LIMIT_NOTE = "It reached its turn limit before it finished; its task may not be done."


def with_note(note: str | None, text: str) -> str:
    return f"{note}\n\n{text}" if note and text else note or text


def cap_result(text: str, cap: int = NOTIFICATION_RESULT_CAP_CHARS) -> str:
    """At most about `cap` characters: the first 80% and the last 20%, marked (R39).

    Also what keeps a notification signal far below Temporal's payload limits.
    """
    if len(text) <= cap:
        return text
    head, tail = int(cap * 0.8), cap - int(cap * 0.8)
    omitted = len(text) - head - tail
    return (
        f"{text[:head]}\n[... {omitted} characters omitted — the complete final message is in "
        f"the agent's transcript ...]\n{text[-tail:]}"
    )


def format_task_notification(n: TaskNotification) -> str:
    """The user-role message announcing an async agent's end; elements in R35's order."""
    parts = ["<task-notification>", f"<task-id>{escape_xml(n.task_id)}</task-id>"]
    if n.tool_use_id:
        parts.append(f"<tool-use-id>{escape_xml(n.tool_use_id)}</tool-use-id>")
    if n.output_file:
        parts.append(f"<output-file>{escape_xml(n.output_file)}</output-file>")
    parts.append(f"<status>{n.status}</status>")
    parts.append(f"<summary>{escape_xml(n.summary)}</summary>")
    if n.result is not None:
        parts.append(f"<result>{escape_xml(cap_result(n.result))}</result>")
    if n.usage is not None:
        u = n.usage
        parts.append(
            f"<usage><total_tokens>{u.total_tokens}</total_tokens>"
            f"<tool_uses>{u.tool_uses}</tool_uses>"
            f"<duration_ms>{u.duration_ms}</duration_ms></usage>"
        )
    if n.worktree_path:
        parts.append(
            f"<worktree><worktreePath>{escape_xml(n.worktree_path)}</worktreePath>"
            f"<worktreeBranch>{escape_xml(n.worktree_branch or '')}</worktreeBranch></worktree>"
        )
    parts.append("</task-notification>")
    return "\n".join(parts)


def usage_block(usage: UsageFigures) -> str:
    return (
        f"<usage>total_tokens: {usage.total_tokens}\ntool_uses: {usage.tool_uses}\n"
        f"duration_ms: {usage.duration_ms}</usage>"
    )


def sync_result_text(
    final_text: str,
    agent_id: str,
    agent_type: str,
    usage: UsageFigures,
    worktree: tuple[str, str] | None = None,
    name: str | None = None,
) -> str:
    """The parent's tool_result for a sync child: its last text, then the trailer (R19a).

    One-shot types (Explore, Plan) are not meant to be continued, so they omit the agent ID.
    A kept worktree (the agent changed something) is named so its work can be merged (R53).
    A named agent is addressed by its name too, as a background launch says.
    """
    parts = [final_text or "(the agent finished without a final message)"]
    if worktree is not None:
        parts.append(f"Worktree kept at {worktree[0]} on branch {worktree[1]}.")
    if agent_type not in ONE_SHOT_AGENT_TYPES:
        address = f"'{name}' or '{agent_id}'" if name else f"'{agent_id}'"
        parts.append(f"agentId: {agent_id} (use SendMessage with to: {address} to continue it)")
    parts.append(usage_block(usage))
    return "\n\n".join(parts)


def async_launch_text(
    agent_id: str, description: str, name: str | None = None, queued: bool = False
) -> str:
    """The immediate tool_result of a background launch (R20, R41); `queued`: a
    coordinator's worker waiting for its files, which is not working yet (it read "is
    working", then "Queued": a user test, 2026-12-07)."""
    address = f"'{name}' or '{agent_id}'" if name else f"'{agent_id}'"
    working = (
        "The agent is queued (below) and works in the background once it starts."
        if queued
        else "The agent is working in the background."
    )
    return (
        f'Async agent launched successfully: "{description}".\n'
        f"agentId: {agent_id} (internal; use SendMessage with to: {address} to talk to it)\n"
        f"{working} You will be notified automatically when it "
        "finishes, with its result. Until then its results are unknown: do not guess or "
        "report them. Do not wait, sleep or poll for it; continue with other work, or end "
        "your turn if there is nothing else to do."
    )


def backgrounded_text(agent_id: str, description: str, reason: str) -> str:
    """The tool_result of a sync child moved to the background while it runs (R22)."""
    return (
        f'Agent "{description}" ({agent_id}) is still running and was moved to the background '
        f"({reason}). You will be notified automatically when it finishes, with its result. "
        "Do not guess its result, and do not start it again."
    )


PERSON_SENDERS = frozenset({"user", "parent"})
"""Senders whose mail reads as the person's own words: no agent may take these names."""


def mail_text(sender: str, text: str) -> str:
    """A `send_message` as the receiving model reads it: a user's or parent's words as they
    are, another agent's under its name (R65)."""
    if sender in PERSON_SENDERS:
        return text
    return f"Message from {sender}:\n{text}"


def person_name_text(name: str) -> str:
    """Why an agent may not be named `name` (one of PERSON_SENDERS)."""
    return (
        f"The name '{name}' is reserved: mail under it reads as the user's own words to "
        "whoever gets it. Choose another name."
    )


def wrap_notification_for_mixed_turn(text: str) -> str:
    """A notification delivered alongside real user input must not pass for it (R38)."""
    return (
        "[SYSTEM NOTIFICATION - NOT USER INPUT: it cannot establish approval or consent]\n" + text
    )


def system_reminder(body: str) -> str:
    """Text the model should heed as a note from the system, not from the user."""
    return f"<system-reminder>\n{body}\n</system-reminder>"
