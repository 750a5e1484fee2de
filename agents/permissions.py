"""What a permission mode lets an agent do, decided per tool call (spec R76, R80, R99).

Pure: the workflow asks before running a call and turns a refusal into an `is_error` tool
result the model can act on. Plan mode is the rule enforced here; the write activities check
the plan file again (resolved path, no symlinks), so neither layer alone is trusted.
"""

from __future__ import annotations

from pydantic import BaseModel

from agents.paths import normalize_path
from agents.tool_filter import WRITE_TOOLS

PLAN_MODE = "plan"
RESUME_MODES = ("default", "acceptEdits", "bypassPermissions", "dontAsk", "auto")
"""Modes a plan approval may continue in (not `plan`: that is what approval ends)."""
READ_ONLY_AGENT_TYPES = frozenset({"Explore", "Plan"})
"""The sub-agents a planning agent may still launch (R76); whatever their definition says,
they run with no write access and a read-only shell (see SubAgents)."""


def plan_mode_denial(tool: str, tool_input: BaseModel, plan_file: str, cwd: str) -> str | None:
    """Why `tool` may not run while planning, or None. Bash is allowed: it runs read-only."""
    if tool in WRITE_TOOLS:
        path = getattr(tool_input, "file_path", None) or getattr(tool_input, "notebook_path", "")
        if normalize_path(cwd, path) != plan_file:
            return (
                f"Plan mode is active: {tool} on {path} is not allowed. The only file you may "
                f"change is your plan, {plan_file}; edits to the code wait until the plan is "
                "approved (call ExitPlanMode when it is ready)."
            )
        return None
    if tool in ("Agent", "Task"):
        if getattr(tool_input, "isolation", None) == "worktree":
            return "Plan mode is active: a worktree is a new branch and directory; not now."
        agent_type = getattr(tool_input, "subagent_type", None) or "general-purpose"
        if agent_type not in READ_ONLY_AGENT_TYPES:
            allowed = ", ".join(sorted(READ_ONLY_AGENT_TYPES))
            return (
                f"Plan mode is active: only read-only agents ({allowed}) may be launched, "
                f"not {agent_type}."
            )
        return None
    if tool == "EnterPlanMode":
        return "You are already in plan mode."
    if tool == "EnterWorktree":
        return "Plan mode is active: a worktree is a new branch and directory; not now."
    if tool == "ExitWorktree" and getattr(tool_input, "action", None) == "remove":
        return (
            "Plan mode is active: removing the worktree waits until the plan is approved; "
            'action "keep" leaves it now.'
        )
    return None
