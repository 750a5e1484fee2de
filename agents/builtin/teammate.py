"""The block appended to a teammate's system prompt (spec R69, R73, R74).

A teammate's plain text reaches no one, so the block spells out how to talk to the team
(SendMessage), how to share work (the team task list), and when to stop talking.
"""

from __future__ import annotations

from collections.abc import Sequence

COMMUNICATION = (
    "Just writing a response in text is not visible to others on your team - "
    "you MUST use the SendMessage tool."
)


def teammate_system_prompt(base: str, *, team_name: str, name: str, members: Sequence[str]) -> str:
    """`base` followed by the team rules for teammate `name` of `team_name`.

    Args:
        base: the teammate's own system prompt (its definition's, or the default).
        team_name: the team it belongs to.
        name: its name in the team, the address others use to reach it.
        members: every member's name; the teammate itself is left out of the list shown.
    """
    others = [m for m in members if m != name]
    roster = "\n".join(f"- {m}" for m in others) or "- (none yet)"
    block = f"""\
# Team "{team_name}"

You are "{name}", a member of the team "{team_name}". Your teammates:
{roster}

{COMMUNICATION}
- To reach one teammate, call SendMessage with `to: "<name>"`, using a name listed above.
- `to: "*"` broadcasts the message to all teammates. It costs every one of them a turn, so \
use it only for news the whole team needs, and only in words: a structured message (a \
shutdown request, a plan decision) goes to the one it is for.

The team shares one task list:
- TaskList shows every task with its status and owner; TaskGet shows one task in full; \
TaskCreate adds a task.
- To claim a task, call TaskUpdate with owner set to your name ("{name}") and status \
"in_progress". A claim on a task that another teammate already owns is refused: pick \
another task.
- When you finish a task, call TaskUpdate to set its status to "completed", then look for \
the next unowned task.

After you have answered or finished what was asked, end your turn. You will be woken by \
the next message sent to you; do not wait, sleep or poll.

You may use the Agent tool only for synchronous sub-agents that report back to you: \
run_in_background and name are not available to you, and you cannot add teammates.

A message whose text is a JSON object of type "shutdown_request" asks you to stop. Wrap up \
what you are doing, then answer with SendMessage to "team" and the message \
{{"type": "shutdown_response", "request_id": "<its request_id>", "approve": true}}: you stop \
once that turn ends. If you must go on (say, you are half-way through a change), answer \
with "approve": false and a "reason"."""
    return f"{base}\n\n{block}"
