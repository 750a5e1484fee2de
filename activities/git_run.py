"""Git as a subprocess of an activity: bounded in time, killed with everything it started,
and, for reads, without the optional locks that would fail a commit running meanwhile."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

NO_OPTIONAL_LOCKS = {"GIT_OPTIONAL_LOCKS": "0"}
"""For git commands that only read: without optional locks, a status would rewrite the index
under index.lock, and fail the user's or an agent's git commit or add that runs meanwhile.
(An environment variable, where `--no-optional-locks` would make a git older than 2.15
refuse the whole command.)"""


GIT_READ_TIMEOUT_S = 90.0
"""The longest a read of git state (a status of the whole checkout) may take; below the
worktree activities' 2-minute limit, and far above what a status of a large checkout takes.
One that takes longer is hung (a stuck filesystem, an fsmonitor hook that never answers), and
its thread would hold up the worker's shutdown, which waits for every thread of its executor."""


def read_git(cwd: str, *args: str, timeout: float) -> subprocess.CompletedProcess[bytes]:
    """`git <args>` for a read (`NO_OPTIONAL_LOCKS`): `run_git`'s."""
    return run_git(cwd, *args, timeout=timeout, env=NO_OPTIONAL_LOCKS)


def run_git(
    cwd: str, *args: str, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`git <args>`, its output captured. After `timeout` seconds it is killed with
    everything it started (an fsmonitor or checkout hook that hangs is git's child, and
    would outlive git alone): raises `subprocess.TimeoutExpired`."""
    proc = subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,  # nothing to ask: a prompt must fail, not wait
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, to kill as one
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:  # the timeout, or this thread's interpreter going down
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        # Bounded, where `with Popen` would wait for good: a git stuck in the kernel (the
        # stuck filesystem) outlives SIGKILL, and an escapee may hold the pipes.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=5)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
