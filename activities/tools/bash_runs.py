"""Bash runs that outlive their worker.

A command runs in a session of its own, so when its worker is SIGKILLed (or its host loses
it) the processes go on. Temporal retries the activity once the heartbeat stops; before the
command runs again, the new attempt kills what the interrupted one left, and says so in its
result. Each run is recorded on the host (`$OUTLAST_HOME/bash-runs/`) under its activity's
identity, with the process group and its leader's start time, so a recycled pid is never
killed by mistake. The same records let a killed workflow run kill its commands on the host
(`tool.bash_kill`), and a kill mark (`$OUTLAST_HOME/bash-kills/`) reaches the commands it came
too early to find.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from temporalio import activity

from activities.store import state_dir
from activities.tools.process_groups import group_alive, leader_start_time

RERUN_NOTE = (
    "Note: this command had already started once, on a worker that stopped before it "
    "reported. The processes that first run left behind were killed and the command ran "
    "again from the start; check for effects of the first run."
)
RERUN_ENDED_NOTE = (
    "Note: this command had already started once, on a worker that stopped before it "
    "reported; nothing of that run was still running. It ran again from the start; check for "
    "effects of the first run."
)
RERUN_UNREPORTED_NOTE = (
    "Note: this command had already run once, here, to its end (exit code {code}), but that "
    "result never reached Temporal (the worker lost the server meanwhile, or stopped before it "
    "reported); it ran again from the start. Check for effects of the first run."
)
RERUN_ELSEWHERE_NOTE = (
    "Note: this command had already started once, on a worker that stopped before it "
    "reported, and ran again from the start here. That first run was on another machine or "
    "container: it may have finished, or may still be running there; check for its effects."
)


def rerun_after(earlier: int) -> str:
    """The note for a command that earlier attempts (`earlier` > 1: a crash, graceful worker
    stops) started, each on a worker that stopped before it reported."""
    times = "twice" if earlier == 2 else f"{earlier} times"
    return (
        f"Note: this command had already started up to {times}, on workers that stopped before "
        "they reported. Anything of those runs still running on this machine was killed, and "
        "the command ran again from the start; check for effects of the earlier runs."
    )


NOT_RUN_RERUN_NOTE = (
    "Note: this command had already started once, on a worker that stopped before it "
    "reported; check for effects of that run (anything of it still running on this machine "
    "was killed)."
)


MAX_CRASH_RERUNS = 1
"""A command whose worker died is run again once. A worker's graceful stop (a deploy, each
worker in turn) does not count against it: each attempt it ends is given back."""
WORKER_LOST = (
    "this command started {n} times and ended without reporting each time (its worker was "
    "lost), so it was not run again. Check for effects of those runs (anything of them still "
    "running on this machine was killed) before running it again."
)


KILL_MARK_TTL_S = 3600.0
"""How long a kill mark is kept. It only has to outlast the Bash activities that a worker had
taken before the kill (their start is moments away); a later one is never started."""
RECORD_TTL_S = 7 * 24 * 3600.0
"""How long the record of a command that ended without its activity reporting is kept (a
terminated run's, say): a retry that comes later says the command may have run elsewhere."""
FINISHED_TTL_S = 24 * 3600.0
"""How long the record of a command that ran to its end is kept: its activity's result may
not reach the server (down for a while, or the worker stops before reporting), and the retry
that comes once the server is back says what the first run did. A day outlasts an outage."""
PRUNE_EVERY_S = 600.0
_pruned_at = 0.0


def _key_name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _record_path() -> Path:
    info = activity.info()
    name = _key_name(f"{info.workflow_id}|{info.workflow_run_id}|{info.activity_id}")
    return state_dir() / "bash-runs" / f"{name}.json"


def _mark_path(workflow_id: str, run_id: str) -> Path:
    return state_dir() / "bash-kills" / _key_name(f"{workflow_id}|{run_id}")


def mark_killed(workflow_id: str, run_id: str) -> None:
    """Note on this host that a workflow run is being killed.

    A kill finds only the commands already recorded; one whose activity started but had not
    recorded its process group yet checks for this mark right after it has (and one that
    starts after it does not run at all). Marked before the records are read, so that of the
    kill and the command at least one sees the other.
    """
    path = _mark_path(workflow_id, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    _prune(path.parent, "*", KILL_MARK_TTL_S)
    path.touch()


def kill_requested() -> bool:
    """Whether this activity's workflow run is being killed (`mark_killed`)."""
    info = activity.info()
    return _mark_path(info.workflow_id, info.workflow_run_id).exists()


def _prune(directory: Path, pattern: str, ttl_s: float) -> None:
    cutoff = time.time() - ttl_s
    for path in directory.glob(pattern):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            continue  # gone meanwhile


def _pid_space() -> str:
    """Which pid numbering a pgid belongs to: this boot and this pid namespace (containers
    sharing a state volume each have their own)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return ""
    return f"{boot}:{namespace}"


def remember(pgid: int, scratch: str | None = None) -> None:
    """Record a run that just started (its process group leads with `pgid`; its scratch
    directory, which a SIGKILLed worker leaves behind, is `scratch`)."""
    info = activity.info()
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    _prune_finished(path.parent)
    record = {
        "pgid": pgid,
        "start": leader_start_time(pgid),
        "space": _pid_space(),
        # Whose run it is, for a kill that comes from the workflow (kill_bash_runs).
        "workflow_id": info.workflow_id,
        "run_id": info.workflow_run_id,
        "namespace": info.workflow_namespace,  # a host's workers may serve several
    }
    if scratch is not None:
        record["scratch"] = scratch
    path.write_text(json.dumps(record))


def forget() -> None:
    _record_path().unlink(missing_ok=True)


def finished(status: int | None) -> None:
    """The command ran to its end (`status`: its exit status, None if it timed out): its
    record says so, for a retry should the result not reach the server. It was removed here,
    and a retry after a server outage of half a minute said the first run had been on another
    machine, which may still run it (a user test, 2026-12-05)."""
    path = _record_path()
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    record["finished"] = {"status": status}
    path.write_text(json.dumps(record))


def _prune_finished(records: Path) -> None:
    """Finished commands' records past `FINISHED_TTL_S`; looked for every `PRUNE_EVERY_S`
    at most (a Bash-heavy agent records thousands a day)."""
    global _pruned_at
    if time.monotonic() - _pruned_at < PRUNE_EVERY_S:
        return
    _pruned_at = time.monotonic()
    cutoff = time.time() - FINISHED_TTL_S
    for path in records.glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            if path.stat().st_mtime < cutoff and "finished" in json.loads(path.read_text()):
                path.unlink()


def _stops_path() -> Path:
    return _record_path().with_suffix(".stops")


@contextlib.asynccontextmanager
async def attempt() -> AsyncIterator[None]:
    """One attempt of a Bash activity. Cancelled by its worker's graceful stop (a deploy),
    it notes so on the host, and the retry does not count it against MAX_CRASH_RERUNS; the
    note goes once an attempt reports."""
    try:
        yield
    except asyncio.CancelledError:
        if activity.is_worker_shutdown():
            # Never in place of the cancellation: a note that cannot be written is a crash.
            with contextlib.suppress(OSError):
                note_graceful_stop()
        raise
    with contextlib.suppress(OSError):
        _stops_path().unlink(missing_ok=True)


def note_graceful_stop() -> None:
    """This attempt ends because its worker is stopping gracefully, not because it failed."""
    path = _stops_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(graceful_stops() + 1))


def graceful_stops() -> int:
    """How many earlier attempts of this activity a graceful worker stop ended (on this host,
    where every attempt of a workspace's Bash runs)."""
    try:
        return int(_stops_path().read_text())
    except (OSError, ValueError):
        return 0


def crash_reruns_spent() -> str | None:
    """Why this attempt must not run the command, when it would be a re-run past
    MAX_CRASH_RERUNS (the earlier attempts that no graceful stop ended count); else None."""
    lost = activity.info().attempt - 1 - graceful_stops()
    return WORKER_LOST.format(n=lost) if lost > MAX_CRASH_RERUNS else None


SCRATCH_PREFIX = "outlast-bash-"
"""The name a Bash call's scratch directory starts with (`tempfile.TemporaryDirectory`)."""


def remove_scratch(record_path: Path | None = None) -> None:
    """Remove the scratch directory a run's record names (this activity's, by default): a
    worker SIGKILLed under a command never ran its cleanup, and the directory, with all the
    command's output, stayed in /tmp for good (a user test, 2026-12-06). Only one of this
    host's runs (its pid space) and only a directory named as Outlast names them."""
    try:
        record = json.loads((record_path or _record_path()).read_text())
    except (OSError, ValueError):
        return
    scratch = record.get("scratch")
    if not isinstance(scratch, str) or record.get("space") != _pid_space():
        return
    path = Path(scratch)
    if path.is_absolute() and path.name.startswith(SCRATCH_PREFIX):
        shutil.rmtree(path, ignore_errors=True)


def previous_run() -> tuple[str, int | None]:
    """What an earlier attempt of this activity left: ("running", pgid) to kill, ("ended",
    None) when it ran here and nothing of it is left, ("finished", exit status) when it ran
    here to its end and its result was lost, ("elsewhere", None) when it ran on another
    machine or container or left no record on this one."""
    try:
        record = json.loads(_record_path().read_text())
    except (OSError, ValueError):
        return "elsewhere", None
    return _state(record)


def _state(record: dict) -> tuple[str, int | None]:
    """`previous_run`'s answer for one record."""
    if isinstance(done := record.get("finished"), dict):
        return "finished", done.get("status")
    pgid, start = int(record["pgid"]), record.get("start")
    if not record.get("space") or record["space"] != _pid_space():
        return "elsewhere", None  # its numbers mean nothing here
    now = leader_start_time(pgid)
    if now is not None and now != start:
        return "ended", None  # the pid was reused by an unrelated process
    # With its leader gone the group's id cannot have been reused while members remain.
    return ("running", pgid) if group_alive(pgid) else ("ended", None)


def running_for(workflow_id: str, run_id: str) -> list[int]:
    """The process groups that a workflow run's Bash calls have running on this host."""
    records = state_dir() / "bash-runs"
    _prune(records, "*.json", RECORD_TTL_S)
    _prune(records, "*.stops", RECORD_TTL_S)
    return [
        left.pgid
        for left in left_running()
        if left.workflow_id == workflow_id and left.run_id == run_id
    ]


@dataclass(frozen=True)
class LeftRunning:
    """A recorded command whose process group still runs on this host."""

    path: Path
    """Its record."""
    workflow_id: str
    run_id: str
    pgid: int
    namespace: str | None
    """Its run's namespace (None in a record of an earlier release)."""


def left_running() -> list[LeftRunning]:
    """Every recorded command still running on this host, whoever's it is: for the reaper,
    which kills those whose workflow run has closed. Such a command outlives its worker (a
    session of its own); when the worker is gone and its run is then terminated, no retry
    and no kill on the host ever came (a user test, 2026-12-05: `sleep 301` ran on)."""
    found = []
    for path in (state_dir() / "bash-runs").glob("*.json"):
        try:
            record = json.loads(path.read_text())
            workflow_id, run_id = str(record["workflow_id"]), str(record["run_id"])
        except (OSError, ValueError, KeyError):
            continue  # gone meanwhile, or not a record this release writes
        state, pgid = _state(record)
        if state == "running" and pgid is not None:
            namespace = record.get("namespace")
            found.append(LeftRunning(path, workflow_id, run_id, pgid, namespace))
    return found


def still_running(left: LeftRunning) -> bool:
    """Whether `left`'s command still runs as its record says, read again just before a
    kill (a pid freed since it was listed may be another process's)."""
    try:
        record = json.loads(left.path.read_text())
    except (OSError, ValueError):
        return False
    return _state(record) == ("running", left.pgid)
