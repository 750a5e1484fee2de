"""One-line summaries of an agent's activities, as the Temporal UI lists them in the event
history (`<agent>: turn N: <tool> <short arg>`). They go into the history as user metadata,
so they carry what identifies the call (a path, a pattern, a command's start), cut short."""

from __future__ import annotations

from typing import Any

ARG_WIDTH = 60

_ARG_FIELDS = (
    "file_path",
    "notebook_path",
    "pattern",
    "command",
    "path",
    "url",
    "query",
    "skill",
)
"""Where each tool keeps its identifying argument, in order of preference."""


def tool_summary(agent: str, turn: int, tool: str, tool_input: Any, root: str = "") -> str:
    arg = short_arg(tool_input, root)
    return f"{agent}: turn {turn}: {tool}{' ' + arg if arg else ''}"


def model_summary(agent: str, turn: int, model: str) -> str:
    return f"{agent}: turn {turn}: model {model}"


def short_arg(tool_input: Any, root: str = "") -> str:
    """The call's identifying argument on one line, at most ARG_WIDTH characters; a path
    inside `root` (the workspace) relative to it."""
    for name in _ARG_FIELDS:
        value = (
            tool_input.get(name)
            if isinstance(tool_input, dict)
            else getattr(tool_input, name, None)
        )
        if isinstance(value, str) and value.strip():
            if root and value.startswith(root.rstrip("/") + "/"):
                value = value[len(root.rstrip("/")) + 1 :]
            flat = " ".join(value.split())
            return flat if len(flat) <= ARG_WIDTH else flat[: ARG_WIDTH - 1] + "…"
    return ""
