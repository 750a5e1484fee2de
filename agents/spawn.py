"""Decisions of the spawn pipeline (spec R4, R13, R14, R18, R23), as pure functions."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from agents.config import OutlastConfig
from agents.definition import AgentDefinition, DefinitionSet

FORK = "fork"
_RULE = re.compile(r"^(?:Agent|Task)\((?P<type>[^)]+)\)$")
NON_OVERRIDABLE_PARENT_MODES = frozenset({"bypassPermissions", "acceptEdits"})


def new_agent_id(bits: int) -> str:
    """`a` + 16 lowercase hex digits (R2), from 64 random bits drawn by the workflow."""
    return f"a{bits & (2**64 - 1):016x}"


def not_found_message(
    agent_type: str, available: Sequence[str], skipped: Sequence[str] = (), guess: bool = False
) -> str:
    """R13's wording; with the definition files that failed to load, since the one asked
    for may be among them (a YAML error in its frontmatter, say). With `guess` (a person's
    command line, not the model's tool result, whose words are R13's), the type probably
    meant: `--teammate x:Explor` had only the list to go by."""
    meant = _meant(agent_type, available) if guess else ""
    text = f"Agent type '{agent_type}' not found{meant}. Available agents: {', '.join(available)}"
    if skipped:
        text += f". Agent definitions that could not be loaded: {'; '.join(skipped)}"
    return text


def _meant(agent_type: str, available: Sequence[str]) -> str:
    same = [a for a in available if a.lower() == agent_type.lower()]
    close = same or difflib.get_close_matches(agent_type, list(available), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def fork_enabled(config: OutlastConfig) -> bool:
    """Whether omitting `subagent_type` forks (R13); a coordinator never forks."""
    return config.features.fork_subagent and not config.features.coordinator_mode


def resolve_agent_type(
    requested: str | None,
    definitions: DefinitionSet,
    config: OutlastConfig,
    allowed_types: Sequence[str] | None = None,
) -> AgentDefinition | str:
    """The definition to spawn, `FORK` for the fork path, or an error message (R13)."""
    forking = fork_enabled(config)
    if requested is None:
        if forking:
            return FORK
        requested = "general-purpose"
    if requested == FORK and forking:
        return FORK
    for rule in config.agents.deny_rules:
        match = _RULE.match(rule.strip())
        if match and match.group("type").strip() == requested:
            return f"Agent type '{requested}' has been denied by permission rule '{rule}'"
    if allowed_types is not None and requested not in allowed_types:
        return (
            f"Agent type '{requested}' has been denied by permission rule "
            f"'Agent({', '.join(allowed_types)})'"
        )
    found = definitions.get(requested)
    if found is None:
        return not_found_message(requested, definitions.names(), definitions.errors)
    return found


def resolve_child_model(
    argument: str | None, definition: AgentDefinition, config: OutlastConfig, parent_model: str
) -> str:
    """Tool argument > definition > default sub-agent model > the parent's model (R14)."""
    for choice in (argument, definition.model, config.agents.subagent_model):
        if choice and choice != "inherit":
            return config.resolve_model(choice)
        if choice == "inherit":
            return parent_model
    return parent_model


def should_run_async(
    run_in_background: bool | None, definition: AgentDefinition, config: OutlastConfig
) -> bool:
    """R18: background unless background tasks are disabled."""
    if config.agents.background_tasks_disabled:
        return False
    return bool(
        run_in_background
        or definition.background
        or config.features.coordinator_mode
        or config.features.fork_subagent
        or config.agents.assistant_force_async
        or (run_in_background is None and config.agents.default_background)
    )


def child_permission_mode(parent_mode: str, definition: AgentDefinition) -> str:
    """R23(b): a child definition cannot downgrade a parent in acceptEdits/bypassPermissions."""
    if parent_mode in NON_OVERRIDABLE_PARENT_MODES:
        return parent_mode
    return definition.permission_mode or "acceptEdits"


def depth_error(parent_depth: int, config: OutlastConfig) -> str | None:
    """R4: refuse a spawn whose child would be deeper than the limit."""
    limit = config.agents.depth_limit()
    if parent_depth + 1 > limit:
        return f"Agent nesting depth limit reached (max_depth={limit})"
    return None


def definitions_for_child(tools: Sequence[str] | None, definitions: DefinitionSet) -> DefinitionSet:
    """The agent definitions a child's input carries: all of them for a child that may spawn
    agents itself (it lists them in its Agent tool and resumes its own children with them),
    none for one without the Agent tool. An empty set, not None: None would make the child
    load them again by activity. They were ~60% of a child's start input (issue 9)."""
    if tools is not None and "Agent" not in tools:
        return DefinitionSet(definitions=[])
    return definitions
