"""Loading agent definitions from disk (spec R6), as an activity so replays never re-read.

Project definitions come from `<workspace>/.claude/agents/**/*.md`, user ones from
`~/.claude/agents/**/*.md`; a file that does not parse is reported, not fatal, so one typo
does not take every other agent down with it.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.errors import InvalidAgentInput
from activities.small_files import SmallFileError, read_small_file, text_of
from agents.builtin import builtin_definitions
from agents.config import OutlastConfig
from agents.definition import (
    AgentDefinition,
    DefinitionError,
    DefinitionSet,
    Source,
    parse_agent_markdown,
)
from agents.tool_filter import WRITE_TOOLS, is_read_only, resolve_agent_tools


class LoadDefinitionsInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_root: str
    user_home: str | None = None
    """Whose `~/.claude/agents` to read; None = the worker's home directory."""
    session_definitions: list[AgentDefinition] = []
    """Definitions passed with the run (`--agents` JSON); they outrank project files."""
    config: OutlastConfig = OutlastConfig()


MAX_DEFINITION_BYTES = 256 * 1024
"""A larger file is reported, not read: its body would be a system prompt of 60,000 tokens."""
MAX_DEFINITION_FILES = 500
"""Files read per directory; more are reported, not read."""


def scan(directory: Path, source: Source) -> tuple[list[AgentDefinition], list[str]]:
    """The definitions under `directory`, and a line for each file that cannot be used: a
    FIFO, a device, a link to nowhere, an unreadable or oversized file is one such file, never
    a failed activity that would stop every agent of the run."""
    found: list[AgentDefinition] = []
    errors: list[str] = []
    if not directory.is_dir():
        return found, errors
    try:
        paths = sorted(directory.rglob("*.md"))
    except OSError as e:
        return found, [f"{directory}: cannot be listed: {e}"]
    if len(paths) > MAX_DEFINITION_FILES:
        errors.append(
            f"{directory}: {len(paths)} files, only the first {MAX_DEFINITION_FILES} were read"
        )
    for path in paths[:MAX_DEFINITION_FILES]:
        if path.is_dir():
            continue
        try:
            text = text_of(read_small_file(path, MAX_DEFINITION_BYTES))
            found.append(parse_agent_markdown(text, source, str(path)))
        except DefinitionError as e:
            errors.append(str(e))
        except (SmallFileError, OSError) as e:
            errors.append(f"{path}: cannot be read: {e}")
    return found, errors + duplicate_names(found)


def duplicate_names(found: list[AgentDefinition]) -> list[str]:
    """A line for each name two files of one directory define: the last by path is used
    (as before), which one was not said anywhere (a user test, 2026-12-07)."""
    by_name: dict[str, list[str]] = {}
    for d in found:
        by_name.setdefault(d.agent_type, []).append(d.path or "?")
    return [
        f"{path}: not used: {paths[-1]} defines {name!r} too (the last by path is used)"
        for name, paths in by_name.items()
        for path in paths[:-1]
    ]


def workspace_problem(root: str) -> str | None:
    """Why an agent cannot work in `root` on this host, or None. The first step of a run
    that loads its definitions looks: an agent sent to a checkout that is not there had every
    tool fail for all its turns, and a relative one was read against the worker's directory
    by Bash and against itself by Read."""
    if not os.path.isabs(root):
        return f"the workspace root {root!r} is not an absolute path"
    if not Path(root).is_dir():
        # By the id its tool queue is named by, as the workspace's `host_queue` names it.
        host = os.environ.get("OUTLAST_HOST_ID") or socket.gethostname()
        return f"the workspace root {root} is not a directory on this host ({host})"
    return None


@activity.defn(name="agents.load_definitions")
async def load_definitions(req: LoadDefinitionsInput) -> DefinitionSet:
    # In a thread: up to 500 files a directory, each read and its YAML parsed, would hold
    # the worker's event loop, and with it every workflow task and heartbeat on the worker.
    return await asyncio.to_thread(_load, req)


class DefinitionNames(BaseModel):
    """The agent types a workspace has, by name, and the definition files that failed."""

    model_config = ConfigDict(frozen=True)

    names: list[str]
    errors: list[str] = []
    builtin: list[str] = []
    """The names whose active definition is a built-in one (no user or project file of that
    name overrides it): those behind a feature flag the asker turned on are not there for
    a child that gets the flag as it is. Empty from a host on an older release."""
    read_only: list[str] = []
    """The names whose agent can change no file (no Write, Edit or NotebookEdit, or plan
    mode): not one to implement a verified task. Empty from a host on an older release."""


@activity.defn(name="agents.definition_names")
async def definition_names(req: LoadDefinitionsInput) -> DefinitionNames:
    """What `load_definitions` finds, by name only: a pattern checks its stages' types
    against it at its start. The definitions themselves, prompts and all, are ~20 KB of the
    pattern's history, which the stages load again for themselves anyway."""
    loaded = await asyncio.to_thread(_load, req)
    builtin = [d.agent_type for d in loaded.definitions if d.is_built_in]
    read_only = [name for name in loaded.names() if _read_only(loaded, name)]
    return DefinitionNames(
        names=loaded.names(), errors=loaded.errors, builtin=builtin, read_only=read_only
    )


def _read_only(loaded: DefinitionSet, name: str) -> bool:
    definition = loaded.get(name)
    if definition is None:
        return False
    tools = resolve_agent_tools(definition, sorted(WRITE_TOOLS)).tools
    return is_read_only(tools, definition.permission_mode)


def _load(req: LoadDefinitionsInput) -> DefinitionSet:
    if (problem := workspace_problem(req.workspace_root)) is not None:
        raise InvalidAgentInput(problem)
    home = Path(req.user_home) if req.user_home else Path.home()
    user, user_errors = scan(home / ".claude" / "agents", "userSettings")
    project, project_errors = scan(
        Path(req.workspace_root) / ".claude" / "agents", "projectSettings"
    )
    session = [d.model_copy(update={"source": "flagSettings"}) for d in req.session_definitions]
    return DefinitionSet(
        definitions=[*builtin_definitions(req.config), *user, *project, *session],
        errors=user_errors + project_errors,
    )
