"""Bash runs that outlive their worker.

A command runs in a session of its own, so when its worker is SIGKILLed (or its host loses
it) the processes go on. Temporal retries the activity once the heartbeat stops; before the
command runs again, the new attempt kills what the interrupted one left, and says so in its
result. Each run is recorded on the host (`$OUTLAST_HOME/bash-runs/`) under its activity's
identity, with the process group and its leader's start time, so a recycled pid is never
killed by mistake.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from temporalio import activity

from activities.store import state_dir

RERUN_NOTE = (
    "Note: this command had already started once, on a worker that stopped before it "
    "finished. The processes that first run left behind were killed and the command ran "
    "again from the start; check for effects of the first run."
)


def _record_path() -> Path:
    info = activity.info()
    key = f"{info.workflow_id}|{info.workflow_run_id}|{info.activity_id}"
    name = hashlib.sha256(key.encode()).hexdigest()[:32]
    return state_dir() / "bash-runs" / f"{name}.json"


def leader_start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks); None if no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def remember(pgid: int) -> None:
    """Record a run that just started (its process group leads with `pgid`)."""
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pgid": pgid, "start": leader_start_time(pgid)}))


def forget() -> None:
    _record_path().unlink(missing_ok=True)


def interrupted_run() -> int | None:
    """The process group an earlier attempt of this activity left running, or None.

    None too when an earlier attempt was recorded but nothing of it runs any more.
    """
    from activities.tools.bash import group_alive

    path = _record_path()
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    pgid, start = int(record["pgid"]), record.get("start")
    now = leader_start_time(pgid)
    if now is not None and now != start:
        return None  # the pid was reused by an unrelated process
    # With its leader gone the group's id cannot have been reused while members remain.
    return pgid if group_alive(pgid) else None


def had_earlier_attempt() -> bool:
    return _record_path().exists()
