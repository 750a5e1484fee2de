"""Content-addressed blob store: the claim-check that keeps large data out of history.

Blobs are immutable and named by the SHA-256 of their bytes (its first `REF_HEX_DIGITS` hex
digits, agents/canonical.py), so a retried activity that writes the same content writes the
same name, and two agents sharing a prefix share the blob. Workflows hold only names. The
local driver writes under the state directory; every worker that runs model calls or tools
for a workflow must see the same store (one machine by default; a shared volume or an object
store on a cluster).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Protocol

from activities.errors import StoreCorrupt, StoreMissing
from agents.canonical import REF_HEX_DIGITS, blob_ref, names

_REF = re.compile(r"^[0-9a-f]{32}(?:[0-9a-f]{32})?$")


class BlobStore(Protocol):
    def put(self, data: bytes) -> str: ...

    def get(self, ref: str) -> bytes: ...


class LocalBlobStore:
    """Blobs as files `<root>/<ab>/<cdef...>`: written whole (data synced, then renamed into
    place, the directory synced), and checked against their name when read.

    The sync is for a machine that goes down, not a process: history may already hold a
    completed activity whose blob the page cache had not written, and no retry writes it
    again. A file that is there but not what its name says (torn by such a crash) is
    written again by the next `put` of that content and refused by `get`."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _path(self, ref: str) -> Path:
        if not _REF.match(ref):
            raise StoreMissing(f"Not a blob reference: {ref!r}", ref=ref)
        return self.root / ref[:2] / ref[2:]

    def put(self, data: bytes) -> str:
        ref = blob_ref(data)
        path = self._path(ref)
        if _holds(path, ref):
            # Written by another put, which may not have synced it yet (or by a release that
            # did not sync): this one names it in history too.
            _sync_file(path)
            _sync_dir(path.parent)
            return ref
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
            _sync_dir(path.parent.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fdatasync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _sync_dir(path.parent)
        return ref

    def get(self, ref: str) -> bytes:
        path = self._path(ref)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            if (whole := self._written_whole(ref)) is not None:
                return whole
            raise StoreMissing(
                f"Blob {ref} is not in the store at {self.root}. Every worker of this "
                "workflow must use the same OUTLAST_STORE_DIR.",
                ref=ref,
            ) from None
        if not names(ref, data):
            raise StoreCorrupt(
                f"Blob {ref} in the store at {self.root} is damaged: its {len(data)} bytes "
                "are not what its name says (a machine that went down as it was written?). "
                f"The file is {path}.",
                ref=ref,
            )
        return data

    def _written_whole(self, ref: str) -> bytes | None:
        """The blob a short name names, written under the whole digest by a release before
        2026-12-07 (a run that went on across the upgrade can name it short: an ended
        agent's read stamps, which the workflow names itself)."""
        if len(ref) != REF_HEX_DIGITS:
            return None
        for path in (self.root / ref[:2]).glob(ref[2:] + "?" * (64 - REF_HEX_DIGITS)):
            data = path.read_bytes()
            if names(path.parent.name + path.name, data):
                return data
        return None


def _holds(path: Path, ref: str) -> bool:
    try:
        return names(ref, path.read_bytes())
    except FileNotFoundError:
        return False


def _sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def _sync_dir(path: Path) -> None:
    # The rename is only on disk once its directory is.
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def state_dir() -> Path:
    """The worker's state directory: `$OUTLAST_HOME`, else `./.outlast`."""
    return Path(os.environ.get("OUTLAST_HOME") or Path.cwd() / ".outlast").absolute()


def make_state_dir(root: Path | None = None) -> Path:
    """The state directory (`root`, else `state_dir()`), created if need be, with a
    `.gitignore` of `*` in it when new: by default it is `./.outlast`, often inside the very
    checkout an agent works on, whose `git status` (and the agent's commits) must not pick up
    conversations and the server's database."""
    root = root or state_dir()
    if root.is_dir():
        return root
    try:
        root.mkdir(parents=True)
        (root / ".gitignore").write_text("# Outlast's state: not for version control.\n*\n")
    except OSError as e:
        raise StateDirError(
            f"cannot make the state directory {root} ({e.strerror or e}): set OUTLAST_HOME "
            "to a directory this user can write"
        ) from None
    return root


class StateDirError(RuntimeError):
    """The state directory cannot be made; the message says what to set."""


def default_store() -> LocalBlobStore:
    root = os.environ.get("OUTLAST_STORE_DIR") or state_dir() / "store"
    return LocalBlobStore(root)
