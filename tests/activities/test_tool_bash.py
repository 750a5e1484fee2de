"""Bash (spec T4) with real processes: exit codes, timeouts, cancellation, cwd, env, sandbox."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.testing import ActivityEnvironment

from activities import heartbeats
from activities.sandbox import BWRAP_REQUIRED, WRITER_SANDBOX_ENV
from activities.sandbox_tmp import sandbox_tmp
from activities.tools.base import ToolContext, ToolOutput
from activities.tools.bash import (
    BACKGROUND_REFUSED,
    BashInput,
    BashRequest,
    run_bash,
)


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run records and kill marks of this test only: a kill mark outlives its test."""
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "inside.txt").write_text("inside\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def request(root: Path, command: str, cwd: Path | str | None = None, **kw: object) -> BashRequest:
    sandbox = kw.pop("sandbox", "none")
    ctx = ToolContext(workspace_root=str(root), cwd=str(cwd or root), sandbox=sandbox)
    return BashRequest(ctx=ctx, input=BashInput(command=command, **kw))


async def bash(root: Path, command: str, **kw: object) -> ToolOutput:
    return await ActivityEnvironment().run(run_bash, request(root, command, **kw))


def marker(seconds: int = 100) -> str:
    """A `sleep` argument of about `seconds` that no other process on the machine is using."""
    return f"{seconds}.{random.randint(10**6, 10**7)}"


def live_pids(mark: str) -> list[int]:
    """Processes, zombies excluded, whose command line contains `sleep {mark}`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if f"sleep {mark}" in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


async def eventually(check: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(0.05)
    return check()


async def gone_by(mark: str, started: float, within: float = 2.0) -> bool:
    """Whether every process of `mark` is gone within `within` seconds of `started`: the
    sandbox's inner processes die just after its outer bubblewrap is reaped, not with it."""
    left = max(0.0, started + within - time.monotonic())
    return await eventually(lambda: not live_pids(mark), within=left)


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "/"
        for p in sorted(root.rglob("*"))
    }


async def test_echo(ws: Path) -> None:
    out = await bash(ws, "echo hello")
    assert (out.content, out.is_error, out.cwd) == ("hello", False, None)


async def test_stdout_and_stderr_are_both_returned(ws: Path) -> None:
    out = await bash(ws, "echo out; echo err >&2")
    assert out.content == "out\nerr"


async def test_nonzero_exit_is_an_error_with_the_code(ws: Path) -> None:
    out = await bash(ws, "echo partial; exit 3")
    assert out.is_error
    assert out.content == "Exit code 3\npartial"


async def test_timeout_kills_the_command(ws: Path) -> None:
    mark = marker(3)
    started = time.monotonic()
    out = await bash(ws, f"echo before; sleep {mark}", timeout=1000)
    assert time.monotonic() - started < 2.0
    assert out.is_error
    assert out.content == "Command timed out after 1000ms\nbefore"
    assert await eventually(lambda: not live_pids(mark), within=1.0)


@pytest.mark.parametrize("sandbox", ["bwrap", "off"])
async def test_a_timeout_as_the_command_starts_leaves_nothing_running(
    ws: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    """A timeout of a few milliseconds ends the call while bubblewrap is still setting up,
    when a kill would leave the sandboxed command running outside its group."""
    monkeypatch.setenv(WRITER_SANDBOX_ENV, sandbox)
    for timeout in range(1, 11):
        mark = marker()
        out = await bash(ws, f"sleep {mark}", timeout=timeout)
        assert out.content == f"Command timed out after {timeout}ms"
        assert await gone_by(mark, time.monotonic()), f"timeout {timeout} ms: still running"


@pytest.mark.parametrize("cancels", [1, 2], ids=["one-cancel", "a-second-during-the-kill"])
async def test_a_cancel_as_the_command_is_spawned_leaves_nothing_running(
    ws: Path, monkeypatch: pytest.MonkeyPatch, cancels: int
) -> None:
    """The cancel lands while asyncio is still starting the process, a few milliseconds
    into bubblewrap's set-up: bubblewrap killed then would leave the sandboxed command
    running, unrecorded. A second cancel, while the kill waits for the set-up, must not
    stop the kill."""
    monkeypatch.setenv(WRITER_SANDBOX_ENV, "bwrap")
    real_popen = subprocess.Popen
    for delay_ms in (1, 3, 5):
        mark, calls = marker(), []

        def cancelled_as_it_starts(args, *rest, mark=mark, calls=calls, ms=delay_ms, **kw):
            proc = real_popen(args, *rest, **kw)
            if any(mark in str(arg) for arg in args):  # the command, not the probe
                time.sleep(ms / 1000)  # into the sandbox's set-up
                calls[0].cancel()
                if cancels == 2:  # while the kill waits for the set-up (0.2 s)
                    asyncio.get_running_loop().call_later(0.05, calls[0].cancel)
            return proc

        monkeypatch.setattr(subprocess, "Popen", cancelled_as_it_starts)
        calls.append(asyncio.create_task(bash(ws, f"sleep {mark}")))
        with pytest.raises(asyncio.CancelledError):
            await calls[0]
        await asyncio.sleep(1.0)  # a command left behind would be running by now
        assert not live_pids(mark), f"cancelled {delay_ms} ms in: the command outlived it"


async def test_cancellation_kills_the_whole_process_tree(ws: Path) -> None:
    mark = marker()
    env = ActivityEnvironment()
    req = request(ws, f"sleep {mark} & sleep {mark} & wait")
    task = asyncio.create_task(env.run(run_bash, req))
    assert await eventually(lambda: len(live_pids(mark)) >= 2, within=3.0)
    env.cancel()
    with pytest.raises(asyncio.CancelledError):
        # The activity must give up promptly, not once the 100 s sleeps end.
        await asyncio.wait_for(task, timeout=2.0)
    assert await eventually(lambda: not live_pids(mark), within=2.0)
    # Nor is the empty directory left that the writer sandbox mounted the call's scratch on.
    assert not list(Path(sandbox_tmp(str(ws))).glob("outlast-bash-*"))


async def test_background_leftovers_do_not_outlive_or_block_the_call(ws: Path) -> None:
    mark = marker()
    started = time.monotonic()
    out = await bash(ws, f"sleep {mark} & echo started")
    assert time.monotonic() - started < 2.0
    assert out.content == "started"
    assert await eventually(lambda: not live_pids(mark), within=1.0)


async def test_heartbeats_while_running(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heartbeats, "HEARTBEAT_INTERVAL_S", 0.4)  # 5 s in production
    beats: list[tuple] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    started = time.monotonic()
    out = await env.run(run_bash, request(ws, "sleep 1.5"))
    took = time.monotonic() - started
    assert not out.is_error
    # One an interval, the first after one: at most one a started interval, and a late beat
    # (the loop busy) may cost one of the three a 1.5 s command spans.
    assert 2 <= len(beats) <= took / 0.4 + 1, (len(beats), took)


async def test_long_output_is_truncated_to_30000_chars(ws: Path) -> None:
    out = await bash(ws, "head -c 40000 /dev/zero | tr '\\0' x")
    assert not out.is_error
    assert out.content.startswith("x" * 30000 + "\n")
    assert out.content.count("x") == 30000
    assert "10000 characters cut" in out.content


async def test_cd_persists_through_the_returned_cwd(ws: Path) -> None:
    moved = await bash(ws, "mkdir -p sub/dir && cd sub/dir")
    assert moved.cwd == str(ws / "sub" / "dir")
    stayed = await bash(ws, "pwd", cwd=moved.cwd)
    assert stayed.content == str(ws / "sub" / "dir")
    assert stayed.cwd is None
    after_exit = await bash(ws, "cd sub && exit 4")
    assert after_exit.is_error and after_exit.cwd == str(ws / "sub")


async def test_cd_out_of_the_workspace_is_reset(ws: Path) -> None:
    out = await bash(ws, "cd / && echo moved", cwd=ws / "inside_dir_missing")
    assert out.cwd == str(ws)
    assert out.content == f"moved\nShell cwd was reset to {ws}"
    away = await bash(ws, "cd /")
    assert away.cwd == str(ws)
    assert away.content == f"Shell cwd was reset to {ws}"


async def test_secrets_are_not_in_the_environment(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-leak")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-leak")
    monkeypatch.setenv("OUTLAST_HARMLESS", "kept")
    out = await bash(ws, "env; echo key=$ANTHROPIC_API_KEY")
    assert "leak" not in out.content
    assert "key=\n" in out.content + "\n"
    lines = out.content.split("\n")
    assert {"OUTLAST_HARMLESS=kept", "GIT_TERMINAL_PROMPT=0", "PAGER=cat"} <= set(lines)


async def test_timeout_over_the_maximum_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        BashInput(command="true", timeout=700000)
    assert BashInput(command="true", timeout=600000).timeout == 600000


async def test_run_in_background_is_refused(ws: Path) -> None:
    out = await bash(ws, "touch made", run_in_background=True)
    # Where the workflow does not launch it (a teammate's, or background tasks disabled).
    assert out.is_error and out.content == BACKGROUND_REFUSED
    assert not (ws / "made").exists()


# --- Read-only sandbox -----------------------------------------------------------------------


async def test_read_only_sandbox_blocks_writes(ws: Path) -> None:
    before = snapshot(ws)
    out = await bash(ws, "cat inside.txt && echo x > f", sandbox="read_only")
    assert out.is_error
    assert out.content.startswith("Exit code 1\ninside\n")
    assert "Read-only file system" in out.content
    assert not (ws / "f").exists()
    assert snapshot(ws) == before


async def test_read_only_sandbox_cannot_be_lifted_by_the_model(ws: Path) -> None:
    out = await bash(ws, "echo x > f", sandbox="read_only", dangerouslyDisableSandbox=True)
    assert out.is_error
    assert not (ws / "f").exists()


async def test_read_only_sandbox_has_no_network(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The control runs unsandboxed: a writer's sandbox has its own /tmp, which hides a Python
    # that lives under the host's /tmp (as in a CI checkout there).
    monkeypatch.setenv(WRITER_SANDBOX_ENV, "off")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        script = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
        command = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} && echo connected"
        control = await bash(ws, command)
        assert control.content == "connected"  # the listener is reachable unsandboxed
        sandboxed = await bash(ws, command, sandbox="read_only")
    assert sandboxed.is_error
    assert "connected" not in sandboxed.content.split("\n")


async def test_read_only_sandbox_keeps_cwd_and_kills_on_timeout(ws: Path) -> None:
    (ws / "sub").mkdir()
    moved = await bash(ws, "cd sub", sandbox="read_only")
    assert moved.cwd == str(ws / "sub")
    mark = marker()
    started = time.monotonic()
    out = await bash(ws, f"sleep {mark}", sandbox="read_only", timeout=500)
    assert time.monotonic() - started < 2.0
    assert out.is_error and out.content.startswith("Command timed out after 500ms")
    assert await eventually(lambda: not live_pids(mark), within=2.0)


async def test_read_only_without_bubblewrap_is_refused(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    out = await bash(ws, "echo ran", sandbox="read_only")
    assert out.is_error
    assert out.content == BWRAP_REQUIRED
    assert "bubblewrap" in out.content


async def test_a_command_whose_output_passes_the_cap_is_killed_and_says_so(ws: Path) -> None:
    """A program printing without end is killed once its output passes the cap (it went to
    the worker's /tmp without a bound until the timeout: a disk, or memory, filled); the
    model gets the start of the output and why it stopped."""
    started = time.monotonic()
    out = await bash(ws, "head -c 70000000 /dev/zero | tr '\\0' y; sleep 30; echo never")
    assert time.monotonic() - started < 15
    assert out.is_error
    assert out.content.startswith("Command killed: its output passed 64 MB (its start below)\n")
    assert "yyyy" in out.content and "never" not in out.content


async def test_a_directory_name_that_is_not_utf_8_fails_nothing(ws: Path) -> None:
    """`cd` into a directory whose name is not UTF-8: the result held the name (decoded with
    surrogateescape), no payload could carry it, the activity failed after the command had
    run and its retry ran the command again. The shell stays where it was and says so; an
    output with such a name shows U+FFFD for it."""
    from temporalio.contrib.pydantic import pydantic_data_converter

    out = await bash(ws, "mkdir \"$(printf 'caf\\351')\" && cd \"$(printf 'caf\\351')\" && pwd")
    assert not out.is_error, out.content
    assert out.cwd is None and f"Shell cwd stays {ws}" in out.content, out.content
    assert "caf\ufffd" in out.content
    await pydantic_data_converter.encode([out])  # a payload can carry it
    # A tool that lists such a name from Python (Glob) has it surrogate-escaped.
    listed = ToolOutput(content=os.fsdecode(b"caf\xe9.txt") + "\nhalf \ud83d emoji")
    assert listed.content == "caf\ufffd.txt\nhalf \ufffd emoji"
    await pydantic_data_converter.encode([listed])
