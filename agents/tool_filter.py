"""The four tool-filter layers of a sub-agent's pool (spec R30-R33), as pure functions.

Order matters and follows Claude Code: the exceptions (MCP tools, ExitPlanMode in plan
mode, in-process teammate tools) are decided first, then layer 1 (meta tools no sub-agent
gets), layer 2 (the same for custom agents, kept separate so it can diverge), layer 3 (the
async whitelist), and finally the definition's own allow and deny lists (layer 4).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from agents.definition import AgentDefinition

ALL_AGENT_DISALLOWED_TOOLS: frozenset[str] = frozenset(
    {
        "TaskOutput",
        "ExitPlanMode",
        "EnterPlanMode",
        "Agent",
        "AskUserQuestion",
        "TaskStop",
        "Workflow",
    }
)
CUSTOM_AGENT_DISALLOWED_TOOLS: frozenset[str] = frozenset(ALL_AGENT_DISALLOWED_TOOLS)
ASYNC_AGENT_ALLOWED_TOOLS: frozenset[str] = frozenset(
    {
        "Read",
        "WebSearch",
        "TodoWrite",
        "Grep",
        "WebFetch",
        "Glob",
        "Bash",
        "PowerShell",
        "Edit",
        "Write",
        "NotebookEdit",
        "Skill",
        "SyntheticOutput",
        "StructuredOutput",
        "ToolSearch",
        "EnterWorktree",
        "ExitWorktree",
    }
)
IN_PROCESS_TEAMMATE_ALLOWED_TOOLS: frozenset[str] = frozenset(
    {"TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "SendMessage"}
)
WRITE_TOOLS: frozenset[str] = frozenset({"Write", "Edit", "NotebookEdit"})
KNOWN_TOOLS: frozenset[str] = (
    ALL_AGENT_DISALLOWED_TOOLS
    | ASYNC_AGENT_ALLOWED_TOOLS
    | IN_PROCESS_TEAMMATE_ALLOWED_TOOLS
    # Claude Code's others, which a definition may name: not slips for the ones above.
    | {"Task", "TaskCreate", "KillShell", "BashOutput", "MultiEdit", "LS", "NotebookRead"}
    | {"SlashCommand", "TeamCreate", "TeamDelete", "LSP", "Monitor", "Teammate"}
    | {"TodoRead", "KillBash", "SendUserMessage", "ListMcpResourcesTool", "ReadMcpResourceTool"}
    # Earlier names of Claude Code's, which a file may still use.
    | {"exit_plan_mode", "enter_plan_mode"}
)
"""Tool names a definition's `tools` and `disallowedTools` are checked against for slips."""

_AGENT_SPEC = re.compile(r"^(Agent|Task)\((.*)\)$")


class ResolvedTools(BaseModel):
    model_config = ConfigDict(frozen=True)

    tools: list[str]
    allowed_agent_types: list[str] | None = None
    """From `Agent(type1, type2)` in the definition's tools: the only types it may spawn."""


def filter_tools_for_agent(
    tools: Sequence[str],
    *,
    is_built_in: bool,
    is_async: bool,
    permission_mode: str | None,
    is_in_process_teammate: bool = False,
    allow_nested_agents: bool = False,
) -> list[str]:
    """Layers 1-3 over the full base pool, keeping the pool's order (R30-R32)."""
    layer1 = ALL_AGENT_DISALLOWED_TOOLS - ({"Agent"} if allow_nested_agents else set())
    layer2 = CUSTOM_AGENT_DISALLOWED_TOOLS - ({"Agent"} if allow_nested_agents else set())
    kept: list[str] = []
    for name in tools:
        if name.startswith("mcp__"):
            kept.append(name)
        elif name == "ExitPlanMode" and permission_mode == "plan":
            kept.append(name)
        elif is_in_process_teammate and (
            name == "Agent" or name in IN_PROCESS_TEAMMATE_ALLOWED_TOOLS
        ):
            kept.append(name)
        elif name in layer1 or (not is_built_in and name in layer2):
            continue
        elif is_async and name not in ASYNC_AGENT_ALLOWED_TOOLS:
            continue
        else:
            kept.append(name)
    return kept


def resolve_agent_tools(definition: AgentDefinition, available: Sequence[str]) -> ResolvedTools:
    """Layer 4: the definition's `tools` allowlist, then its `disallowedTools` (R33)."""
    allowed_types: list[str] | None = None
    if definition.allows_all_tools():
        chosen = list(available)
    else:
        wanted: set[str] = set()
        for spec in definition.tools or []:
            match = _AGENT_SPEC.match(spec.strip())
            if match:
                wanted.add("Agent")
                allowed_types = [t.strip() for t in match.group(2).split(",") if t.strip()]
            else:
                wanted.add("Agent" if spec.strip() == "Task" else spec.strip())
        chosen = [name for name in available if name in wanted]
    denied = {"Agent" if d == "Task" else d for d in definition.disallowed_tools}
    return ResolvedTools(
        tools=[name for name in chosen if name not in denied],
        allowed_agent_types=allowed_types,
    )


def is_read_only(tools: Sequence[str], permission_mode: str | None = None) -> bool:
    """An agent that can write no file through a tool must not write through Bash either."""
    return permission_mode == "plan" or not (WRITE_TOOLS & set(tools))
