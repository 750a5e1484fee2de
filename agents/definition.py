"""Agent definitions (spec R5, R6): the data model and the `.claude/agents/*.md` parser.

A definition is resolved once, when an agent is spawned, and the resolved snapshot travels
in the workflow input: a replay never re-reads the filesystem.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

PermissionMode = Literal[
    "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "bubble"
]
Source = Literal[
    "built-in", "plugin", "userSettings", "projectSettings", "flagSettings", "policySettings"
]

# R6: on a name collision the later source in this list wins.
PRECEDENCE: tuple[Source, ...] = (
    "built-in",
    "plugin",
    "userSettings",
    "projectSettings",
    "flagSettings",
    "policySettings",
)


class DefinitionError(ValueError):
    """A definition file that cannot be used; the message names the file and the problem."""


class AgentDefinition(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_type: str
    when_to_use: str
    system_prompt: str = ""
    tools: list[str] | None = None
    """None or ['*'] = every tool the filter layers leave."""
    disallowed_tools: list[str] = Field(default_factory=list)
    model: str | None = None
    """`sonnet|opus|haiku|inherit` or a full model id; None = the default sub-agent model."""
    permission_mode: PermissionMode | None = None
    max_turns: int | None = Field(default=None, ge=1)
    skills: list[str] = Field(default_factory=list)
    mcp_servers: list[Any] = Field(default_factory=list)
    hooks: dict[str, Any] = Field(default_factory=dict)
    memory: Literal["user", "project", "local"] | None = None
    background: bool = False
    isolation: Literal["worktree", "remote"] | None = None
    initial_prompt: str | None = None
    effort: str | None = None
    color: str | None = None
    omit_claude_md: bool = False
    critical_system_reminder: str | None = None
    required_mcp_servers: list[str] = Field(default_factory=list)
    source: Source = "projectSettings"
    path: str | None = None
    """The file it was read from, for error messages; None for built-ins."""

    @property
    def is_built_in(self) -> bool:
        return self.source == "built-in"

    def allows_all_tools(self) -> bool:
        return self.tools is None or self.tools == ["*"]


# Frontmatter key -> AgentDefinition field.
_FRONTMATTER: dict[str, str] = {
    "name": "agent_type",
    "description": "when_to_use",
    "tools": "tools",
    "disallowedTools": "disallowed_tools",
    "model": "model",
    "permissionMode": "permission_mode",
    "maxTurns": "max_turns",
    "skills": "skills",
    "mcpServers": "mcp_servers",
    "hooks": "hooks",
    "memory": "memory",
    "background": "background",
    "isolation": "isolation",
    "initialPrompt": "initial_prompt",
    "effort": "effort",
    "color": "color",
}


def _name_list(value: Any) -> Any:
    """`tools: Read, Grep` and `tools: [Read, Grep]` both mean a list of names. A comma
    inside parentheses is the entry's own: `Agent(Explore, Plan), Read` is two entries
    (split at every comma, the Agent tool was lost: a user test, 2026-12-07)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        # YAML's own list splits `[Agent(Explore, Plan), Read]` at that comma too.
        value = ", ".join(value)
    if not isinstance(value, str):
        return value
    parts, depth, current = [], 0, ""
    for char in value:
        depth += (char == "(") - (char == ")")
        if char == "," and depth <= 0:
            parts.append(current)
            current, depth = "", 0
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def _folded(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


KEY_SLIPS = {
    "allowedtools": "tools",
    "mode": "permissionMode",
    "permission": "permissionMode",
    "permissions": "permissionMode",
}
"""Keys whose nearest spelling is not what they mean: `allowed-tools` (a skill's key) is
not a slip for `disallowedTools`, nor `mode` for `model` (by the folded form)."""


def _near_miss(name: str, known: Iterable[str], slips: dict[str, str] | None = None) -> str | None:
    """The known name `name` was probably meant as (`maxturns`, `tool`, `bash`), or None:
    one known already, or like none. Compared case-, `_`- and `-`-blind, so only a close
    spelling of one name counts (a looser match took `mode` for `model`)."""
    known = list(known)
    if name in known:
        return None
    # The current spelling wins where an earlier one folds the same (`exit_plan_mode`):
    # sorted, so the answer does not change with the set's order from run to run.
    folded = {_folded(k): k for k in sorted(known, key=lambda k: ("_" not in k, k))}
    mine = _folded(name)
    if (meant := (slips or {}).get(mine)) is not None:
        return meant
    if mine in folded:
        return folded[mine]
    # Two letters swapped (`Grpe`, `Bsah`): short names fall below any ratio that does not
    # also take `REPL` for `Grep`.
    swapped = [k for k in folded if _one_swap(mine, k)]
    if swapped:
        return folded[swapped[0]]
    close = difflib.get_close_matches(mine, list(folded), n=1, cutoff=0.85)
    return folded[close[0]] if close else None


def _one_swap(a: str, b: str) -> bool:
    """Whether `a` is `b` with two neighbouring letters swapped."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return (
        len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


def _misspelt_tools(names: Any) -> list[str]:
    """`name (did you mean X?)` for each entry of a tool list that is a slip for a tool of
    Claude Code's: it named no tool and was dropped without a word, so `disallowedTools:
    bash` denied nothing (a user test, 2026-12-07). Names like no tool (an MCP server's, a
    tool of a later release) stay as Claude Code leaves them: unused."""
    # Here, not at the top: the tool filter imports this module for AgentDefinition.
    from agents.tool_filter import KNOWN_TOOLS

    if not isinstance(names, list):
        return []
    slips = []
    for name in names:
        if not isinstance(name, str) or "(" in name or name.startswith("mcp__") or name == "*":
            continue
        if (meant := _near_miss(name, KNOWN_TOOLS)) is not None:
            slips.append(f"{name} (did you mean {meant}?)")
    return slips


class _NoAliasLoader(yaml.SafeLoader):
    """Safe YAML without aliases: with `*name` a value stands for another, so a few hundred
    bytes can stand for gigabytes once the definition is written out as JSON into history
    (a definition's `hooks` take any value). Frontmatter has no use for them."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in frontmatter", mark
            )
        return super().compose_node(parent, index)


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML mapping between the leading `---` lines, and the body after it."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise DefinitionError("missing frontmatter: the file must start with a '---' line")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            try:
                meta = yaml.load("".join(lines[1:i]), Loader=_NoAliasLoader) or {}
            except yaml.YAMLError as e:
                raise DefinitionError(f"frontmatter is not valid YAML: {e}") from None
            if not isinstance(meta, dict):
                raise DefinitionError("frontmatter must be a YAML mapping")
            return meta, "".join(lines[i + 1 :]).strip()
    raise DefinitionError("frontmatter is not closed by a second '---' line")


def parse_agent_markdown(text: str, source: Source, path: str | None = None) -> AgentDefinition:
    """Parse one `.claude/agents/*.md` file; the body is the system prompt.

    Raises:
        DefinitionError: the file lacks `name`/`description` or has an invalid value.
    """
    where = path or "<agent definition>"
    try:
        meta, body = split_frontmatter(text)
    except DefinitionError as e:
        raise DefinitionError(f"{where}: {e}") from None
    missing = [k for k in ("name", "description") if not meta.get(k)]
    if missing:
        raise DefinitionError(f"{where}: frontmatter lacks required {', '.join(missing)}")
    fields: dict[str, Any] = {"system_prompt": body, "source": source, "path": path}
    slips = []
    for key, value in meta.items():
        if key in _FRONTMATTER:
            field = _FRONTMATTER[key]
            fields[field] = _name_list(value) if field in ("tools", "disallowed_tools") else value
            if field in ("tools", "disallowed_tools"):
                slips += [f"{key}: {slip}" for slip in _misspelt_tools(fields[field])]
        elif isinstance(key, str) and (meant := _near_miss(key, _FRONTMATTER, KEY_SLIPS)):
            # Ignored, it gave the agent every tool (`tool: Read`) or no turn limit
            # (`maxturns: 2`) without a word (a user test, 2026-12-07). Keys like none of
            # Claude Code's stay ignored, as there.
            slips.append(f"unknown key {key} (did you mean {meant}?)")
    if slips:
        raise DefinitionError(f"{where}: {'; '.join(slips)}")
    try:
        return AgentDefinition(**fields)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())
        raise DefinitionError(f"{where}: {problems}") from None


def merge_by_precedence(definitions: Iterable[AgentDefinition]) -> dict[str, AgentDefinition]:
    """One definition per agent type, the highest-precedence source winning (R6)."""
    ranked = sorted(definitions, key=lambda d: PRECEDENCE.index(d.source))
    return {d.agent_type: d for d in ranked}


class DefinitionSet(BaseModel):
    """The active definitions an agent may spawn, plus the files that failed to load."""

    model_config = ConfigDict(frozen=True)

    definitions: list[AgentDefinition]
    errors: list[str] = Field(default_factory=list)

    @field_validator("definitions")
    @classmethod
    def _unique(cls, value: list[AgentDefinition]) -> list[AgentDefinition]:
        return list(merge_by_precedence(value).values())

    def get(self, agent_type: str) -> AgentDefinition | None:
        return next((d for d in self.definitions if d.agent_type == agent_type), None)

    def names(self) -> list[str]:
        return [d.agent_type for d in self.definitions]
