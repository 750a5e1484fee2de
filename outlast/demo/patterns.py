"""`outlast demo --pattern ...`: a scripted run of one orchestration pattern on the sample repo.

Like `outlast demo` (see outlast/demo/__init__.py), with real parts everywhere but the model's
words: the embedded Temporal dev server (or `$TEMPORAL_ADDRESS`), the in-process worker, real
tools on a fresh git checkout of the sample, and the Anthropic SDK talking over HTTP to the
scripted model server, which plays the scenario in outlast/demo/scenarios/<pattern>.yaml.
The texts each pattern starts from (task, teammates, task list, fork directives) live here;
the scenario scripts answer them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from temporalio.client import Client, WorkflowHandle

from activities.store import make_state_dir, state_dir
from activities.tools.process_groups import settle_kills
from outlast.demo import (
    HERE,
    connect_demo,
    demo_queues,
    demo_workers,
    end_demo,
    make_sample_repo,
    tests_pass,
    where_to_look,
)
from outlast.devserver import DevServer
from outlast.pattern_follow import follow_pattern
from outlast.pattern_output import print_pattern_result
from outlast.patterns import (
    PatternArgs,
    build_pattern_input,
    start_pattern,
    succeeded,
)
from outlast.scripted_model import ScriptedModelServer, load_script
from outlast.search_setup import missing_search_attributes
from outlast.sigterm import cancel_on_sigterm
from worker import KILLS_GRACE_S
from workflows.pattern_contracts import VerifiedTaskResult

SCENARIO_DIR = HERE / "scenarios"


@dataclass(frozen=True)
class Scenario:
    """What one pattern's demo starts from, and whether it should leave the sample fixed."""

    script: str
    task: str
    teammates: tuple[str, ...] = ()
    team_tasks: tuple[str, ...] = ()
    forks: tuple[str, ...] = ()
    fixes: bool = True


SCENARIOS: dict[str, Scenario] = {
    "coordinator": Scenario(
        script="coordinator.yaml",
        task=(
            "The test suite of this repository has failing tests. Find the cause, fix the code "
            "(not the tests), document what mean() does with an empty sequence, have the fix "
            "verified by running the tests, and report what changed."
        ),
    ),
    "pipeline": Scenario(
        script="pipeline.yaml",
        task=(
            "The test suite of this repository has failing tests for mean() in calc.py. Fix "
            "the code (not the tests) so that every test passes."
        ),
    ),
    "team": Scenario(
        script="team.yaml",
        task=(
            "You lead a team fixing the failing tests of this repository. Ask the reviewer "
            "what the tests of mean() check, and spawn a fixer to take the task on the shared "
            "list. Report to the user when the task is completed."
        ),
        # The fixer is not here: the lead spawns it with the Agent tool (R69).
        teammates=(
            "reviewer=Answer your teammates' questions about this repository's code and tests.",
        ),
        team_tasks=("Fix mean() in calc.py",),
    ),
    "fork-join": Scenario(
        script="fork_join.yaml",
        task=(
            "Audit this repository's statistics helpers for correctness: report wrong "
            "results with the line and the fix. This is a read-only audit: modify no files."
        ),
        forks=(
            "Audit calc.py: check what each function returns, and report any wrong result "
            "with its line and the fix.",
            "Audit tests/test_calc.py: report what each test expects, and which tests fail "
            "against calc.py as it is.",
        ),
        fixes=False,
    ),
    "verified": Scenario(
        script="verified.yaml",
        task=(
            "The test suite of this repository has failing tests for mean() in calc.py. Fix "
            "the code (not the tests) so that every test passes."
        ),
    ),
}
DEMO_PATTERNS = tuple(SCENARIOS)


async def run_pattern_demo(
    console: Console, pattern: str, *, keep_server: bool = True, latency_ms: int | None = None
) -> bool:
    """Run `pattern`'s scenario end to end on a fresh sample repo and report.

    Args:
        console: where progress and the report go.
        pattern: one of `DEMO_PATTERNS`.
        keep_server: False stops the embedded dev server afterwards (its history is kept).
        latency_ms: the scripted model's delay per answer, instead of the scenario's.

    Returns:
        True if the run completed (every member, stage or fork included; for `verified`,
        a verifier's PASS) and, for a scenario that fixes the bug, the sample's tests pass
        afterwards.
    """
    if pattern not in SCENARIOS:
        raise ValueError(f"no demo for pattern {pattern!r}; choose one of {DEMO_PATTERNS}")
    scenario = SCENARIOS[pattern]
    script = load_script(SCENARIO_DIR / scenario.script)
    if latency_ms is not None:
        script = script.model_copy(update={"latency_ms": latency_ms})
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = make_state_dir() / "demo" / f"{stamp}-{pattern}"
    repo = make_sample_repo(base / "repo")
    console.print(f"sample repo: {repo} (tests failing: {not tests_pass(repo)})")
    server = DevServer(state_dir=state_dir())
    with ScriptedModelServer(script, log_path=base / "model.jsonl") as model:
        os.environ["ANTHROPIC_BASE_URL"] = model.url
        os.environ["ANTHROPIC_API_KEY"] = "demo-key-for-the-scripted-model"
        client, ui, started = await connect_demo(console, server)
        queue, host = demo_queues(stamp)
        inp = _pattern_input(pattern, scenario, repo, host)
        inp = await _without_missing_attributes(client, inp)
        handle = await start_pattern(
            client, pattern, inp, workflow_id=f"outlast-demo-{pattern}-{stamp}", task_queue=queue
        )
        console.print(f"workflow [bold]{handle.id}[/] ({pattern})")
        workers = demo_workers(client, queue, host)
        result = await _follow_with_workers(client, handle, pattern, console, workers, queue)
    ok = _report(console, pattern, result, repo, scenario)
    # A server that ran before the demo is someone else's (an `outlast dev`): never stopped.
    where_to_look(console, handle.id, ui, server, keep_server or not started, queue)
    return ok


def _pattern_input(pattern: str, scenario: Scenario, repo: Path, host: str) -> Any:
    return build_pattern_input(
        PatternArgs(
            pattern=pattern,
            task=scenario.task,
            repo=repo,
            host_id=host,
            teammates=list(scenario.teammates),
            team_tasks=list(scenario.team_tasks),
            forks=list(scenario.forks),
        )
    )


async def _without_missing_attributes(client: Client, inp: Any) -> Any:
    """A namespace without Outlast's search attributes runs the demo without upserting them."""
    if not await missing_search_attributes(client):
        return inp
    config = inp.config.model_copy(update={"search_attributes": False})
    return inp.model_copy(update={"config": config})


async def _follow_with_workers(
    client: Client,
    handle: WorkflowHandle,
    pattern: str,
    console: Console,
    workers: list,
    task_queue: str,
) -> Any:
    serving = asyncio.gather(*(w.run() for w in workers))
    try:
        with cancel_on_sigterm():
            return await follow_pattern(handle, pattern, console, client)
    finally:
        await end_demo(client, handle, task_queue)
        for w in workers:
            await w.shutdown()
        with contextlib.suppress(Exception):
            await serving
        await settle_kills(KILLS_GRACE_S)  # a tool cancelled as its command started


def completed_run(result: Any) -> bool:
    """The workflow completed, and so did every member, stage and fork it reports; a verified
    task (rounds, no members, stages or forks) succeeds when a verifier said PASS."""
    if not succeeded(result):
        return False
    if isinstance(result, VerifiedTaskResult):
        return result.status == "passed"
    parts = [*getattr(result, "members", []), *getattr(result, "stages", [])]
    parts += getattr(result, "forks", [])
    return all(p.status == "completed" for p in parts)


def _report(console: Console, pattern: str, result: Any, repo: Path, scenario: Scenario) -> bool:
    if result is not None:
        print_pattern_result(pattern, result, console)
    passed = tests_pass(repo)
    diff = subprocess.run(["git", "diff", "--stat"], cwd=repo, capture_output=True, text=True)
    console.print(f"\nsample tests now {'[green]pass[/]' if passed else '[red]fail[/]'}")
    console.print(diff.stdout.rstrip() or "(no changes in the sample repo)")
    if not scenario.fixes:
        console.print(
            "this scenario only audits: the sample stays unfixed and its tests still fail; "
            "the demo succeeds when every fork and the synthesis complete"
        )
    return completed_run(result) and (passed or not scenario.fixes)
