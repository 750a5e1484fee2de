"""Bad CLI arguments are refused with a message saying what is wrong; nothing starts."""

from __future__ import annotations

from typer.testing import CliRunner

from outlast.cli import app

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, list(args), env={"TEMPORAL_ADDRESS": "127.0.0.1:9", **(env or {})})


def test_missing_repo(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path / "nope"))
    assert out.exit_code == 2 and "no such directory" in out.output


def test_unknown_agent_lists_the_available_ones(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), "--agent", "Wizard")
    assert out.exit_code == 2
    assert "Agent type 'Wizard' not found" in out.output and "Explore" in out.output


def test_empty_task(tmp_path):
    out = run("run", "  ", "--repo", str(tmp_path))
    assert out.exit_code == 2 and "task is empty" in out.output


def test_no_api_key_for_the_in_process_worker(tmp_path):
    out = run(
        "run",
        "fix it",
        "--repo",
        str(tmp_path),
        env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": ""},
    )
    assert out.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in out.output


def test_max_turns_must_be_positive(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), "--max-turns", "0")
    assert out.exit_code == 2 and "max-turns" in out.output
