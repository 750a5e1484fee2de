"""The `Agent` tool (alias `Task`): its input schema and the model-facing description (R16).

The tool is carried out by the workflow itself (it starts a child workflow), so only its
contract lives here; the description lists the agent types this agent may spawn, which is
why it is rendered per agent rather than fixed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.definition import AgentDefinition

AGENT_TOOL = "Agent"
AGENT_TOOL_ALIASES = ("Task",)
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
RESERVED_NAMES = frozenset({"main"})


class AgentToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(
        description="The task for the agent to perform. It must be self-contained: the agent "
        "cannot see this conversation."
    )
    subagent_type: str | None = Field(
        default=None, description="The type of specialized agent to use for this task"
    )
    model: Literal["sonnet", "opus", "haiku"] | None = Field(
        default=None,
        description="Optional model for this agent; takes precedence over the agent "
        "definition's model. Leave unset to use the definition's or the default.",
    )
    run_in_background: bool | None = Field(
        default=None,
        description="Run the agent in the background. You will be notified when it "
        "completes; do not wait or poll for it.",
    )
    name: str | None = Field(
        default=None,
        description="A name for the agent, to address it later with SendMessage({to: name}).",
    )
    isolation: Literal["worktree"] | None = Field(
        default=None,
        description='"worktree" runs the agent in a temporary git worktree: an isolated copy '
        "of the repository on its own branch.",
    )
    team_name: str | None = Field(default=None, description="Team to spawn the agent into.")
    mode: str | None = Field(
        default=None,
        description='"plan": the agent plans first and sends you its plan for approval '
        "(answer with SendMessage: a plan_approval_response) before it changes anything. "
        "Other values are ignored.",
    )

    @model_validator(mode="after")
    def _name_rules(self) -> AgentToolInput:
        if self.name is not None:
            if self.name in RESERVED_NAMES:
                raise ValueError(f"name '{self.name}' is reserved for the main conversation")
            if not NAME_PATTERN.match(self.name):
                raise ValueError(
                    f"name '{self.name}' must start with a letter or digit and contain only "
                    "letters, digits, '_' and '-' (at most 64 characters)"
                )
        if not self.description.strip() or not self.prompt.strip():
            raise ValueError("description and prompt must not be empty")
        return self


def describe_agents(definitions: Sequence[AgentDefinition]) -> str:
    lines = []
    for d in definitions:
        tools = "*" if d.allows_all_tools() else ", ".join(d.tools or [])
        if d.disallowed_tools:
            tools += f" (except {', '.join(d.disallowed_tools)})"
        lines.append(f"- {d.agent_type}: {d.when_to_use} (Tools: {tools})")
    return "\n".join(lines)


_TYPE_CHOICE = """\
When using the Agent tool, set subagent_type to pick an agent type; without it, \
general-purpose is used."""

_TYPE_CHOICE_FORKING = """\
When using the Agent tool, set subagent_type to pick an agent type; without it, the agent is \
a fork of yourself: it sees this whole conversation, so its prompt is a short directive \
naming its one part of the work, and it runs in the background. Every other agent type \
starts with no knowledge of this conversation."""


_BACKGROUND_NOTE = """
- With run_in_background the call returns at once and you are notified when the agent ends; \
do not sleep, poll or guess its result in the meantime."""


def agent_tool_description(
    definitions: Sequence[AgentDefinition],
    forking: bool = False,
    background: bool = True,
    team: str | None = None,
) -> str:
    """`forking`: omitting `subagent_type` forks (R13), and the text says so, where it had
    said both that general-purpose is used and, in the fork's entry, that omitting it forks.
    `background`: whether the agent is offered `run_in_background` (R16, R73). `team`: the
    team the agent leads, whose teammates it spawns by name (R69)."""
    return f"""\
Launch a new agent to handle a complex, multi-step task autonomously. Each agent type has \
its own tools and instructions.

Available agent types and the tools they have access to:
{describe_agents(definitions)}

{_TYPE_CHOICE_FORKING if forking else _TYPE_CHOICE}

Usage notes:
- Launch several agents at once when their work is independent: put several Agent calls in \
one message.
- The agent's final message comes back to you as the tool result; it is not shown to the \
user. Relay what matters in your own words.{_BACKGROUND_NOTE if background else ""}
- The prompt must say exactly what to do and what to report back: the agent starts with no \
knowledge of this conversation{" (a fork excepted)" if forking else ""}.
- Clearly say whether the agent should write code or only research.
- To continue an agent that finished, use SendMessage with its agent ID or name.{
        _team_note(team) if team else ""
    }"""


def _team_note(team: str) -> str:
    return f"""
- You lead the team "{team}". Giving `name` spawns a new teammate instead: it joins the \
team, shares its task list, works on its own from your prompt (set subagent_type, model, and \
mode "plan" if it must plan first) and talks through SendMessage. Without `name` the agent is \
a synchronous helper of your own."""


class CoordinatorAgentInput(AgentToolInput):
    """The coordinator's `Agent` tool (R59): a worker states its phase and its files, so the
    workflow can keep workers that change the same files from running at once."""

    phase: Literal["research", "implementation", "verification"] = Field(
        default="research",
        description="research: read-only investigation, runs in parallel with anything; "
        "implementation: changes exactly the files declared in `files`; verification: "
        "read-only checks of finished work on `files`. Research and verification workers "
        "get no Write or Edit, and their shell cannot write.",
    )
    files: list[str] = Field(
        default_factory=list,
        description="Repository-relative paths (files or directories) the worker will change "
        "(implementation: required, and the only files its Write and Edit may change; its "
        "shell is not restricted) or check "
        "(verification). A worker whose files overlap a running implementation worker's is "
        "queued until that one ends.",
    )
