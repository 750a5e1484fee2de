"""`outlast run` as a user runs it: a real process, against a running server and model."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import scripted_model

SCRIPT = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {"text": "Looking.", "tool_use": {"name": "Grep", "input": {"pattern": "hello"}}},
                {"text": "greet() says hello."},
            ],
        }
    ]
}


def test_run_starts_follows_and_prints_the_answer(dev_server, git_repo, state_root):
    with scripted_model(SCRIPT) as model:
        env = {
            **os.environ,
            "TEMPORAL_ADDRESS": dev_server.address,
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "k",
            "OUTLAST_HOST_ID": "cli-test",
            "COLUMNS": "200",
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "outlast.cli",
                "run",
                "What does greet say?",
                "--repo",
                str(git_repo),
                "--id",
                "cli-run-1",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "workflow cli-run-1" in done.stdout
    assert "completed after 2 turns" in done.stdout
    assert "greet() says hello." in done.stdout
