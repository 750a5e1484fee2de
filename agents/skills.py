"""Skills (spec T17): a directory with a `SKILL.md`, whose frontmatter names and describes it
and whose body is the instructions the `Skill` tool brings into the conversation.

Skills are found in `~/.claude/skills/<dir>/SKILL.md` (the user's) and
`<workspace>/.claude/skills/<dir>/SKILL.md` (the project's); a user skill outranks a project
skill of the same name, as in Claude Code. Pure: parsing, the listing the model sees in the
tool's description, and what an invocation returns. The files are read by the activity
(activities/tools/skill.py).
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.definition import DefinitionError, split_frontmatter

SKILL_FILE = "SKILL.md"
SKILL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
MAX_DESCRIPTION_CHARS = 250
"""Of each skill's description, in the listing every request carries."""
MAX_LISTED = 100
MAX_LISTING_CHARS = 12_000
"""The whole listing's budget (Claude Code keeps its own to about that): past it, skills are
named without their descriptions."""
MAX_SKILL_BYTES = 90 * 1024
"""A larger SKILL.md is refused: its body is one tool result, under the 100,000 characters
any tool result may have, and it stays in every later request."""
MAX_SKILL_DIRS = 500
"""Directories looked at per place: a huge `.claude/skills` cannot stall every agent's start."""

SkillSource = Literal["user", "project"]


class SkillInfo(BaseModel):
    """A skill as listed: enough to choose it, not its instructions."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    source: SkillSource
    directory: str
    """Absolute path of the skill's directory (its files sit beside SKILL.md)."""


class SkillInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    skill: str = Field(
        min_length=1,
        max_length=200,
        description='The skill name, exactly as listed (no leading slash), e.g. "pdf" or '
        '"review-pr".',
    )
    args: str | None = Field(
        default=None, max_length=10_000, description="Optional arguments for the skill."
    )


class SkillFileError(ValueError):
    """A SKILL.md that cannot be used; its message says why."""


def parse_skill(text: str, directory_name: str) -> tuple[str, str, bool, str]:
    """`(name, description, model_invocable, body)` of a SKILL.md's text.

    The name is the frontmatter's `name`, else the directory's; the description is required,
    since it is all the model has to choose by.
    """
    try:
        meta, body = split_frontmatter(text.removeprefix("\ufeff"))
    except DefinitionError as e:
        raise SkillFileError(str(e)) from None
    # Only plain values: a YAML alias tree turned into text would grow without bound.
    name, description = meta.get("name") or directory_name, meta.get("description")
    if not isinstance(name, str) or not SKILL_NAME.fullmatch(name.strip()):
        raise SkillFileError(
            f"invalid skill name {name!r}: letters, digits, '.', '_', ':' and '-', at most 64"
        )
    if not isinstance(description, str) or not description.strip():
        raise SkillFileError("the frontmatter has no description (text)")
    hidden = meta.get("disable-model-invocation")
    invocable = not (hidden is True or (isinstance(hidden, str) and hidden.lower() == "true"))
    return name.strip(), " ".join(description.split()), invocable, body


def listing(skills: list[SkillInfo]) -> str:
    """The skills as the Skill tool's description lists them."""
    if not skills:
        return (
            "No skills were installed for this project or user (in .claude/skills) when this "
            "agent started; one created since can be invoked by its exact name."
        )
    lines, used = [], 0
    for skill in skills[:MAX_LISTED]:
        text = skill.description
        if len(text) > MAX_DESCRIPTION_CHARS:
            text = text[: MAX_DESCRIPTION_CHARS - 1] + "…"
        line = f"- {skill.name}: {text}"
        if used + len(line) > MAX_LISTING_CHARS:
            line = f"- {skill.name}"
        used += len(line) + 1
        lines.append(line)
    if len(skills) > MAX_LISTED:
        lines.append(f"- … and {len(skills) - MAX_LISTED} more (not listed)")
    return "<available_skills>\n" + "\n".join(lines) + "\n</available_skills>"


_POSITIONAL = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$(\d+)(?![\d])")


def _split_args(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:  # an unclosed quote: words, then
        return args.split()


def invocation_text(skill: SkillInfo, body: str, args: str | None) -> str:
    """What the model gets back: where the skill's files are, then its instructions, with
    Claude Code's placeholders filled in: `${CLAUDE_SKILL_DIR}`, `$ARGUMENTS` (all of them;
    appended when the body has no place for them), `$ARGUMENTS[N]` and `$N` (the N-th,
    from 0)."""
    body = body.replace("${CLAUDE_SKILL_DIR}", skill.directory)
    words = _split_args(args or "")
    placed = "$ARGUMENTS" in body or bool(_POSITIONAL.search(body))
    body = _POSITIONAL.sub(
        lambda m: (lambda i: words[i] if i < len(words) else "")(int(m.group(1) or m.group(2))),
        body,
    )
    body = body.replace("$ARGUMENTS", args or "")
    if args and not placed:
        body = f"{body}\n\nARGUMENTS: {args}"
    return (
        f'Launching skill "{skill.name}".\n'
        f"Base directory for this skill: {skill.directory}\n\n{body}"
    )


def unknown_skill_text(name: str, skills: list[SkillInfo]) -> str:
    known = ", ".join(s.name for s in skills[:MAX_LISTED]) or "none"
    return f"Unknown skill: {name}. Available skills: {known}."


SKILL_DESCRIPTION = """\
Execute a skill within the main conversation.

When the user asks you to perform a task, check whether one of the available skills below \
matches. Skills provide specialised capabilities and domain knowledge: each is a set of \
instructions (and sometimes files beside them) that this tool brings into the conversation.

When the user refers to a "slash command" or "/<something>", they mean a skill: use this \
tool to invoke it.

How to invoke:
- Set `skill` to the exact name of an available skill (no leading slash).
- Set `args` to pass optional arguments, e.g. `skill: "review-pr", args: "123"`.

Important:
- Only invoke a skill listed below, or one the user explicitly typed as `/<name>`. Never \
guess or invent a skill name. (Skills marked as the user's only are not offered here.)
- When a skill matches the user's request, invoke it BEFORE doing anything else about the \
task, then follow its instructions.
- Do not invoke a skill that is already loaded in this conversation: follow the \
instructions you have.
"""
