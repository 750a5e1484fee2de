"""Rendering an agent's system prompt and tool list once, into the store (spec R15, R17).

The rendered bytes are what every later model call of the agent sends, byte for byte, so
the prompt cache keeps hitting; the workflow keeps only their names. Rendering reads the
environment (date, platform, git status, CLAUDE.md), which is why it is an activity.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities.git_run import read_git
from activities.small_files import read_head, text_of
from activities.store import default_store
from activities.tools import TOOLS, clean_schema
from activities.tools.skill import skill_infos
from agents.agent_tool import AGENT_TOOL, AgentToolInput, CoordinatorAgentInput
from agents.canonical import canonical_bytes
from agents.control_tools import (
    SEND_MESSAGE_DESCRIPTION,
    SEND_MESSAGE_TOOL,
    TASK_OUTPUT_DESCRIPTION,
    TASK_OUTPUT_TOOL,
    TASK_STOP_DESCRIPTION,
    TASK_STOP_TOOL,
    SendMessageInput,
    TaskOutputInput,
    TaskStopInput,
)
from agents.plan_mode import (
    ENTER_PLAN_MODE_DESCRIPTION,
    ENTER_PLAN_MODE_TOOL,
    EXIT_PLAN_MODE_DESCRIPTION,
    EXIT_PLAN_MODE_TOOL,
    EnterPlanModeInput,
    ExitPlanModeInput,
)
from agents.questions import (
    ASK_USER_QUESTION_DESCRIPTION,
    ASK_USER_QUESTION_TOOL,
    AskUserQuestionInput,
)
from agents.skills import listing
from agents.team_tasks import TEAM_TOOL_DESCRIPTIONS, TEAM_TOOL_INPUTS
from agents.todos import TODO_WRITE_DESCRIPTION, TODO_WRITE_TOOL, TodoWriteInput
from agents.web_fetch import WEB_FETCH_DESCRIPTION, WEB_FETCH_TOOL, WebFetchInput
from agents.web_search import WEB_SEARCH_DESCRIPTION, WEB_SEARCH_TOOL, WebSearchInput
from agents.worktree_tools import (
    ENTER_WORKTREE_DESCRIPTION,
    ENTER_WORKTREE_TOOL,
    EXIT_WORKTREE_DESCRIPTION,
    EXIT_WORKTREE_TOOL,
    EnterWorktreeInput,
    ExitWorktreeInput,
)

log = logging.getLogger(__name__)

# Tools the workflow carries out itself: the model sees them like any other.
WORKFLOW_TOOLS: dict[str, tuple[type, str]] = {
    AGENT_TOOL: (AgentToolInput, ""),
    SEND_MESSAGE_TOOL: (SendMessageInput, SEND_MESSAGE_DESCRIPTION),
    TASK_STOP_TOOL: (TaskStopInput, TASK_STOP_DESCRIPTION),
    TASK_OUTPUT_TOOL: (TaskOutputInput, TASK_OUTPUT_DESCRIPTION),
    ENTER_PLAN_MODE_TOOL: (EnterPlanModeInput, ENTER_PLAN_MODE_DESCRIPTION),
    EXIT_PLAN_MODE_TOOL: (ExitPlanModeInput, EXIT_PLAN_MODE_DESCRIPTION),
    TODO_WRITE_TOOL: (TodoWriteInput, TODO_WRITE_DESCRIPTION),
    ASK_USER_QUESTION_TOOL: (AskUserQuestionInput, ASK_USER_QUESTION_DESCRIPTION),
    ENTER_WORKTREE_TOOL: (EnterWorktreeInput, ENTER_WORKTREE_DESCRIPTION),
    EXIT_WORKTREE_TOOL: (ExitWorktreeInput, EXIT_WORKTREE_DESCRIPTION),
    WEB_FETCH_TOOL: (WebFetchInput, WEB_FETCH_DESCRIPTION),
    WEB_SEARCH_TOOL: (WebSearchInput, WEB_SEARCH_DESCRIPTION),
    **{name: (model, TEAM_TOOL_DESCRIPTIONS[name]) for name, model in TEAM_TOOL_INPUTS.items()},
}

GIT_STATUS_MAX_CHARS = 2000
CLAUDE_MD_MAX_CHARS = 40_000


class RenderContextInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    system_prompt: str
    tool_names: list[str] = Field(default_factory=list)
    workspace_root: str
    cwd: str
    include_claude_md: bool = True
    include_git_status: bool = True
    critical_system_reminder: str | None = None
    agent_tool_description: str = ""
    """The `Agent` tool's description, listing the types this agent may spawn."""
    coordinator: bool = False
    """The coordinator's `Agent` tool takes a phase and the worker's files (R59)."""
    agent_fields_hidden: list[str] = Field(default_factory=list)
    """`Agent` tool fields this agent is not offered: `run_in_background` when background
    tasks are disabled (R16), and `name` too for a teammate (R73)."""


class RenderedContext(BaseModel):
    model_config = ConfigDict(frozen=True)

    system_ref: str
    tools_ref: str | None
    claude_md_included: bool = False


def _git(cwd: str, *args: str) -> str | None:
    try:
        done = read_git(cwd, *args, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode(errors="replace").strip() if done.returncode == 0 else None


def environment_block(cwd: str, today: date, is_repo: bool | None = None) -> str:
    """The `<env>` block; its `Working directory:` line is also how a scripted model finds
    the checkout (`{{cwd}}`). `is_repo`: already known (from `git_snapshot`), or asked."""
    if is_repo is None:
        is_repo = git_snapshot(cwd) is not None
    return (
        "Here is useful information about the environment you are running in:\n<env>\n"
        f"Working directory: {cwd}\n"
        f"Is directory a git repo: {'Yes' if is_repo else 'No'}\n"
        f"Platform: {platform.system().lower()}\n"
        f"OS Version: {platform.release()}\n"
        f"Today's date: {today.isoformat()}\n</env>\n"
        "Paths in tool calls must be absolute; files outside the working directory's "
        "repository cannot be touched."
    )


@dataclass(frozen=True)
class GitSnapshot:
    branch: str
    """The current branch; empty on a detached HEAD (as `git branch --show-current`)."""
    status: str
    """`git status --short`, without its leading and trailing blank space."""


def git_snapshot(cwd: str) -> GitSnapshot | None:
    """The branch and the short status from one `git status --short --branch`, or None
    outside a work tree: one process where three were run (an agent's start is on the
    worker's critical path, and a fan-out starts twenty at once)."""
    out = _git(cwd, "status", "--short", "--branch")
    if out is None:
        return None
    header, _, status = out.partition("\n")
    return GitSnapshot(branch=branch_of(header), status=status.strip())


def branch_of(header: str) -> str:
    """The branch named by `git status --branch`'s `## ...` line."""
    head = header.removeprefix("## ")
    for unborn in ("No commits yet on ", "Initial commit on "):  # the latter: git < 2.16
        if head.startswith(unborn):
            return head.removeprefix(unborn)
    if head.startswith("HEAD (no branch)"):
        return ""
    return head.split("...", 1)[0].split(" [", 1)[0]


def git_status_block(cwd: str, snapshot: GitSnapshot | None) -> str | None:
    if snapshot is None:
        return None
    status = snapshot.status or "(clean)"
    if len(status) > GIT_STATUS_MAX_CHARS:
        status = status[:GIT_STATUS_MAX_CHARS] + "\n... (truncated; run git status for more)"
    log = _git(cwd, "log", "--oneline", "-n", "5") or "(no commits)"
    return (
        "gitStatus: a snapshot taken when this agent started; it does not update.\n"
        f"Current branch: {snapshot.branch}\n\nStatus:\n{status}\n\nRecent commits:\n{log}"
    )


def claude_md_block(root: str) -> str | None:
    parts = []
    for candidate in (Path(root) / "CLAUDE.md", Path(root) / ".claude" / "CLAUDE.md"):
        # 4 bytes a character at most: the cut below is the one that counts.
        head = read_head(candidate, 4 * CLAUDE_MD_MAX_CHARS)
        if head is not None:
            text = text_of(head)[:CLAUDE_MD_MAX_CHARS]
            parts.append(f"Contents of {candidate} (project instructions):\n\n{text}")
    if not parts:
        return None
    return (
        "Codebase and user instructions are shown below. Follow them; they override default "
        "behaviour.\n\n" + "\n\n".join(parts)
    )


@functools.cache
def _schema_of(model: type[BaseModel]) -> str:
    """A tool input model's cleaned JSON schema, as JSON text: pydantic builds a schema
    anew on every call, and every agent's start asked for all of them (~6% of a fan-out's
    worker CPU, bench/fanout.py). Text, so no caller can change the cached copy."""
    schema = clean_schema(model.model_json_schema(by_alias=True))
    schema.pop("$schema", None)
    schema["additionalProperties"] = False
    return json.dumps(schema)


def _workflow_tool(
    name: str, agent_description: str, coordinator: bool, hidden: Sequence[str] = ()
) -> dict:
    model, description = WORKFLOW_TOOLS[name]
    if name == AGENT_TOOL and coordinator:
        model = CoordinatorAgentInput
    schema = json.loads(_schema_of(model))
    if name == AGENT_TOOL and hidden:
        for field in hidden:
            schema.get("properties", {}).pop(field, None)
        if "required" in schema:
            schema["required"] = [f for f in schema["required"] if f not in hidden]
    return {
        "name": name,
        "description": agent_description if name == AGENT_TOOL else description,
        "input_schema": schema,
    }


def tool_definitions(
    names: list[str],
    agent_description: str = "",
    coordinator: bool = False,
    agent_fields_hidden: Sequence[str] = (),
    skills: str = "",
) -> list[dict]:
    """`skills`: the Skill tool's listing of the skills there are (agents/skills.listing)."""
    return [
        _workflow_tool(n, agent_description, coordinator, agent_fields_hidden)
        if n in WORKFLOW_TOOLS
        else {
            "name": n,
            "description": f"{TOOLS[n].description}\n{skills}"
            if n == "Skill"
            else (TOOLS[n].description),
            "input_schema": _without(
                json.loads(_schema_of(TOOLS[n].input_model)),
                # Bash runs in the background where an agent may (T4, R16, R73).
                BACKGROUND_FIELD if n == "Bash" and BACKGROUND_FIELD in agent_fields_hidden else "",
            ),
        }
        for n in names
    ]


BACKGROUND_FIELD = "run_in_background"


def _without(schema: dict, field: str) -> dict:
    if field:
        schema.get("properties", {}).pop(field, None)
    return schema


@activity.defn(name="prompt.render_context")
async def render_context(req: RenderContextInput) -> RenderedContext:
    """Render and store the system prompt blocks and the tool definitions."""
    # Off the event loop: the git commands can take seconds (10 s timeout each), and the
    # loop is the worker's, shared with its workflows and, run as a local activity, this
    # very workflow task.
    return await asyncio.to_thread(_render, req)


def _render(req: RenderContextInput) -> RenderedContext:
    snapshot = git_snapshot(req.cwd)
    blocks = [req.system_prompt, environment_block(req.cwd, date.today(), snapshot is not None)]
    if req.include_git_status and (status := git_status_block(req.cwd, snapshot)):
        blocks.append(status)
    claude_md = claude_md_block(req.workspace_root) if req.include_claude_md else None
    if claude_md:
        blocks.append(claude_md)
    if req.critical_system_reminder:
        blocks.append(req.critical_system_reminder)
    store = default_store()
    system_ref = store.put(canonical_bytes(blocks))
    tools_ref = (
        store.put(
            canonical_bytes(
                tool_definitions(
                    req.tool_names,
                    req.agent_tool_description,
                    req.coordinator,
                    req.agent_fields_hidden,
                    _skills_listing(req) if "Skill" in req.tool_names else "",
                )
            )
        )
        if req.tool_names
        else None
    )
    return RenderedContext(
        system_ref=system_ref, tools_ref=tools_ref, claude_md_included=claude_md is not None
    )


def _skills_listing(req: RenderContextInput) -> str:
    try:
        return listing(skill_infos(req.workspace_root))
    except Exception:  # noqa: BLE001 - a listing is never worth an agent that cannot start
        log.exception("could not list the skills of %s", req.workspace_root)
        return listing([])


def load_system(ref: str) -> list[str]:
    return json.loads(default_store().get(ref))
