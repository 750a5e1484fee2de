"""The writer sandbox's `/tmp`: one directory per workspace on the host, kept from call to call
as a real /tmp is, and removed once its workspace is gone.

A worktree agent's workspace is its worktree, so without this every worktree would leave its
/tmp (build output, caches a command put there) on the worker's disk for good. The worktree's
cleanup removes it with the worktree; the reaper removes every one whose workspace no longer
exists (a worktree or repository removed by hand), from the record kept beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from activities.workspace import atomic_write


class SandboxTmp(BaseModel):
    """The record beside a sandbox /tmp: which workspace it belongs to."""

    model_config = ConfigDict(frozen=True)

    workspace: str
    path: str


def sandbox_tmps_dir() -> Path:
    return Path(tempfile.gettempdir(), f"outlast-{os.getuid()}", "sandbox-tmp")


def _path(workspace: str) -> Path:
    return sandbox_tmps_dir() / hashlib.sha256(workspace.encode()).hexdigest()[:16]


def _record(path: Path) -> Path:
    return path.with_name(f"{path.name}.json")


def sandbox_tmp(workspace: str) -> str:
    """The writer sandbox's `/tmp` for this workspace, made (and recorded) on first use."""
    path = _path(workspace)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    record = _record(path)
    if not record.exists():  # one stat per call; written once per workspace
        own = SandboxTmp(workspace=workspace, path=str(path))
        atomic_write(record, own.model_dump_json().encode())
    return str(path)


def drop_scratch_mountpoint(workspace: str, scratch: str) -> None:
    """Remove the empty directory bwrap made in the workspace's `/tmp` to mount a call's
    scratch on; without this every call would leave one behind."""
    host_tmp, path = Path(tempfile.gettempdir()), Path(scratch)
    if path.is_relative_to(host_tmp):
        with contextlib.suppress(OSError):
            (_path(workspace) / path.relative_to(host_tmp)).rmdir()


def remove_sandbox_tmp(workspace: str) -> None:
    """The workspace's sandbox /tmp and its record, if there is one."""
    _remove(_path(workspace))


def recorded_sandbox_tmps() -> list[SandboxTmp]:
    """Every recorded sandbox /tmp of this host; unreadable records are skipped. A directory
    made before records were kept has none, and is left alone."""
    root = sandbox_tmps_dir()
    found = []
    for record in sorted(root.glob("*.json")) if root.is_dir() else []:
        with contextlib.suppress(OSError, ValidationError):
            found.append(SandboxTmp.model_validate_json(record.read_bytes()))
    return found


def remove_orphaned(tmp: SandboxTmp) -> bool:
    """Remove `tmp` if its workspace no longer exists; whether it was removed."""
    path = Path(tmp.path)
    if Path(tmp.workspace).exists() or path.parent != sandbox_tmps_dir():
        return False
    _remove(path)
    return True


def _remove(path: Path) -> None:
    # A command may leave read-only directories behind (Go's module cache does), which a
    # plain rmtree cannot empty.
    def writable_then_retry(fn, failed: str, _exc_info: object) -> None:
        with contextlib.suppress(OSError):
            parent = os.path.dirname(failed)
            os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR | stat.S_IXUSR)
            fn(failed)

    if path.is_dir():
        shutil.rmtree(path, onerror=writable_then_retry)  # `onexc` is Python 3.12+
    _record(path).unlink(missing_ok=True)
