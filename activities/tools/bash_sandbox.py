"""The command line a Bash command runs as: inside the agent's bubblewrap sandbox, or why it
cannot run.

A read-only agent's commands (sandbox `readonly`, `copy`) run only under bubblewrap; a writer's
(`none`) run under it where it works, as `OUTLAST_WRITER_SANDBOX` says (activities/sandbox.py).
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from activities.host_tmp import HostTmpRefused
from activities.sandbox import (
    BWRAP_REQUIRED,
    WRITER_BWRAP_REQUIRED,
    WRITER_SANDBOX_ENV,
    bwrap_command,
    find_bwrap,
    working_bwrap,
    writer_bwrap_command,
    writer_policy,
)
from activities.sandbox_tmp import sandbox_tmp
from activities.tools.base import ToolContext
from activities.workspace import workspace_root

log = logging.getLogger(__name__)


def sandbox_argv(ctx: ToolContext, script: str, scratch: str, cwd: Path) -> list[str] | str:
    """The command line in the agent's sandbox, or why it cannot run."""
    root = str(workspace_root(ctx))
    writable = [str(Path(p).resolve()) for p in ctx.extra_roots if Path(p).is_dir()]
    readable = [str(Path(p).resolve()) for p in ctx.read_roots if Path(p).is_dir()]
    if ctx.sandbox == "none":
        # dangerouslyDisableSandbox is accepted but never lifts a sandbox: a model that can
        # switch it off (a prompt injection, say) would make it worth nothing.
        return _writer_argv(root, scratch, cwd, script, writable, readable)
    bwrap = find_bwrap()
    if bwrap is None:
        return BWRAP_REQUIRED
    tmp = None
    if ctx.sandbox == "copy":
        writable.append(root)  # bound after the read-only mount, so it wins
        # R81: the verifier may write test scripts to /tmp, and run them in its next call.
        try:
            tmp = sandbox_tmp(root)
        except HostTmpRefused as e:
            return f"Bash is unavailable: {e.message} Use Read, Glob and Grep instead."
    argv = ["bash", "-c", script]
    return bwrap_command(bwrap, root, scratch, str(cwd), argv, writable, tmp, readable)


def _writer_argv(
    root: str, scratch: str, cwd: Path, script: str, writable: list[str], readable: list[str]
) -> list[str] | str:
    policy = writer_policy()
    bwrap = None if policy == "off" else working_bwrap()
    if bwrap is not None:
        try:
            return writer_bwrap_command(
                bwrap, root, scratch, str(cwd), ["bash", "-c", script], writable, readable
            )
        except HostTmpRefused as e:
            return f"Bash is unavailable: {e.message} Use Read, Write, Edit, Glob and Grep instead."
    if policy == "bwrap":
        return WRITER_BWRAP_REQUIRED
    if policy == "auto":
        _warn_unsandboxed()
    return ["bash", "-c", script]


@functools.cache
def _warn_unsandboxed() -> None:
    log.warning(
        "writers' Bash commands run unsandboxed: bubblewrap does not work on this worker "
        "(set %s=bwrap to refuse them instead)",
        WRITER_SANDBOX_ENV,
    )
