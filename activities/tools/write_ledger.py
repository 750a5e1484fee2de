"""What a Write or Edit attempt wrote, so that a retry of it answers as the attempt would have.

An attempt whose worker died after the write and before it reported is retried by Temporal.
The file then already holds the new content: an Edit's `old_string` is gone, and undoing the
edit to check it (`edit.already_applied`) cannot tell every case (curly quotes written
straight, a `replace_all` whose new text was in the file before, a deletion). So each attempt
notes, before it writes, the hash of the bytes it is about to write and the answer the model
is to get, on the host under the activity's identity (`$OUTLAST_HOME/tool-writes/`), as Bash
notes its runs (`bash_runs`). A retry that finds the file holding exactly those bytes gives
that answer and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio import activity

from activities.heartbeats import run_blocking
from activities.store import state_dir
from activities.tools.base import ToolOutput

RECORD_TTL_S = 24 * 3600.0
"""How long a record is kept: a retry comes within the activity's timeouts (minutes)."""
PRUNE_EVERY_S = 3600.0
_last_prune = 0.0


@dataclass(frozen=True)
class WriteLedger:
    """The record of one activity's write."""

    path: Path
    retry: bool
    """An attempt after the first: only such a one looks for an earlier attempt's write."""

    @classmethod
    def for_activity(cls) -> WriteLedger:
        """The record of the running activity (one per activity, across its attempts)."""
        info = activity.info()
        key = f"{info.workflow_id}|{info.workflow_run_id}|{info.activity_id}"
        name = hashlib.sha256(key.encode()).hexdigest()[:32]
        return cls(state_dir() / "tool-writes" / f"{name}.json", retry=info.attempt > 1)

    def answer(self, current: bytes) -> str | None:
        """The answer an earlier attempt noted, if the file holds what it was to write."""
        if not self.retry:
            return None
        try:
            record = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None
        if record.get("sha256") != hashlib.sha256(current).hexdigest():
            return None
        return record.get("content")

    def note(self, data: bytes, content: str) -> None:
        """Before writing `data`: the answer a retry that finds it written is to give."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _prune(self.path.parent)
        record = {"sha256": hashlib.sha256(data).hexdigest(), "content": content}
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record))
        tmp.replace(self.path)


def _prune(directory: Path) -> None:
    global _last_prune
    now = time.time()
    if now - _last_prune < PRUNE_EVERY_S:
        return
    _last_prune = now
    for path in [*directory.glob("*.json"), *directory.glob("*.tmp")]:
        try:
            if path.stat().st_mtime < now - RECORD_TTL_S:
                path.unlink()
        except OSError:
            continue  # gone meanwhile


async def run_writing(
    sync: Callable[[Any, WriteLedger], ToolOutput], req: Any, verb: str, path: str
) -> ToolOutput:
    """A writing tool's activity: `sync` in a thread with this activity's ledger; an OSError
    (no permission, a file where a directory should be) is an answer the model can act on."""
    try:
        return await run_blocking(sync, req, WriteLedger.for_activity())
    except OSError as e:
        return ToolOutput(content=f"Cannot {verb} {path}: {e.strerror or e}", is_error=True)
