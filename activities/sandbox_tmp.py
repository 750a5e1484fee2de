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
import logging
import os
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from activities.host_tmp import host_tmp_root, is_private, private_dir
from activities.workspace import atomic_write

log = logging.getLogger(__name__)


class SandboxTmp(BaseModel):
    """The record beside a sandbox /tmp: which workspace it belongs to."""

    model_config = ConfigDict(frozen=True)

    workspace: str
    path: str


def sandbox_tmps_dir() -> Path:
    """Where this user's sandbox /tmp directories and their records live, on the host."""
    return host_tmp_root() / "sandbox-tmp"


def _path(workspace: str) -> Path:
    return sandbox_tmps_dir() / hashlib.sha256(workspace.encode()).hexdigest()[:16]


def _record(path: Path) -> Path:
    return path.with_name(f"{path.name}.json")


def sandbox_tmp(workspace: str) -> str:
    """The writer sandbox's `/tmp` for this workspace, made (and recorded) on first use.

    Raises:
        HostTmpRefused: the directory that holds it is not this user's own
            (`activities.host_tmp`): it would receive what the sandboxed commands write.
    """
    private_dir(sandbox_tmps_dir().name)
    path = _path(workspace)
    path.mkdir(exist_ok=True, mode=0o700)
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


def remove_sandbox_tmp(workspace: str) -> bool:
    """The workspace's sandbox /tmp and its record; whether none is left. What could not be
    removed keeps its record, so the reaper tries again. Nothing is touched under a directory
    that is not this user's own."""
    root = sandbox_tmps_dir()
    if not root.exists():
        return True
    if not is_private(root.name):
        log.warning("not removing anything under %s: not this user's own directory", root)
        return False
    return _remove(_path(workspace))


def recorded_sandbox_tmps() -> list[SandboxTmp]:
    """Every recorded sandbox /tmp of this host; unreadable records are skipped. A directory
    made before records were kept has none, and is left alone. None at all if the directory
    that holds them is not this user's own: /tmp is everyone's, and a directory or link
    someone else made at that path would hand them what the reaper deletes."""
    root = sandbox_tmps_dir()
    if not is_private(root.name):
        return []
    found = []
    for record in sorted(root.glob("*.json")):
        with contextlib.suppress(OSError, ValidationError):
            found.append(SandboxTmp.model_validate_json(record.read_bytes()))
    return found


def is_orphaned(tmp: SandboxTmp) -> bool:
    """Whether `tmp`'s workspace is known to be gone (an unreadable one is not), and the
    record names the one path its workspace has, whatever else it says."""
    if Path(tmp.path) != _path(tmp.workspace):
        return False
    try:
        return not Path(tmp.workspace).exists()
    except OSError:  # EACCES on a parent: not known to be gone
        return False


def remove_orphaned(tmp: SandboxTmp) -> bool:
    """Remove `tmp` if it is orphaned; whether it is gone now."""
    return is_orphaned(tmp) and _remove(_path(tmp.workspace))


def _remove(path: Path) -> bool:
    if path.is_symlink():  # never made by `sandbox_tmp`: the link goes, not what it names
        path.unlink()
        _record(path).unlink(missing_ok=True)
        return True
    # A command may leave directories behind that rmtree cannot empty or even list (Go's
    # module cache is read-only; a test may chmod 000 its fixtures): every directory is made
    # this user's to change first. Links below are not followed.
    with contextlib.suppress(OSError):
        path.chmod(0o700)
    for top, dirs, _files in os.walk(path):
        for name in dirs:
            with contextlib.suppress(OSError):
                if not os.path.islink(os.path.join(top, name)):
                    os.chmod(os.path.join(top, name), 0o700)
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        log.warning("could not remove all of %s; the reaper will try again", path)
        return False
    _record(path).unlink(missing_ok=True)
    return True
