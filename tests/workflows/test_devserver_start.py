"""A dev server started for this process only (`outlast dev`) does not outlive a start that
fails or is interrupted before the server is ready."""

from __future__ import annotations

import subprocess

import pytest

from outlast.devserver import DevServer, DevServerError
from tests.support import free_port


def test_a_start_interrupted_before_ready_stops_the_server(tmp_path, monkeypatch) -> None:
    started: list[subprocess.Popen] = []

    def interrupted(self, proc=None, timeout: float = 60.0) -> None:  # noqa: ANN001
        started.append(proc)
        raise KeyboardInterrupt  # as `outlast dev`'s SIGTERM handler raises it

    monkeypatch.setattr(DevServer, "wait_ready", interrupted)
    server = DevServer(
        state_dir=tmp_path, host="127.0.0.1", port=free_port(), headless=True, persist=False
    )
    with pytest.raises(KeyboardInterrupt):
        server.start(detach=False)
    (proc,) = started
    try:
        assert proc.wait(timeout=10) is not None
    finally:
        proc.kill()


def test_server_stop_kills_only_the_dev_server_its_pid_file_names(tmp_path) -> None:
    """The pid file outlives its server (a crash, a reboot): a recycled pid is not killed."""
    server = DevServer(
        state_dir=tmp_path, host="127.0.0.1", port=free_port(), headless=True, persist=False
    )
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        server.pid_file.write_text(str(bystander.pid))
        assert server.stop() is False
        assert bystander.poll() is None and not server.pid_file.exists()
    finally:
        bystander.kill()
    proc = server.start(detach=True)
    try:
        assert server.stop() is True
        assert proc.wait(timeout=30) is not None
    finally:
        proc.kill()


def test_a_second_server_on_one_state_directory_is_refused(tmp_path) -> None:
    """`outlast dev --port 7300` runs; `outlast run` (port 7233, nothing listens there) started
    a second server on the same SQLite database. It is refused, naming the one that runs."""
    first = DevServer(state_dir=tmp_path, host="127.0.0.1", port=free_port(), headless=True)
    proc = first.start(detach=True)
    try:
        second = DevServer(state_dir=tmp_path, host="127.0.0.1", port=free_port(), headless=True)
        with pytest.raises(DevServerError) as refused:
            second.ensure_running()
        assert f"already runs on {first.address}" in str(refused.value)
        assert f"TEMPORAL_ADDRESS={first.address}" in str(refused.value)
        assert not second.running()
        assert first.live_elsewhere() is None  # its own address: not "elsewhere"
    finally:
        first.stop()
        proc.wait(timeout=30)
