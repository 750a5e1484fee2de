"""`python -m outlast.scripted_model` as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest

from tests.scripted_model.conftest import request, user

ROOT = Path(__file__).resolve().parents[2]
SCRIPT_YAML = """\
model: claude-scripted
agents:
  - name: main
    turns:
      - text: "ticket {{ticket}} in {{cwd}}"
        tool_use: {name: Read, input: {file_path: "{{cwd}}/calc.py"}}
"""


def first_line(proc: subprocess.Popen[str], timeout: float = 15.0) -> str:
    """The first stdout line, without hanging the test if the process never prints."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not line:
        raise AssertionError("the server printed nothing")
    return line[0]


@pytest.fixture
def cli_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    script = tmp_path / "scenario.yaml"
    script.write_text(SCRIPT_YAML)
    log = tmp_path / "model.jsonl"
    argv = ["--script", str(script), "--port", "0", "--log", str(log), "--var", "ticket=T-1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "outlast.scripted_model", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = first_line(proc)
        found = re.fullmatch(r"scripted model listening on (http://127\.0\.0\.1:\d+)\n", line)
        assert found, f"unexpected first line {line!r}"
        yield found.group(1), log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


async def test_cli_serves_the_script(cli_server: tuple[str, Path]) -> None:
    url, log = cli_server
    client = anthropic.AsyncAnthropic(api_key="test", base_url=url, max_retries=0)
    try:
        message = await client.messages.create(**request([user("hi")]))
    finally:
        await client.close()
    assert message.content[0].text == "ticket T-1 in /work/proj"
    assert message.content[1].input == {"file_path": "/work/proj/calc.py"}
    assert message.model == "claude-scripted"
    # The file record is written when the request ends, which may be just after the client
    # has read the response (the in-memory log is the one that is never behind).
    for _ in range(100):
        if log.exists() and log.read_text().strip():
            break
        await asyncio.sleep(0.05)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["agent"], r["outcome"]) for r in records] == [("main", "completed")]


def test_cli_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("agents:\n  - name: a\n    turns:\n      - txt: typo\n")
    done = subprocess.run(
        [sys.executable, "-m", "outlast.scripted_model", "--script", str(script), "--port", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "txt" in done.stderr and done.stdout == ""
