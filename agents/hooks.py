"""Sub-agent hooks (spec R100): `SubagentStart` and `SubagentStop` commands, as Claude Code
runs them, in its settings' shape.

Pure: which commands an event runs for an agent type, what a hook is told on stdin, and what
its exit status and output mean. The commands themselves run in `activities/hooks.py`.

    {"SubagentStart": [{"matcher": "Explore|Plan",
                        "hooks": [{"type": "command", "command": "./ctx.sh", "timeout": 30}]}]}

A matcher names agent types as Claude Code's do (see `matches`). A
`SubagentStart` hook cannot stop the agent; the `additionalContext` it prints goes to the
sub-agent before its first turn. A `SubagentStop` hook that exits 2 (its stderr the reason) or
prints `{"decision": "block", "reason": ...}` keeps the sub-agent working, the reason its next
instruction. Any other failure of a hook is reported and ignored, as in Claude Code.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

SUBAGENT_START = "SubagentStart"
SUBAGENT_STOP = "SubagentStop"
EVENTS = (SUBAGENT_START, SUBAGENT_STOP)
"""The events Outlast runs hooks for; a config naming another is refused."""
FRONTMATTER_EVENTS = {
    "Stop": SUBAGENT_STOP,
    SUBAGENT_STOP: SUBAGENT_STOP,
    SUBAGENT_START: SUBAGENT_START,
}
"""An agent definition's own hooks: its `Stop` is its `SubagentStop` (R100)."""
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 3600.0
BLOCKING_EXIT = 2
_NAME_LIST = re.compile(r"[A-Za-z0-9_|]+")
OUTPUT_CAP = 64 * 1024
"""Bytes of a hook's stdout and stderr kept (each); more is cut, saying so."""


class HookCommand(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S)
    """Seconds before the command is killed (its process group)."""


class HookMatcher(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    matcher: str = ""
    hooks: list[HookCommand]

    @field_validator("matcher")
    @classmethod
    def _a_pattern(cls, value: str) -> str:
        """A matcher that is neither a name list nor a regular expression would match nothing,
        without a word: refused where the hooks are given."""
        if value in ("", "*") or _NAME_LIST.fullmatch(value):
            return value
        try:
            re.compile(value)
        except re.error as e:
            raise ValueError(f"matcher {value!r} is not a regular expression ({e})") from None
        return value


HookTable = dict[str, list[HookMatcher]]


def check_events(table: dict[str, Any]) -> None:
    """ValueError naming any event Outlast does not run hooks for (nothing goes unrun
    silently: a PreToolUse hook copied from Claude Code settings would never fire)."""
    unknown = sorted(set(table) - set(EVENTS))
    if unknown:
        raise ValueError(
            f"hooks: Outlast runs {' and '.join(EVENTS)} hooks only, not {', '.join(unknown)}"
        )


def matches(matcher: str, agent_type: str) -> bool:
    """Claude Code's rule: "" or "*" is every type; letters, digits, `_` and `|` only is a
    list of exact names (`Explore|Plan` is not `Explorer`); anything else is a regular
    expression searched in the type, and one that does not compile matches nothing."""
    if matcher in ("", "*"):
        return True
    if _NAME_LIST.fullmatch(matcher):
        return agent_type in matcher.split("|")
    try:
        return re.search(matcher, agent_type) is not None
    except re.error:
        return False


def commands_for(table: HookTable, event: str, agent_type: str) -> list[HookCommand]:
    """The commands `event` runs for an agent of `agent_type`, in the order configured; the
    same command line twice (the config's and a definition's) runs once, as in Claude Code."""
    found = [
        command
        for group in table.get(event, [])
        if matches(group.matcher, agent_type)
        for command in group.hooks
    ]
    first: dict[str, HookCommand] = {}
    for command in found:
        first.setdefault(command.command, command)
    return list(first.values())


def definition_hooks(raw: dict[str, Any]) -> tuple[HookTable, list[str]]:
    """An agent definition's frontmatter `hooks` as a table for that agent alone (matchers do
    not apply: the hooks are its own), and what in them Outlast cannot run, to report."""
    table: HookTable = {}
    skipped: list[str] = []
    for name, groups in raw.items():
        event = FRONTMATTER_EVENTS.get(name)
        if event is None:
            skipped.append(f"{name}: not an event Outlast runs hooks for")
            continue
        if not isinstance(groups, list):
            skipped.append(f"{name}: a list of {{matcher, hooks}} entries was expected")
            continue
        for n, group in enumerate(groups):
            try:
                parsed = HookMatcher.model_validate(group)
            except ValidationError as e:
                skipped.append(f"{name}[{n}]: {_first_error(e)}")  # the others still run
                continue
            table.setdefault(event, []).append(parsed.model_copy(update={"matcher": ""}))
    return table, skipped


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]


def merged(*tables: HookTable) -> HookTable:
    out: HookTable = {}
    for table in tables:
        for event, groups in table.items():
            out.setdefault(event, []).extend(groups)
    return out


class HookRun(BaseModel):
    """How one hook command went (the `hooks.run_command` activity's result)."""

    exit_code: int | None = None
    """None when it was killed (its timeout) or could not start."""
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str = ""
    """Why it did not run at all (no such directory, ...)."""


def start_context(run: HookRun) -> str | None:
    """The `additionalContext` a SubagentStart hook gave, if any."""
    if run.exit_code != 0:
        return None
    out = _json_output(run.stdout)
    specific = out.get("hookSpecificOutput") if out else None
    if not isinstance(specific, dict):
        return None
    context = specific.get("additionalContext")
    return context if isinstance(context, str) and context.strip() else None


def stop_block(run: HookRun) -> str | None:
    """Why a SubagentStop hook keeps the sub-agent working, or None (it may stop)."""
    if run.exit_code == BLOCKING_EXIT:
        return run.stderr.strip() or "A SubagentStop hook blocked stopping (exit status 2)."
    if run.exit_code != 0:
        return None
    out = _json_output(run.stdout)
    if not out or out.get("continue") is False or out.get("decision") != "block":
        return None
    reason = out.get("reason")
    return reason.strip() if isinstance(reason, str) and reason.strip() else None


def problem(run: HookRun) -> str | None:
    """What went wrong with a hook, for the worker's log (a failed hook is not fatal)."""
    if run.error:
        return run.error
    if run.timed_out:
        return "timed out and was killed"
    if run.exit_code not in (0, BLOCKING_EXIT):
        return f"exit status {run.exit_code}: {run.stderr.strip()[:500]}"
    return None


def _json_output(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def start_reminder(contexts: list[str]) -> str:
    return "\n\n".join(f"SubagentStart hook additional context: {c}" for c in contexts)


def stop_feedback(reasons: list[str]) -> str:
    """The sub-agent's next instruction after its stop was blocked."""
    return "SubagentStop hook feedback:\n" + "\n".join(f"- {r}" for r in reasons)


def start_input(common: dict[str, Any], agent_id: str, agent_type: str) -> dict[str, Any]:
    return {
        **common,
        "hook_event_name": SUBAGENT_START,
        "agent_id": agent_id,
        "agent_type": agent_type,
    }


def stop_input(
    common: dict[str, Any], agent_id: str, agent_type: str, last_message: str, active: bool
) -> dict[str, Any]:
    """`active`: the sub-agent is working on because a SubagentStop hook blocked its last
    stop (a hook checks it so as not to keep it working for ever)."""
    return {
        **common,
        "hook_event_name": SUBAGENT_STOP,
        "stop_hook_active": active,
        "agent_id": agent_id,
        "agent_type": agent_type,
        "last_assistant_message": last_message,
    }
