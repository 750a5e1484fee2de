"""A sub-agent's conversation as a JSONL file on disk, its "output file" (spec R29, R40).

For people, not for the parent model (which is told not to read it, R41): an audit trail of
what a sub-agent saw and did, in Claude Code's sidechain layout, one message per line with a
linear uuid chain. Written once when the agent ends (the workflow keeps only references
while it runs), atomically, so a retried export leaves one whole file.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities import transcripts
from activities.read_state import store_read_state
from activities.store import default_store, state_dir
from activities.tools.base import FileStamp
from agents.messages import Message
from agents.transcript import TranscriptRef

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# A fixed namespace makes line uuids a pure function of (agent, position): a re-export of the
# same conversation writes the same ids.
_NAMESPACE = uuid.UUID("6f1c2a0e-8a52-4c55-9f0a-2f1e3b7d9c41")


class ExportInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    transcript: TranscriptRef
    agent_id: str
    agent_type: str
    description: str = ""
    session_id: str
    workspace_root: str
    worktree_path: str | None = None
    parent_agent_id: str | None = None
    read_state: dict[str, FileStamp] = Field(default_factory=dict)
    """The stamps of the files the agent had read at its end, stored for a resume (R66)."""
    compacted: list[TranscriptRef] = Field(default_factory=list, exclude_if=lambda v: not v)
    """The conversations as they were when compacted, oldest first: the file has them too,
    each followed by a `compact_boundary` line, as Claude Code's transcripts do."""


def output_path(req: ExportInput) -> Path:
    """`<state>/projects/<project>/<session>/subagents/agent-<id>.jsonl`."""
    project = _UNSAFE.sub("-", req.workspace_root).strip("-") or "root"
    session = _UNSAFE.sub("-", req.session_id) or "session"
    return (
        state_dir() / "projects" / project / session / "subagents" / f"agent-{req.agent_id}.jsonl"
    )


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


COMPACT_BOUNDARY = {
    "type": "system",
    "subtype": "compact_boundary",
    "content": "Conversation compacted",
}
"""Between a conversation as it was compacted and the one that goes on from its summary."""


def _message_entry(message: Message) -> dict:
    return {"type": message.role, "message": message.model_dump(mode="json")}


@activity.defn(name="transcript.export")
async def export_transcript(req: ExportInput) -> str:
    """Write the JSONL and its `.meta.json`, and store the read state; returns the JSONL's
    path."""
    # Off the event loop: a long transcript is megabytes to load and write, and the loop is
    # the worker's, shared with its workflows.
    return await asyncio.to_thread(_export, req)


def _export(req: ExportInput) -> str:
    store_read_state(req.read_state)
    store = default_store()
    entries: list[dict] = []
    for earlier in req.compacted:
        entries += [_message_entry(m) for m in transcripts.load(store, earlier)]
        entries.append(COMPACT_BOUNDARY)
    entries += [_message_entry(m) for m in transcripts.load(store, req.transcript)]
    lines, parent = [], None
    for index, entry in enumerate(entries):
        line_id = str(uuid.uuid5(_NAMESPACE, f"{req.agent_id}:{index}"))
        line = {"uuid": line_id, "parentUuid": parent, "isSidechain": True}
        lines.append(json.dumps(line | {"agentId": req.agent_id} | entry, ensure_ascii=False))
        parent = line_id
    path = output_path(req)
    _write_atomically(path, "".join(f"{line}\n" for line in lines))
    meta = {
        "agentType": req.agent_type,
        "description": req.description,
        "worktreePath": req.worktree_path,
        "parentAgentId": req.parent_agent_id,
    }
    _write_atomically(path.with_suffix(".meta.json"), json.dumps(meta, indent=2))
    return str(path)
