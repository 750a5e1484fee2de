"""What every tool activity takes and returns.

A tool activity never raises for something the model can fix (missing file, ambiguous edit,
non-zero exit): it returns `ToolOutput(is_error=True)` so the model sees the message and tries
again. It raises only for infrastructure faults, which Temporal retries.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class FileStamp(BaseModel):
    """What an agent saw of a file when it last read or wrote it."""

    model_config = ConfigDict(frozen=True)

    sha256: str
    mtime_ns: int
    size: int


class ToolContext(BaseModel):
    """Where and as whom a tool runs. Built by the workflow for every call."""

    model_config = ConfigDict(frozen=True)

    workspace_root: str
    """Absolute path; every path a tool touches must resolve (symlinks included) inside it."""
    cwd: str
    """Absolute path inside the workspace; relative tool paths are taken from here."""
    agent_id: str = ""
    sandbox: Literal["none", "read_only"] = "none"
    """`read_only`: Bash runs under bubblewrap with the filesystem read-only and no network."""
    read_stamp: FileStamp | None = None
    """For Write/Edit: this agent's stamp of the target file from its last Read/Write/Edit."""


class ToolOutput(BaseModel):
    model_config = ConfigDict(frozen=True)

    content: str
    is_error: bool = False
    stamps: dict[str, FileStamp] = {}
    """Normalised absolute path -> stamp after this call (Read, Write, Edit)."""
    cwd: str | None = None
    """Bash: the shell's working directory after the command, if it changed."""


class ToolRequest(BaseModel):
    """Base of every `<Name>Request`: the validated input plus the context."""

    model_config = ConfigDict(frozen=True)

    ctx: ToolContext
