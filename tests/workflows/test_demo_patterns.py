"""`outlast demo --pattern X`: each pattern's bundled scenario, end to end on the test server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from outlast.cli import app
from outlast.demo import run_demo
from outlast.demo import tests_pass as sample_tests_pass
from outlast.demo.patterns import DEMO_PATTERNS, SCENARIO_DIR, SCENARIOS, run_pattern_demo
from outlast.scripted_model import load_script
from worker import host_id
from workflows.contracts import host_task_queue

FIXED = "return sum(values) / len(values)"


@pytest.fixture
def demo_home(tmp_path: Path, dev_server, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo's state under tmp_path, against the session's dev server; the model env the
    demo sets is put back afterwards."""
    monkeypatch.setenv("TEMPORAL_ADDRESS", dev_server.address)
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
    return tmp_path


async def run(pattern: str, home: Path) -> tuple[bool, str, Path, list[dict]]:
    console = Console(record=True, width=200)
    ok = await run_pattern_demo(console, pattern, latency_ms=0)
    (run_dir,) = (home / "demo").glob(f"*-{pattern}")
    log = [json.loads(line) for line in (run_dir / "model.jsonl").read_text().splitlines()]
    return ok, console.export_text(), run_dir / "repo", log


def names(log: list[dict]) -> set[str]:
    return {r["headers"].get("x-outlast-agent-name") for r in log} - {None, ""}


def assert_scripted_cleanly(pattern: str, log: list[dict]) -> None:
    """Every model call was answered by a scripted turn: none was refused, none ran past the
    end of an agent's turns."""
    assert all(r["outcome"] == "completed" for r in log), [r["error"] for r in log]
    script = load_script(SCENARIO_DIR / SCENARIOS[pattern].script)
    agents = {a.name: a for a in script.agents}
    for r in log:
        agent = agents[r["agent"]]
        assert agent.after_last == "repeat_last" or r["turn"] < len(agent.turns), r


async def test_coordinator_demo_fixes_the_sample(demo_home):
    ok, out, repo, log = await run("coordinator", demo_home)
    assert ok, out
    calc = (repo / "calc.py").read_text()
    assert FIXED in calc and "ValueError if empty" in calc
    assert sample_tests_pass(repo)
    assert_scripted_cleanly("coordinator", log)
    workers = {"read-calc", "read-tests", "read-readme", "fix-mean", "doc-mean", "run-tests"}
    assert names(log) == workers
    seqs = {
        n: [r["seq"] for r in log if r["headers"].get("x-outlast-agent-name") == n] for n in workers
    }
    assert max(seqs["fix-mean"]) < min(seqs["doc-mean"])  # same file: serialised
    assert max(seqs["doc-mean"]) < min(seqs["run-tests"])
    assert "sample tests now pass" in out and "workflow id: outlast-demo-coordinator-" in out


async def test_pipeline_demo_fixes_the_sample(demo_home):
    ok, out, repo, log = await run("pipeline", demo_home)
    assert ok, out
    assert FIXED in (repo / "calc.py").read_text()
    assert_scripted_cleanly("pipeline", log)
    assert [r["agent"] for r in log if r["turn"] == 0] == ["explore", "plan", "implement", "verify"]
    assert "VERDICT: PASS" in out and "sample tests now pass" in out
    # The progress lines end with the last stage's end, before the result's summary.
    assert "> stage verify: completed" in out, out
    assert re.search(r"4 stage runs, \d+ tool uses?, [1-9]\d* tokens, \d+\.\ds", out), out


async def test_team_demo_fixes_the_sample(demo_home):
    ok, out, repo, log = await run("team", demo_home)
    assert ok, out
    assert FIXED in (repo / "calc.py").read_text()
    assert_scripted_cleanly("team", log)
    agents = {r["agent"] for r in log}
    assert {"lead-ask", "lead-done", "reviewer-read", "reviewer-answer", "fixer"} <= agents
    assert "task #1 Fix mean() in calc.py: completed (fixer)" in out
    # The team started with the lead and the reviewer; the lead spawned the fixer (R69).
    assert "fixer (general-purpose): completed" in out
    assert re.search(r"3 members, \d+ tool uses?, [1-9]\d* tokens", out), out


async def test_fork_join_demo_audits_without_fixing(demo_home):
    ok, out, repo, log = await run("fork-join", demo_home)
    assert ok, out
    assert not sample_tests_pass(repo)  # a read-only audit
    assert_scripted_cleanly("fork-join", log)
    assert {"fork-calc", "fork-tests", "synthesis"} <= {r["agent"] for r in log}
    assert "fork 1: completed" in out and "fork 2: completed" in out
    assert "the sample stays unfixed" in out
    usage = r"2 forks and the synthesis, \d+ tool uses?, [1-9]\d* tokens, \d+\.\ds"
    assert re.search(usage, out), out


async def test_verified_demo(demo_home):
    ok, out, repo, log = await run("verified", demo_home)
    assert ok, out
    assert FIXED in (repo / "calc.py").read_text()
    assert sample_tests_pass(repo)
    assert_scripted_cleanly("verified", log)
    assert [r["agent"] for r in log if r["turn"] == 0] == [
        "implementer",
        "verifier-1",
        "verifier-2",
    ]
    assert "round 1: VERDICT: FAIL" in out and "round 2: VERDICT: PASS" in out
    assert "passed: round 2: VERDICT: PASS" in out and "sample tests now pass" in out
    assert re.search(r"2 rounds, \d+ tool uses?, [1-9]\d* tokens", out), out
    # The verifiers ran in their copies: the implementer's checkout has only its own edit.
    assert "calc.py | 2 +-" in out


async def test_the_demo_runs_on_queues_only_its_own_worker_serves(demo_home, client):
    """On the shared queues another worker of the server (an `outlast dev`, with a real
    model's key) took the demo's run and answered it with its own model (a user test,
    2026-12-07). The single demo and a pattern's each have queues of their own."""
    console = Console(record=True, width=200)
    assert await run_demo(console), console.export_text()
    ok, out, _, _ = await run("fork-join", demo_home)
    assert ok, out
    for said in (console.export_text(), out):
        workflow_id = re.search(r"workflow id: (\S+)", said).group(1)
        desc = await client.get_workflow_handle(workflow_id).describe()
        assert desc.task_queue.startswith("outlast-demo-"), desc.task_queue
        async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            [given] = await client.data_converter.decode(payloads, [dict])
            # The host's own: its `outlast worker` serves a later resume's tools.
            assert given["workspace"]["host_queue"] == host_task_queue(host_id()), given
            break


@pytest.mark.parametrize("pattern", ["debate", "swarm"])
def test_demo_refuses_a_pattern_without_a_scenario(pattern):
    done = CliRunner().invoke(app, ["demo", "--pattern", pattern])
    assert done.exit_code == 2
    assert all(p in done.output for p in ("single", *DEMO_PATTERNS))
