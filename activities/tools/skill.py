"""The `Skill` tool (spec T17): find the skills on the workspace's host and load one.

Read-only and idempotent. The listing is read once per agent, when its tool definitions are
rendered (activities/context.py); an invocation reads the skill's SKILL.md again, so an edit
made since shows. A project skill whose SKILL.md resolves outside the workspace (a committed
symlink to elsewhere) is not used, nor a user skill resolving outside `~/.claude/skills`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from temporalio import activity

from activities.heartbeats import run_blocking
from activities.small_files import SmallFileError, read_small_file
from activities.tools.base import ToolContext, ToolOutput, ToolRequest, with_content_ref
from agents.skills import (
    MAX_SKILL_BYTES,
    MAX_SKILL_DIRS,
    SKILL_DESCRIPTION,
    SKILL_FILE,
    SkillFileError,
    SkillInfo,
    SkillInput,
    SkillSource,
    invocation_text,
    parse_skill,
    unknown_skill_text,
)
from agents.worktree_slug import checkout_of

log = logging.getLogger(__name__)
DESCRIPTION = SKILL_DESCRIPTION


class SkillRequest(ToolRequest):
    input: SkillInput


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:  # no HOME and no passwd entry (an arbitrary container uid)
        return None


def _skills_dirs(workspace_root: str, home: Path | None) -> list[tuple[Path, Path, SkillSource]]:
    """(directory, what its files must resolve inside, source), the one that wins a name
    first. A user's skill may be a link to anywhere (installers make them); a project's must
    stay in its checkout."""
    places: list[tuple[Path, Path, SkillSource]] = []
    if home is not None:
        user = home / ".claude" / "skills"
        places.append((user, Path("/"), "user"))
    # An agent in a worktree also finds its checkout's skills, those not committed too.
    for root in (workspace_root, checkout_of(workspace_root)):
        if root is not None:
            places.append((Path(root) / ".claude" / "skills", Path(root), "project"))
    return places


def _read(path: Path, within: Path) -> str:
    """The SKILL.md's text: a regular file inside `within`, at most MAX_SKILL_BYTES."""
    try:
        data = read_small_file(path, MAX_SKILL_BYTES, within)
    except SmallFileError as e:
        raise SkillFileError(str(e)) from None
    return data.decode("utf-8")


def find_skills(workspace_root: str, home: Path | None = None) -> list[tuple[SkillInfo, str]]:
    """Every skill the model may invoke, with its body, by name (a user's first), sorted by
    name. A SKILL.md that cannot be used is logged and skipped: one bad file hides one skill,
    never the others, and never stops an agent. One with `disable-model-invocation: true` is
    the user's alone, and still claims its name (a project skill cannot stand in for it)."""
    home = home if home is not None else _home()
    claimed: set[str] = set()
    found: dict[str, tuple[SkillInfo, str]] = {}
    for directory, within, source in _skills_dirs(workspace_root, home):
        try:
            entries = sorted(p for p in directory.iterdir() if p.is_dir())[:MAX_SKILL_DIRS]
        except OSError:
            continue  # no such directory: no skills there
        for entry in entries:
            path = entry / SKILL_FILE
            try:
                text = _read(path, within)
                name, description, invocable, body = parse_skill(text, entry.name)
            except FileNotFoundError:
                continue
            except Exception as e:  # noqa: BLE001 - a link loop, a YAML bomb: skip the file
                log.warning("skill %s not usable: %s: %s", path, type(e).__name__, e)
                claimed.add(entry.name)
                continue
            if name in claimed:
                continue
            claimed.add(name)
            if invocable:
                info = SkillInfo(
                    name=name, description=description, source=source, directory=str(entry)
                )
                found[name] = (info, body)
    return [found[n] for n in sorted(found)]


def skill_infos(workspace_root: str) -> list[SkillInfo]:
    return [info for info, _ in find_skills(workspace_root)]


def skill_sync(req: SkillRequest) -> ToolOutput:
    """The Skill tool without the activity wrapper (blocking)."""
    ctx: ToolContext = req.ctx
    name = req.input.skill.strip().removeprefix("/")
    skills = find_skills(ctx.workspace_root)
    for info, body in skills:
        if info.name == name:
            return ToolOutput(content=invocation_text(info, body, req.input.args))
    return ToolOutput(content=unknown_skill_text(name, [i for i, _ in skills]), is_error=True)


def _skill_and_store(req: SkillRequest) -> ToolOutput:
    # One thread for both: the store syncs what it writes.
    return with_content_ref(skill_sync(req))


@activity.defn(name="tool.skill")
async def run_skill(req: SkillRequest) -> ToolOutput:
    """The skill's instructions, as the tool's result (a long one also in the blob store)."""
    return await run_blocking(_skill_and_store, req)
