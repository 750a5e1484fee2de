"""A worker process freezes its heap as it starts serving: the ~220,000 objects of its modules
are then out of every later full collection, which scanned them all while the worker waited
(see `worker.freeze_startup_heap`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SERVE_THEN_STOP = """
import asyncio, gc, os, signal, worker
async def main():
    asyncio.get_running_loop().call_later(0.1, os.kill, os.getpid(), signal.SIGTERM)
    await worker.serve_until_stopped([])
before = gc.get_freeze_count()
asyncio.run(main())
print(before, gc.get_freeze_count(), len(gc.get_objects(generation=2)))
"""


def test_serving_freezes_the_worker_s_startup_heap() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SERVE_THEN_STOP],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    before, frozen, scanned = map(int, done.stdout.split())
    assert before == 0
    assert frozen > 100_000  # the imported modules: temporalio, anthropic, pydantic, Outlast
    assert scanned < frozen / 10  # what a full collection still scans
