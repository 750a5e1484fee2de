"""The `fork` built-in (spec R11, R45-R50): a child that inherits its parent's conversation.

A fork reuses the parent's rendered system prompt, exact tool list and message history, so
its request is byte-identical to its siblings' up to one final block: its directive. That
shared prefix is what the prompt cache serves to forks 2..N.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.definition import AgentDefinition
from agents.messages import Message, TextBlock, ToolResultBlock

FORK_AGENT_TYPE = "fork"
FORK_QUERY_SOURCE = "agent:builtin:fork"
FORK_MAX_TURNS = 200
FORK_PLACEHOLDER_RESULT = "Fork started — processing in background"
FORK_BOILERPLATE_TAG = "fork-boilerplate"
FORK_DIRECTIVE_PREFIX = "Fork directive: "

DEFINITION = AgentDefinition(
    agent_type=FORK_AGENT_TYPE,
    when_to_use=(
        "A fork of yourself: inherits this whole conversation and works on one directive in "
        'the background. Omit subagent_type (or pass "fork") to fork.'
    ),
    system_prompt="",  # never rendered: a fork sends its parent's rendered prompt bytes
    tools=["*"],
    model="inherit",
    permission_mode="bubble",
    max_turns=FORK_MAX_TURNS,
    source="built-in",
)

BOILERPLATE = f"""<{FORK_BOILERPLATE_TAG}>
You are a forked worker, not the main agent. The conversation above is your parent's; you
share its context and carry out one directive, below. Rules:
- Ignore any guidance above about forking or delegating: do NOT spawn sub-agents.
- Do not converse, ask questions or suggest next steps, and write no text between tool
  calls: use your tools directly until the directive is done.
- If you change files, commit them and give the commit hash.
- Stay within the directive; mention anything out of scope in at most one sentence.
- Keep your report under 500 words. Begin it with "Scope:", and use these plain-text
  labels: Scope:, Result:, Key files:, Files changed: (only if you changed files, with the
  commit hash), Issues: (only if there are any).
</{FORK_BOILERPLATE_TAG}>"""


def directive_text(directive: str, worktree: tuple[str, str] | None = None) -> str:
    """The one block that differs between sibling forks (R48, R50)."""
    parts = [BOILERPLATE]
    if worktree is not None:
        parent_cwd, worktree_cwd = worktree
        parts.append(
            f"You inherited context from a parent working in {parent_cwd}. You work in an "
            f"isolated git worktree at {worktree_cwd}: the same repository and layout, a "
            "separate working copy. Translate paths from the context above to your worktree, "
            "re-read files before editing them, and know that your changes do not affect "
            "the parent's files."
        )
    parts.append(f"{FORK_DIRECTIVE_PREFIX}{directive}")
    return "\n\n".join(parts)


def fork_message(
    tool_use_ids: Sequence[str], directive: str, worktree: tuple[str, str] | None = None
) -> Message:
    """The fork's first user message: one identical placeholder result per tool_use of the
    parent's assistant message, then the directive (R46)."""
    results = [
        ToolResultBlock(tool_use_id=i, content=FORK_PLACEHOLDER_RESULT) for i in tool_use_ids
    ]
    return Message(
        role="user", content=[*results, TextBlock(text=directive_text(directive, worktree))]
    )


def is_in_fork_child(messages: Sequence[Message]) -> bool:
    """The fallback recursion guard (R49): a fork's boilerplate is in its conversation."""
    tag = f"<{FORK_BOILERPLATE_TAG}>"
    return any(
        isinstance(b, TextBlock) and tag in b.text
        for m in messages
        if m.role == "user"
        for b in m.content
    )
