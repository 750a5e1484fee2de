"""Garbage-collector pauses of every Python process started with this directory on
PYTHONPATH and GC_PROBE=1: per generation, collections, total and longest pause, and each full
(generation 2) collection as (seconds since start, ms, objects collected). Written to
`$GC_PROBE_DIR/gc-<pid>.txt` (default /tmp) at most every 0.5 s, as a collection ends: a
worker exits with `os._exit`, so nothing could be written at exit.

    GC_PROBE=1 PYTHONPATH=bench/gc_probe python bench/fanout.py --rounds 5 --inflight 0

(The bench's worker inherits the environment.) This is how `worker.freeze_startup_heap` was
measured: see "Garbage-collector pauses" in bench/RESULTS.md.
"""

import gc
import os
import sys
import time

if os.environ.get("GC_PROBE"):
    _T0 = time.perf_counter()
    _state = {"written": 0.0, "start": 0.0}
    _gens: dict[int, list[float]] = {0: [0, 0.0, 0.0], 1: [0, 0.0, 0.0], 2: [0, 0.0, 0.0]}
    _full: list[tuple[float, float, int]] = []
    _out = os.path.join(os.environ.get("GC_PROBE_DIR", "/tmp"), f"gc-{os.getpid()}.txt")

    def _write() -> None:
        with open(_out, "w") as f:
            f.write(f"argv={sys.argv} frozen={gc.get_freeze_count()}\n")
            for gen, (count, total, longest) in _gens.items():
                f.write(
                    f"gen{gen}: {count:.0f} collections, {total * 1000:.1f} ms, "
                    f"longest {longest * 1000:.1f} ms\n"
                )
            f.write(f"full collections (s, ms, collected): {_full}\n")

    def _on_gc(phase: str, info: dict) -> None:
        now = time.perf_counter()
        if phase == "start":
            _state["start"] = now
            return
        took, gen = now - _state["start"], info["generation"]
        stats = _gens[gen]
        stats[0] += 1
        stats[1] += took
        stats[2] = max(stats[2], took)
        if gen == 2:
            _full.append((round(now - _T0, 2), round(took * 1000, 1), info["collected"]))
        if now - _state["written"] > 0.5:
            _state["written"] = now
            _write()

    gc.callbacks.append(_on_gc)
