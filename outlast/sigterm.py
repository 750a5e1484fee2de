"""SIGTERM for the commands that serve workers in their own process while they follow a run
(`outlast run`, `outlast demo`): it stops them as Ctrl-C does.

Python's default SIGTERM ends the process at once: the in-process workers were not shut down,
so the server heard of the running tool only when its heartbeat timed out (30 s) before
another worker took it, and a Bash command run outside the sandbox (in a session of its own)
ran on after the process had gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator


class Termed:
    """Whether SIGTERM came while `cancel_on_sigterm` was in force."""

    def __init__(self) -> None:
        self.came = False


@contextlib.contextmanager
def cancel_on_sigterm() -> Iterator[Termed]:
    """Within: SIGTERM cancels the current task, as Ctrl-C does under `asyncio.run`, so its
    `finally` blocks shut the workers down (a running tool's process group is killed)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    termed = Termed()

    def on_sigterm() -> None:
        termed.came = True
        if task is not None:
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    try:
        yield termed
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
