"""What every tool activity takes and returns.

A tool activity never raises for something the model can fix (missing file, ambiguous edit,
non-zero exit): it returns `ToolOutput(is_error=True)` so the model sees the message and tries
again. It raises only for infrastructure faults, which Temporal retries.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.canonical import blob_ref

MAX_TOOL_RESULT_CHARS = 100_000
"""No tool result the model sees is longer (about 25,000 tokens, Read's own limit). Tools cut
their output more tightly where Claude Code does (Bash at 30,000 characters); this cap is the
backstop that keeps every activity result, and so every history payload, bounded."""


def cap_tool_result(text: str, limit: int = MAX_TOOL_RESULT_CHARS) -> str:
    """`text`, or its head and tail with a note of what was cut between, `limit` characters
    at most, note included: so capping again changes nothing, and a workflow that decodes an
    output (which caps it) holds what the activity stored under its name (`stored_ref`)."""
    if len(text) <= limit:
        return text

    def note(omitted: int) -> str:
        return (
            f"\n\n[... {omitted} characters of tool output omitted: narrow the request "
            "(a path, a pattern, head_limit, offset/limit) to see them ...]\n\n"
        )

    room = limit - len(note(len(text)))
    head = int(room * 0.8)
    tail = room - head
    return f"{text[:head]}{note(len(text) - head - tail)}{text[-tail:]}"


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
    sandbox: Literal["none", "read_only", "copy"] = "none"
    """`read_only`: Bash runs under bubblewrap with the filesystem read-only and no network.
    `copy`: the same, but the workspace (a disposable copy, a verifier's) is writable."""
    read_stamp: FileStamp | None = None
    """For Write/Edit: this agent's stamp of the target file from its last Read/Write/Edit."""
    plan_file: str | None = None
    """The agent's plan file (R76): readable, though outside the workspace."""
    plan_mode: bool = False
    """Planning now: Write and Edit may touch `plan_file` and nothing else (R76, R80)."""
    write_scope: tuple[str, ...] | None = None
    """Workspace-relative files and directories Write and Edit may change; None = any."""
    extra_roots: tuple[str, ...] = ()
    """Directories outside the workspace the agent may also use (a coordinator's
    scratchpad, R63)."""
    read_roots: tuple[str, ...] = Field(default=(), exclude_if=lambda roots: not roots)
    """Directories outside the workspace the agent may read but not change (its background
    commands' output files). Left out of the payload when empty: every tool call carries a
    context, and history keeps each one."""


class ImageRef(BaseModel):
    """An image a tool put in the blob store for the model to see (a Read of a PNG), or a PDF
    (`application/pdf`, shown as a document). The name stays from when images were all there
    was: it names no payload field, but `images` below and the fields that carry these do."""

    model_config = ConfigDict(frozen=True)

    ref: str
    """The blob holding the file's bytes."""
    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"]

    @property
    def is_document(self) -> bool:
        return self.media_type == "application/pdf"


class ToolOutput(BaseModel):
    """A tool activity's result, kept in history once per call: its fields are left out of
    the payload at their defaults (issue 9)."""

    model_config = ConfigDict(frozen=True)

    content: str
    is_error: bool = Field(default=False, exclude_if=lambda v: not v)
    stamps: dict[str, FileStamp] = Field(default={}, exclude_if=lambda v: not v)
    """Normalised absolute path -> stamp after this call (Read, Write, Edit)."""
    cwd: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """Bash: the shell's working directory after the command, if it changed."""
    stored: bool = Field(default=False, exclude_if=lambda v: not v)
    """`content` is in the blob store too (it is long): the next model request refers to it
    instead of carrying it again, so history holds a tool's output once (issue 9). Its name
    is `blob_ref` of the content, which the workflow works out itself (`stored_ref`)."""
    content_ref: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """That name, as outputs recorded before 2026-12-07 say it."""
    images: tuple[ImageRef, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Images (and PDFs) the model sees after `content`, which names them (history and the
    Web UI never carry their bytes): a Read of an image file or a PDF, a notebook's plots."""

    @field_validator("content")
    @classmethod
    def _bounded(cls, value: str) -> str:
        return cap_tool_result(encodable(value))

    def stored_ref(self) -> str | None:
        """The blob holding `content`, if it is stored."""
        if self.content_ref is not None:
            return self.content_ref
        return blob_ref(self.content.encode("utf-8")) if self.stored else None


def encodable(text: str) -> str:
    """`text` with every lone surrogate as U+FFFD: a file name that is not UTF-8 (decoded with
    `surrogateescape`), a notebook's half emoji. A payload holding one cannot be encoded, so
    the activity failed after the tool had run, and the retry ran it again."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def no_nul(value: str) -> str:
    """Validator for strings that reach the OS (a command, a pattern): a NUL byte would make
    the process call itself fail, so it is refused as a fixable input error instead."""
    if "\x00" in value:
        raise ValueError("contains a NUL byte, which no command, pattern or file name can")
    return value


class ToolRequest(BaseModel):
    """Base of every `<Name>Request`: the validated input plus the context."""

    model_config = ConfigDict(frozen=True)

    ctx: ToolContext


class KillRequest(BaseModel):
    """Which workflow run's calls of a tool to kill on the host: the input of a tool's kill
    activity (`ToolSpec.kill`)."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    run_id: str


STORE_OUTPUT_FROM_CHARS = 512
"""Shorter outputs cost less inline than as a reference and a blob."""


async def stored(out: ToolOutput) -> ToolOutput:
    """`with_content_ref`, off the event loop when it writes: the store syncs what it
    writes, and the loop is the worker's, shared with its workflows and model streams."""
    if len(out.content) < STORE_OUTPUT_FROM_CHARS:
        return out
    return await asyncio.to_thread(with_content_ref, out)


def with_content_ref(out: ToolOutput) -> ToolOutput:
    """`out`, its content also put in the blob store if it is long enough to be worth it."""
    if len(out.content) < STORE_OUTPUT_FROM_CHARS:
        return out
    from activities.store import default_store  # the store is for activities, not workflows

    try:
        default_store().put(out.content.encode("utf-8"))
    except OSError as e:
        # The tool has run (a command may not run twice): its output goes inline instead
        # of failing the activity, whose retry would run the tool again.
        logging.getLogger(__name__).warning("tool output kept inline: %s", e)
        return out
    return out.model_copy(update={"stored": True})
