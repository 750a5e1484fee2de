"""The `hooks.run_command` activity: a real shell command, its stdin, env, exit and timeout."""

from __future__ import annotations

import json
import os
from pathlib import Path

from activities.hooks import HookRunInput, run_hook_command


def inp(command: str, cwd: Path, timeout_s: float = 10, **stdin) -> HookRunInput:
    return HookRunInput(
        command=command, cwd=str(cwd), stdin=stdin, timeout_s=timeout_s, project_dir="/proj"
    )


async def test_the_command_reads_the_event_and_reports_its_exit(tmp_path):
    run = await run_hook_command(
        inp('cat; echo; echo "$CLAUDE_PROJECT_DIR"; pwd; echo oops >&2; exit 2', tmp_path, a=1)
    )
    assert run.exit_code == 2 and not run.timed_out
    out, project, cwd = run.stdout.splitlines()
    assert json.loads(out) == {"a": 1} and project == "/proj" and cwd == str(tmp_path)
    assert run.stderr == "oops\n"


async def test_secrets_stay_out_of_its_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("HOOK_TEST_VISIBLE", "yes")
    run = await run_hook_command(inp("env", tmp_path))
    assert "sk-secret" not in run.stdout and "HOOK_TEST_VISIBLE=yes" in run.stdout


async def test_a_timeout_kills_the_group_and_is_a_result(tmp_path):
    pid_file = tmp_path / "pid"
    run = await run_hook_command(inp(f"sleep 300 & echo $! > {pid_file}; wait", tmp_path, 0.5))
    assert run.timed_out and run.exit_code is None
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or " Z " in Path(f"/proc/{pid}/stat").read_text()


async def test_a_missing_directory_is_reported_not_raised(tmp_path):
    run = await run_hook_command(inp("true", tmp_path / "gone"))
    assert run.exit_code is None and "does not exist" in run.error


async def test_huge_output_is_cut(tmp_path):
    run = await run_hook_command(inp("head -c 200000 /dev/zero | tr '\\0' x", tmp_path))
    assert run.exit_code == 0 and run.stdout.endswith("[output cut]")
    assert len(run.stdout) < 70_000
    assert os.path.isdir(tmp_path)
