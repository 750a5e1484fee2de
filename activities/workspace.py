"""The workspace boundary and the file primitives every tool shares.

Every path a tool touches goes through `resolve_in_workspace`, which resolves symlinks before
checking the boundary, so neither `../../etc/passwd` nor a symlink pointing out of the workspace
gets through. The files are then opened by walking the resolved path again without following
any link (`activities.beneath`), so a link swapped in between the check and the open is refused
rather than followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from activities.beneath import open_dir
from agents.canonical import blob_ref, names

if TYPE_CHECKING:
    from activities.tools.base import FileStamp, ToolContext


class WorkspaceEscape(Exception):
    """A tool path resolves outside the workspace root.

    Attributes:
        path: The resolved path the tool asked for.
        root: The resolved workspace root.
    """

    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.root = root
        super().__init__(
            f"Path {path} is outside the workspace {root}; tools may only touch files inside it."
        )


class InvalidToolPath(WorkspaceEscape):
    """A path no file can have (a NUL byte): refused before the OS sees it."""

    def __init__(self, path: str, root: Path) -> None:
        self.path, self.root = Path(path.replace("\x00", "\\0")), root
        Exception.__init__(
            self, f"Path {path!r} contains a NUL byte; no file name can. Give the path again."
        )


class UnresolvablePath(WorkspaceEscape):
    """A path whose symlinks cannot be followed to an end (a loop, or a name too long)."""

    def __init__(self, path: Path, root: Path, error: Exception) -> None:
        self.path, self.root = path, root
        why = (
            "a symbolic link in it leads back to itself"
            if isinstance(error, RuntimeError)
            else (getattr(error, "strerror", None) or str(error))
        )
        Exception.__init__(self, f"Path {path} cannot be resolved: {why}.")


def resolved_path(path: Path, root: Path) -> Path:
    """`path` with every existing symlink resolved.

    Raises:
        UnresolvablePath: A symlink loop (Python 3.11 raises RuntimeError for one) or an OS
            error such as a name too long.
    """
    try:
        return path.resolve(strict=False)
    except (RuntimeError, OSError) as e:
        raise UnresolvablePath(path, root, e) from None


class GitMetadataWrite(WorkspaceEscape):
    """A write into the repository's `.git` directory: hooks and config there run code on the
    next git command, so tools never write them."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path, self.root = path, root
        Exception.__init__(
            self,
            f"{path} is git's own metadata (a `.git` directory or file): tools may not write it "
            "(hooks and config there would run code). Use git commands for what git should "
            "record.",
        )


class OutsideWriteScope(WorkspaceEscape):
    """A write to a file the agent did not declare (a coordinator's implementation worker
    may change only the files it was launched for, R59)."""

    def __init__(self, path: Path, root: Path, scope: tuple[str, ...]) -> None:
        self.path, self.root = path, root
        if scope:
            message = (
                f"{path} is not among the files this worker declared ({', '.join(scope)}); "
                "only those may be changed, so that workers changing other files can run at "
                "the same time. If the task needs this file, stop and report that instead."
            )
        else:
            message = (
                f"{path} is in the repository, which this agent may only read (a research or "
                "verification worker, or a helper of an agent that is planning). Notes belong "
                "in the scratchpad if there is one; report what should change instead."
            )
        Exception.__init__(self, message)


def _only_readable(ctx: ToolContext, resolved: Path) -> bool:
    """Inside one of `ctx.read_roots` and none of the directories the agent may change."""
    if any(resolved.is_relative_to(Path(extra).resolve()) for extra in ctx.extra_roots):
        return False
    return any(resolved.is_relative_to(Path(r).resolve()) for r in ctx.read_roots)


def resolve_for_write(ctx: ToolContext, path: str) -> Path:
    """`resolve_in_workspace`, and inside the agent's write scope if it has one.

    Raises:
        WorkspaceEscape: outside the workspace, or (OutsideWriteScope) outside the scope.
    """
    if ctx.plan_mode:
        return _plan_file_only(ctx, path)
    resolved = resolve_in_workspace(ctx, path)
    root = workspace_root(ctx)
    if any(resolved.is_relative_to(Path(r).resolve()) for r in ctx.read_roots):
        # Wherever it lies (a state directory inside the checkout too): never written.
        raise WorkspaceEscape(resolved, root)
    inside = resolved.relative_to(root).parts if resolved.is_relative_to(root) else ()
    # Any `.git` (a submodule's, a worktree's `.git` file, `.GIT` on a case-insensitive disk):
    # repointing one makes the worker's own git commands run what it points at.
    if any(part.casefold() == ".git" for part in inside):
        raise GitMetadataWrite(resolved, root)
    if ctx.write_scope is None:
        return resolved
    if not resolved.is_relative_to(root):
        return resolved  # a shared scratchpad is never scoped
    relative = resolved.relative_to(root).as_posix()
    for allowed in ctx.write_scope:
        if allowed == "." or relative == allowed or relative.startswith(allowed + "/"):
            return resolved
    raise OutsideWriteScope(resolved, root, ctx.write_scope)


class PlanModeWrite(WorkspaceEscape):
    """In plan mode a write may touch the plan file and nothing else (R76, R80)."""

    def __init__(self, path: Path, plan_file: str, why: str) -> None:
        self.path, self.root = path, Path(plan_file)
        Exception.__init__(
            self,
            f"Plan mode is active: {path} {why}. The only file you may write is your plan, "
            f"{plan_file}; everything else waits until the plan is approved.",
        )


def _plan_file_only(ctx: ToolContext, path: str) -> Path:
    """The plan file, if `path` names it exactly and it is no symlink to elsewhere."""
    plan = Path(ctx.plan_file or "")
    requested = Path(os.path.normpath(Path(ctx.cwd, path)))
    if requested != plan:
        raise PlanModeWrite(requested, str(plan), "is not the plan file")
    resolved = resolved_path(requested, plan.parent)
    if resolved != resolved_path(plan, plan.parent) or (plan.is_symlink()):
        raise PlanModeWrite(requested, str(plan), "is a link to another file")
    return resolved


def workspace_root(ctx: ToolContext) -> Path:
    """The workspace root with symlinks resolved."""
    return Path(ctx.workspace_root).resolve()


def resolve_in_workspace(ctx: ToolContext, path: str) -> Path:
    """Resolve a tool path and check that it stays inside the workspace.

    Args:
        ctx: The calling agent's context; relative paths are taken from `ctx.cwd`.
        path: The path as the model gave it. `~` is not expanded: it is a literal name.

    Returns:
        The absolute path with every existing symlink resolved. The file need not exist.

    Raises:
        WorkspaceEscape: The resolved path is neither inside the workspace nor inside one
            of `ctx.extra_roots`; or it cannot be resolved (`UnresolvablePath`).
    """
    if "\x00" in path:
        raise InvalidToolPath(path, workspace_root(ctx))
    candidate = Path(ctx.cwd, path)  # an absolute `path` replaces ctx.cwd
    root = workspace_root(ctx)
    resolved = resolved_path(candidate, root)
    if resolved.is_relative_to(root):
        return resolved
    if any(resolved.is_relative_to(Path(extra).resolve()) for extra in ctx.extra_roots):
        return resolved
    if _only_readable(ctx, resolved):
        return resolved
    if ctx.plan_file and resolved == Path(ctx.plan_file).resolve():
        return resolved  # an agent that planned reads its plan, in plan mode or after
    raise WorkspaceEscape(resolved, root)


def _file_stamp_cls() -> type[FileStamp]:
    # Imported late: importing activities.tools runs the registry, which imports the tool
    # modules, which import this module; a top-level import would make that a cycle whenever
    # this module is imported first.
    from activities.tools.base import FileStamp

    return FileStamp


def stamp_of_bytes(data: bytes, st: os.stat_result) -> FileStamp:
    """The stamp of content already in memory, with the metadata from `st`."""
    return _file_stamp_cls()(sha256=file_digest(data), mtime_ns=st.st_mtime_ns, size=st.st_size)


# A stamp's digest is what the blob store would name the file's bytes (agents/canonical.py):
# half the SHA-256, each stamp being in history with the output of the Read, Write or Edit
# that took it (issue 9); a stamp of the whole digest, recorded before 2026-12-07, still
# counts, and one of any other length (a client's `""`) is no content's.
file_digest = blob_ref
is_digest_of = names


def _umask() -> int:
    # os.umask() can only be read by setting it, which races with other threads of the worker.
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def atomic_write(path: Path, data: bytes, *, create: bool = False) -> FileStamp:
    """Replace `path` with `data` so readers see the old or the new file, never a torn one.

    The parent directories are created. An existing file keeps its permission bits; a new one
    gets the usual `0o666 & ~umask`. Every step goes through one descriptor of the parent,
    reached without following links, so a link swapped into the path meanwhile is never
    written through: the rename replaces a link at the leaf itself (R13).

    Args:
        path: Absolute, with every link resolved (as `resolve_in_workspace` returns it).
        create: The file must not exist: one that appeared since the caller looked is left
            as it is (FileExistsError), not replaced unread.

    Returns:
        The stamp of the written file.
    """
    parent = open_dir(path.parent, create=True)
    try:
        return _write_in(parent, path.name, data, create)
    finally:
        os.close(parent)


def _write_in(parent: int, name: str, data: bytes, create: bool = False) -> FileStamp:
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    tmp = _create_temp(parent, name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        if create:
            _put_new(parent, tmp, name)
        else:
            os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=parent)
        raise
    # The rename is durable only once the directory entry is on disk; an O_PATH descriptor
    # cannot be synced, so the directory is opened for reading through it.
    dir_fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return stamp_of_bytes(data, os.stat(name, dir_fd=parent, follow_symlinks=False))


NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV})
"""What `link` fails with where a filesystem has no hard links (vfat, exFAT, some FUSE and
network mounts)."""


def _put_new(parent: int, tmp: str, name: str) -> None:
    """Move `tmp` to `name`, which must not exist (FileExistsError): a hard link fails where
    the name exists, where a rename would replace it."""
    try:
        os.link(tmp, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
    except OSError as e:
        if e.errno not in NO_HARD_LINKS:
            raise
        # No hard links here: a look just before the rename is the best this filesystem allows.
        try:
            os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
            return
        raise FileExistsError(errno.EEXIST, "File exists", name) from None
    os.unlink(tmp, dir_fd=parent)


def _create_temp(parent: int, name: str) -> str:
    """A new empty file next to `name`, made with O_EXCL so no existing entry is reused."""
    for _ in range(100):
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=parent,
            )
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(errno.EEXIST, f"no free temporary name next to {name}")
