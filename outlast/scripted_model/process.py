"""The scripted model in a process of its own, for runs that must not share the GIL with it:
benchmarks measuring a worker, and tests whose conversations are long enough for the
server's work to slow the worker beside it."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml


@contextlib.contextmanager
def scripted_model_process(script: dict[str, Any]) -> Iterator[str]:
    """`python -m outlast.scripted_model` serving `script`; yields its base URL."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "script.yaml"
        path.write_text(yaml.safe_dump(script))
        proc = subprocess.Popen(
            [sys.executable, "-m", "outlast.scripted_model", "--script", str(path), "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = proc.stdout.readline().strip() if proc.stdout else ""
            if "listening on" not in line:
                raise RuntimeError(f"scripted model did not start: {line!r}")
            yield line.rsplit(" ", 1)[-1]
        finally:
            proc.terminate()
            proc.wait(timeout=10)
