"""A dev server started for this process only (`outlast dev`) does not outlive a start that
fails or is interrupted before the server is ready."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from outlast.demo import embedded_ui
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


def test_two_commands_starting_the_server_at_once_start_one(tmp_path) -> None:
    """Two `outlast run`s at once, nothing listening yet: both started a server, and the one
    that lost the port failed with "exited at start" and left its own dead pid in the pid
    file (so `outlast server-stop` could no longer stop the server that ran). One starts it,
    the other waits for it and uses it."""
    port = free_port()
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from outlast.devserver import DevServer\n"
        f"server = DevServer(state_dir=Path(sys.argv[1]), host='127.0.0.1', port={port}, "
        "headless=True)\n"
        "print(server.ensure_running())\n"
    )
    server = DevServer(state_dir=tmp_path, host="127.0.0.1", port=port, headless=True)
    runs: list[subprocess.Popen] = []
    try:
        for _ in range(2):
            runs.append(
                subprocess.Popen(
                    [sys.executable, "-c", code, str(tmp_path)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            )
        outputs = [run.communicate(timeout=120)[0] for run in runs]
        assert [run.returncode for run in runs] == [0, 0], outputs
        assert sorted(out.strip().splitlines()[-1] for out in outputs) == ["False", "True"]
        pid = int(server.pid_file.read_text())
        assert f"--port\0{port}\0".encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        assert server.stop() is True
    finally:
        for run in runs:
            run.kill()
        _stop_servers_of(tmp_path / "temporal.db")


def test_a_start_that_finds_the_server_running_changes_nothing(tmp_path) -> None:
    """`outlast dev` checked the port before it waited for another command's start: it then
    started a second server on the same address, which died, its pid in the pid file."""
    first = DevServer(state_dir=tmp_path, host="127.0.0.1", port=free_port(), headless=True)
    try:
        assert first.ensure_running() is True
        pid = first.pid_file.read_text()
        with pytest.raises(DevServerError, match="already listens on"):
            first.start(detach=True)
        assert first.pid_file.read_text() == pid
    finally:
        _stop_servers_of(tmp_path / "temporal.db")


def _stop_servers_of(db: Path) -> None:
    """Kill every dev server on `db`, whatever its pid file says."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"start-dev" in argv and str(db).encode() in argv:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(cmdline.parent.name), signal.SIGKILL)


def test_server_stop_leaves_the_server_of_a_foreground_dev_to_it(tmp_path) -> None:
    """`outlast server-stop` stopped the server under a running `outlast dev`, whose worker
    then retried its polls for good (a user test, 2026-12-07). Here this process plays
    `outlast dev`: it started the server in its own session."""
    server = DevServer(
        state_dir=tmp_path, host="127.0.0.1", port=free_port(), headless=True, persist=False
    )
    proc = server.start(detach=False)
    try:
        assert server.foreground_owner() == os.getpid()
        # Its owner gone, the server handed to another parent (a subreaper) is nobody's.
        server.owner_file.write_text("1")
        assert server.foreground_owner() is None
        server.owner_file.write_text(str(os.getpid()))
        done = subprocess.run(
            [sys.executable, "-m", "outlast.cli", "server-stop"],
            env={**os.environ, "OUTLAST_HOME": str(tmp_path), "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        said = " ".join(done.stdout.split())
        assert done.returncode == 1 and f"(pid {os.getpid()})" in said, said
        assert "nothing was stopped" in said and proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    background = server.start(detach=True)
    try:
        assert server.foreground_owner() is None  # `run`'s and `demo`'s: stopped as before
        assert server.stop() is True
    finally:
        background.kill()


def test_server_start_runs_the_embedded_server_on_any_port_in_the_background(tmp_path) -> None:
    """Only `outlast dev` started one off 7233, in the foreground with its worker: a worker
    could not be killed and started again on its own (a user test, 2026-12-07)."""
    port, ui_port = free_port(), free_port()

    def outlast(home: Path, *args: str, address: str | None = None) -> tuple[int, str]:
        env = {**os.environ, "OUTLAST_HOME": str(home), "COLUMNS": "300"}
        env.pop("TEMPORAL_ADDRESS", None)
        done = subprocess.run(
            [sys.executable, "-m", "outlast.cli", *args],
            env={**env, "TEMPORAL_ADDRESS": address} if address else env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        return done.returncode, " ".join((done.stdout + done.stderr).split())

    home, other = tmp_path / "home", tmp_path / "other"
    start = ("server-start", "--port", str(port), "--ui-port", str(ui_port))
    code, said = outlast(home, *start)
    try:
        assert code == 0 and f"on localhost:{port}" in said, said
        assert f"`TEMPORAL_ADDRESS=localhost:{port} outlast worker`" in said, said
        server = DevServer(state_dir=home, port=port, ui_port=ui_port)
        assert server.healthy() and server.foreground_owner() is None
        # `outlast demo` with TEMPORAL_ADDRESS naming it gives this server's Web UI link (it
        # gave none: a user test, 2026-12-07), and no link for another server.
        mine = DevServer(state_dir=home)
        assert embedded_ui(mine, f"127.0.0.1:{port}") == f"http://localhost:{ui_port}"
        assert embedded_ui(mine, f"localhost:{free_port()}") is None
        code, again = outlast(home, *start)
        assert code == 0 and f"already running on localhost:{port}" in again, again
        code, elsewhere = outlast(home, *start[:3], "--ui-port", str(port + 1))
        assert f"its Web UI is on port {ui_port}, not {port + 1}" in elsewhere, elsewhere
        code, same = outlast(home, "server-start", "--port", str(port), "--ui-port", str(port))
        assert code == 2 and "the Web UI needs a port of its own" in same, same
        # A command aimed elsewhere names where this OUTLAST_HOME's server is (it said
        # "start it with `outlast dev`", which that server refuses: a user test).
        code, lost = outlast(home, "ls", address=f"localhost:{free_port()}")
        assert code == 2 and f"embedded server runs on localhost:{port}" in lost, lost
        # Another OUTLAST_HOME's server is not this one's to use by its port.
        code, taken = outlast(other, *start)
        assert code == 2 and f"something else listens on localhost:{port}" in taken, taken
    finally:
        code, stopped = outlast(home, "server-stop")
    assert code == 0 and stopped == "stopped", stopped
