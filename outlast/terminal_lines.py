"""Lines the person types at the terminal, read without a thread.

`asyncio.to_thread(input)` cannot be cancelled, and at exit Python waits for the thread: a
Ctrl-C at the prompt printed "detached" and then hung until Enter was pressed. Reading the
file descriptor when the event loop says it is readable leaves nothing behind: a cancelled
read just stops watching it. On a terminal in its usual (canonical) mode the descriptor turns
readable once a whole line is typed, so the terminal's own line editing still works.
"""

from __future__ import annotations

import asyncio
import os
import sys


class TerminalLines:
    """Lines from stdin (a terminal: `outlast run` asks only when stdin is one); text typed
    after a line that was read waits for the next read. One read at a time."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = sys.stdin.fileno() if fd is None else fd
        self._buffer = b""
        self._ended = False

    async def read(self, still_asked, every_s: float = 1.0) -> str | None:
        """The next line (without its newline); None once `still_asked()` says False (checked
        every `every_s` seconds while no line comes).

        Raises:
            EOFError: the input ended.
        """
        loop = asyncio.get_running_loop()
        while b"\n" not in self._buffer:
            if self._ended:
                if not self._buffer:
                    # A terminal's Ctrl-D ends this answer only; a pipe's end is for good.
                    self._ended = not os.isatty(self._fd)
                    raise EOFError
                break
            readable = loop.create_future()
            loop.add_reader(self._fd, _resolve, readable)
            try:
                done, _ = await asyncio.wait({readable}, timeout=every_s)
            finally:
                loop.remove_reader(self._fd)
            if not done:
                if not await still_asked():
                    return None
                continue
            chunk = os.read(self._fd, 4096)
            self._buffer += chunk
            self._ended = not chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)
