"""What each pattern costs on Temporal: history events and Temporal Cloud billable actions.

Runs every pattern once, end to end, with the scripted model (zero latency) on a fresh git
checkout of the demo's sample repository: a single agent (`outlast demo`'s scenario), an agent
with two sub-agents (a small scenario below), and the coordinator, pipeline, team, fork-join
and verified patterns (`outlast demo --pattern ...` scenarios). Then it fetches the history of
every workflow the run started (the pattern's own workflow, every agent, every run of each)
and counts, per pattern, per agent and per turn (model call):

- history events;
- billable actions estimated from those events by Temporal Cloud's rules (bench/actions.py);
- the dev server's own `action` metric over the same run (its metrics endpoint), which also
  counts what no history shows: activity heartbeats that reached the server, queries.

    python bench/cost_model.py [--patterns single,subagents,...] [--per-agent] [--latency-ms 0]

Prints a Markdown table, then one line per pattern:
`cost <pattern>: agents=<n> turns=<n> events=<n> actions=<n> actions_per_agent=<x>
actions_per_turn=<x> heartbeats=<n> billed_with_heartbeats=<n> server_actions=<n>`.
`actions` is the history estimate; `billed_with_heartbeats` adds the heartbeats and queries
the server saw; `server_actions` is the raw metric (it also counts the TemporalChangeVersion
upserts of `workflow.patched`, which Cloud does not bill). Each pattern's line in the log says
whether estimate and metric agree once those are accounted for.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml  # noqa: E402
from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause  # noqa: E402
from temporalio.client import Client, WorkflowExecutionStatus  # noqa: E402

from agents.config import ModelCallMode, ModelSettings, OutlastConfig  # noqa: E402
from bench.actions import Event, PatternCost, pattern_cost  # noqa: E402
from bench.harness import (  # noqa: E402
    BenchDevServer,
    add_model_mode,
    client_for,
    dev_server,
    model_env,
    model_mode,
    scripted_model_process,
)
from outlast.demo import HERE as DEMO_DIR  # noqa: E402
from outlast.demo import TASK as DEMO_TASK  # noqa: E402
from outlast.demo import make_sample_repo  # noqa: E402
from outlast.demo.patterns import SCENARIO_DIR, SCENARIOS, completed_run  # noqa: E402
from outlast.patterns import PatternArgs, build_pattern_input, start_pattern  # noqa: E402
from worker import build_workers  # noqa: E402

SUBAGENT_TASK = (
    "Find out why the tests of this repository fail: have one sub-agent study calc.py and "
    "another the tests, then report the cause."
)
TESTS_PATH = "{{cwd}}/tests/test_calc.py"
SUBAGENT_SCRIPT: dict[str, Any] = {
    "agents": [
        {
            "name": "code-reader",
            "match": {"prompt_contains": "Study calc.py"},
            "turns": [
                {"tool_use": {"name": "Grep", "input": {"pattern": "def ", "path": "{{cwd}}"}}},
                {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/calc.py"}}},
                {"text": "mean() divides by len(values) - 1 instead of len(values)."},
            ],
        },
        {
            "name": "test-reader",
            "match": {"prompt_contains": "Study tests/test_calc.py"},
            "turns": [
                {"tool_use": {"name": "Glob", "input": {"pattern": "tests/*.py"}}},
                {"tool_use": {"name": "Read", "input": {"file_path": TESTS_PATH}}},
                {"text": "The tests expect the arithmetic mean; test_mean_of_one expects 5."},
            ],
        },
        {
            "name": "main",
            "turns": [
                {
                    "text": "Two sub-agents, one per side.",
                    "tool_use": [
                        {
                            "name": "Agent",
                            "input": {
                                "description": "study calc.py",
                                "prompt": "Study calc.py: what does mean() compute?",
                                "subagent_type": "general-purpose",
                            },
                        },
                        {
                            "name": "Agent",
                            "input": {
                                "description": "study the tests",
                                "prompt": "Study tests/test_calc.py: what do they expect?",
                                "subagent_type": "general-purpose",
                            },
                        },
                    ],
                },
                {"text": "Cause: mean() divides by len(values) - 1; the tests are right."},
            ],
        },
    ]
}
PATTERNS = ("single", "subagents", "coordinator", "pipeline", "team", "fork-join", "verified")
WAIT_S = 180


def load_yaml(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def scenario(pattern: str) -> tuple[dict[str, Any], PatternArgs]:
    """The model script and the start arguments of one pattern (repo and host filled later)."""
    if pattern == "single":
        return load_yaml(DEMO_DIR / "scenario.yaml"), PatternArgs("single", DEMO_TASK, "", "")
    if pattern == "subagents":
        return SUBAGENT_SCRIPT, PatternArgs("single", SUBAGENT_TASK, "", "")
    s = SCENARIOS[pattern]
    args = PatternArgs(
        pattern=pattern,
        task=s.task,
        repo="",
        host_id="",
        teammates=list(s.teammates),
        team_tasks=list(s.team_tasks),
        forks=list(s.forks),
    )
    return load_yaml(SCENARIO_DIR / s.script), args


# --- history events -> bench.actions.Event ---------------------------------------------------


def to_event(e: Any) -> Event:
    """The billing-relevant parts of a `temporalio.api.history.v1.HistoryEvent`."""
    name = EventType.Name(e.event_type).removeprefix("EVENT_TYPE_")
    kw: dict[str, Any] = {}
    if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        a = e.workflow_execution_started_event_attributes
        kw["started_by_workflow"] = a.HasField("parent_workflow_execution") or bool(
            a.continued_execution_run_id
        )
    elif e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        a = e.workflow_execution_signaled_event_attributes
        kw["started_by_workflow"] = bool(a.external_workflow_execution.workflow_id)
    elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        kw["activity_type"] = e.activity_task_scheduled_event_attributes.activity_type.name
    elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        kw["attempt"] = e.activity_task_started_event_attributes.attempt
    elif e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
        a = e.marker_recorded_event_attributes
        kw["workflow_task_completed_event_id"] = a.workflow_task_completed_event_id
        if a.marker_name == "core_local_activity":
            data = json.loads(a.details["data"].payloads[0].data)
            # A marker with `backoff` records a retry scheduled on a timer, not a call.
            if not data.get("backoff"):
                kw["activity_type"] = data["activity_type"]
    elif e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        meta = e.workflow_task_completed_event_attributes.metering_metadata
        kw["local_activity_retries"] = meta.nonfirst_local_activity_execution_attempts
    elif e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        a = e.upsert_workflow_search_attributes_event_attributes
        kw["search_attributes"] = tuple(sorted(a.search_attributes.indexed_fields))
    elif e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
        cause = e.workflow_task_failed_event_attributes.cause
        kw["cause"] = WorkflowTaskFailedCause.Name(cause).removeprefix(
            "WORKFLOW_TASK_FAILED_CAUSE_"
        )
    return Event(type=name, event_id=e.event_id, **kw)


# --- the server's own count ----------------------------------------------------------------

ACTION_LINE = re.compile(r"^action\{(?P<labels>[^}]*)\}\s+(?P<value>[0-9.e+]+)$")


def server_actions(metrics_text: str) -> Counter[str]:
    """The frontend's `action` counter by action_type, from Prometheus text."""
    out: Counter[str] = Counter()
    for line in metrics_text.splitlines():
        m = ACTION_LINE.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m["labels"]))
        out[labels.get("action_type", "?")] += int(float(m["value"]))
    return out


def scrape(server: BenchDevServer) -> Counter[str]:
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 - our local dev server
        return server_actions(r.read().decode())


async def settled_scrape(server: BenchDevServer) -> Counter[str]:
    """The counters once they stop moving: the server reports its metrics every second or
    so, not as they happen."""
    last = scrape(server)
    stable = 0
    while stable < 3:
        await asyncio.sleep(0.5)
        now = scrape(server)
        stable = stable + 1 if now == last else 0
        last = now
    return last


# --- one pattern -----------------------------------------------------------------------------


async def run_pattern(
    client: Client,
    server: BenchDevServer,
    pattern: str,
    base: Path,
    latency_ms: int = 0,
    local_model: ModelCallMode = False,
) -> tuple[PatternCost, Counter[str], bool]:
    script, args = scenario(pattern)
    script = {**script, "latency_ms": latency_ms}
    repo = make_sample_repo(base / pattern / "repo")
    host = f"cost-{uuid.uuid4().hex[:8]}"
    tq = f"cost-{uuid.uuid4().hex[:8]}"
    args.repo, args.host_id = repo, host
    args.config = OutlastConfig(model=ModelSettings(max_attempts=3, local_activity=local_model))
    inp = build_pattern_input(args)
    seen = {w.run_id async for w in client.list_workflows()}
    before = await settled_scrape(server)
    with scripted_model_process(script) as url, model_env(url, base / pattern / "store"):
        workers = build_workers(client, task_queue=tq, host_queue=f"outlast-host-{host}")
        serving = [asyncio.create_task(w.run()) for w in workers]
        try:
            handle = await start_pattern(
                client, args.pattern, inp, workflow_id=f"cost-{pattern}-{host}", task_queue=tq
            )
            result = await asyncio.wait_for(handle.result(), WAIT_S)
            ok = completed_run(result)
            runs = await settled_runs(client, seen)
        finally:
            for w in workers:
                await w.shutdown()
            await asyncio.gather(*serving, return_exceptions=True)
    after = await settled_scrape(server)
    histories = []
    for wf in runs:
        h = client.get_workflow_handle(wf.id, run_id=wf.run_id)
        events = [to_event(e) async for e in h.fetch_history_events()]
        histories.append((wf.id, wf.workflow_type, events))
    return pattern_cost(pattern, histories), after - before, ok


async def settled_runs(client: Client, seen: set[str]) -> list[Any]:
    """Every run started since `seen`, once all of them have closed (abandoned children and
    notifications may outlive the pattern's result by a moment)."""
    deadline = time.monotonic() + 60
    while True:
        runs = [w async for w in client.list_workflows() if w.run_id not in seen]
        if all(w.status != WorkflowExecutionStatus.RUNNING for w in runs):
            return runs
        if time.monotonic() > deadline:
            running = [w.id for w in runs if w.status == WorkflowExecutionStatus.RUNNING]
            print(f"  (still running after 60 s, counted as they are: {running})")
            return runs
        await asyncio.sleep(0.5)


# --- report ----------------------------------------------------------------------------------

BREAKDOWN = (
    ("activities", ("schedule_activity", "retry_activity", "retry_local_activity")),
    ("children", ("start_child_workflow",)),
    ("starts", ("start_workflow", "continue_as_new")),
    ("signals", ("signal",)),
    ("timers", ("start_timer",)),
    ("search attr.", ("upsert_search_attributes",)),
    ("markers", ("record_markers",)),
    ("updates", ("accept_update",)),
)
HEARTBEATS = ("grpc_RecordActivityTaskHeartbeat", "grpc_RecordActivityTaskHeartbeatById")


def hidden(server: Counter[str]) -> int:
    """Billable actions that no history shows: heartbeats that reached the server, queries."""
    return sum(server[k] for k in HEARTBEATS) + server["grpc_QueryWorkflow"]


def table(rows: Sequence[tuple[PatternCost, Counter[str]]]) -> str:
    head = (
        "| pattern | workflows | agents | turns | history events | events/turn | actions (est.) "
        "| actions/agent | actions/turn | "
        + " | ".join(name for name, _ in BREAKDOWN)
        + " | heartbeats | queries | billed (est. + heartbeats + queries) | server `action` |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for cost, server in rows:
        kinds = cost.kinds
        parts = [str(sum(kinds[k] for k in keys)) for _, keys in BREAKDOWN]
        lines.append(
            f"| {cost.pattern} | {len(cost.workflows)} | {cost.agents} | {cost.turns} "
            f"| {cost.events} | {cost.events / max(cost.turns, 1):.1f} | {cost.actions} "
            f"| {cost.per_agent():.1f} | {cost.per_turn():.2f} | "
            + " | ".join(parts)
            + f" | {sum(server[k] for k in HEARTBEATS)} | {server['grpc_QueryWorkflow']} "
            f"| {cost.actions + hidden(server)} | {sum(server.values())} |"
        )
    return "\n".join(lines)


def agent_table(cost: PatternCost) -> str:
    lines = [
        f"\n{cost.pattern}:",
        "| workflow | type | runs | turns | events | actions | actions/turn |",
        "|---|---|---|---|---|---|---|",
    ]
    for w in cost.workflows:
        per_turn = f"{w.actions / w.turns:.2f}" if w.turns else "-"
        lines.append(
            f"| {w.workflow_id} | {w.workflow_type} | {w.runs} | {w.turns} | {w.events} "
            f"| {w.actions} | {per_turn} |"
        )
    return "\n".join(lines)


def unexplained(cost: PatternCost, server: Counter[str]) -> int:
    """Server actions the estimate does not explain: the server's total minus what no history
    shows (heartbeats, queries), minus the TemporalChangeVersion upserts the server counts
    and Cloud does not bill, minus the estimate. 0 when the two agree."""
    return sum(server.values()) - hidden(server) - cost.exempt - cost.actions


async def main(
    patterns: list[str],
    per_agent: bool,
    show_server: bool,
    latency_ms: int,
    local_model: ModelCallMode,
) -> None:
    rows: list[tuple[PatternCost, Counter[str]]] = []
    with tempfile.TemporaryDirectory() as tmp, dev_server(metrics=True) as server:
        client = await client_for(server)
        for pattern in patterns:
            t0 = time.perf_counter()
            cost, srv, ok = await run_pattern(
                client, server, pattern, Path(tmp), latency_ms, local_model
            )
            print(
                f"{pattern}: {'ok' if ok else 'NOT COMPLETED'} in {time.perf_counter() - t0:.1f} s,"
                f" {len(cost.workflows)} workflows"
            )
            if show_server:
                print("  server action types:", dict(sorted(srv.items())))
            diff = unexplained(cost, srv)
            print(
                "  estimate agrees with the server's action metric"
                if diff == 0
                else f"  note: the server counted {diff:+d} actions the estimate does not explain"
            )
            rows.append((cost, srv))
    print()
    print(table(rows))
    if per_agent:
        for cost, _ in rows:
            print(agent_table(cost))
    print()
    for cost, srv in rows:
        print(
            f"cost {cost.pattern}: agents={cost.agents} turns={cost.turns} events={cost.events} "
            f"actions={cost.actions} actions_per_agent={cost.per_agent():.1f} "
            f"actions_per_turn={cost.per_turn():.2f} "
            f"heartbeats={sum(srv[k] for k in HEARTBEATS)} "
            f"billed_with_heartbeats={cost.actions + hidden(srv)} "
            f"server_actions={sum(srv.values())}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--patterns", default=",".join(PATTERNS))
    parser.add_argument("--per-agent", action="store_true", help="also a table per workflow")
    parser.add_argument("--server-types", action="store_true", help="print the server's kinds")
    parser.add_argument(
        "--latency-ms",
        type=int,
        default=0,
        help="scripted model latency per answer: a model call heartbeats about once a second",
    )
    add_model_mode(parser)
    args = parser.parse_args()
    chosen = [p.strip() for p in args.patterns.split(",") if p.strip()]
    unknown = set(chosen) - set(PATTERNS)
    if unknown:
        parser.error(f"unknown patterns {sorted(unknown)}; choose from {', '.join(PATTERNS)}")
    asyncio.run(
        main(
            chosen,
            args.per_agent,
            args.server_types,
            args.latency_ms,
            model_mode(args),
        )
    )
