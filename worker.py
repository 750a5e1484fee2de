"""Builds the workers that serve Outlast: wiring only.

Two task queues (design.md): `outlast` for workflows and model calls, which any worker may
serve, and `outlast-host-<host id>` for tools, which only the worker on the host holding the
checkout may serve. On one machine both run in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, NoReturn

from opentelemetry.trace import Tracer
from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.worker import Interceptor, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.context import render_context
from activities.definitions import definition_names, load_definitions
from activities.earlier_agents import EarlierAgents
from activities.handoff import classify_handoff
from activities.hooks import run_hook_command
from activities.host_steps import host_step_activities
from activities.llm import call_model, compact
from activities.local_tools import local_tool_activities
from activities.model_http import (
    check_base_url,
    check_credentials,
    check_http_backend,
    close_clients,
)
from activities.no_model import call_model_unavailable
from activities.plan_file import prepare_plan_file, read_plan
from activities.read_state import load_read_state
from activities.resume import AgentControl, append, repair
from activities.sandbox import writer_policy
from activities.scratchpad import create_scratchpad
from activities.snapshot import changed_files, head_commit, remove_snapshot, snapshot
from activities.spot_check import spot_check
from activities.store import make_state_dir
from activities.team_control import TeamControl
from activities.tools import ALL_ACTIVITIES as TOOL_ACTIVITIES
from activities.tools import KILL_ACTIVITIES
from activities.tools.bash_background import BACKGROUND_ACTIVITIES
from activities.tools.process_groups import settle_kills
from activities.transcript_export import export_transcript
from activities.web_fetch import web_fetch
from activities.web_search import web_search
from activities.worktree import create_worktree
from activities.worktree_cleanup import cleanup_worktree
from outlast import payload_visits, workflow_runner
from outlast.activity_log import ActivityLog
from outlast.build_id import code_build_id
from outlast.telemetry import GenAISpans
from outlast.update_refusals import UpdateRefusals
from workflows.agent import AgentWorkflow
from workflows.contracts import TASK_QUEUE, host_task_queue
from workflows.coordinator import CoordinatorWorkflow
from workflows.fork_join import ForkJoinWorkflow
from workflows.pipeline import PipelineWorkflow
from workflows.shell_task import ShellTaskWorkflow
from workflows.team import TeamWorkflow
from workflows.verified_task import VerifiedTaskWorkflow

WORKFLOWS = [
    AgentWorkflow,
    ForkJoinWorkflow,
    CoordinatorWorkflow,
    PipelineWorkflow,
    TeamWorkflow,
    VerifiedTaskWorkflow,
    ShellTaskWorkflow,
]
MODEL_ACTIVITIES = [call_model, compact, web_fetch, web_search]
HOST_ACTIVITIES = [
    *TOOL_ACTIVITIES,
    *KILL_ACTIVITIES,
    *BACKGROUND_ACTIVITIES,
    render_context,
    load_definitions,
    definition_names,
    create_worktree,
    cleanup_worktree,
    classify_handoff,
    repair,
    load_read_state,
    append,
    export_transcript,
    create_scratchpad,
    prepare_plan_file,
    read_plan,
    snapshot,
    remove_snapshot,
    changed_files,
    head_commit,
    run_hook_command,
    spot_check,
]


def model_activities(client: Client) -> list:
    """Main-queue activities: the model call, and those that need a Temporal client."""
    control, team = AgentControl(client), TeamControl(client)
    return [
        *MODEL_ACTIVITIES,
        control.resume_agent,
        control.describe_agents,
        control.await_closed,
        EarlierAgents(client).find_earlier,
        team.task_op,
        team.add_member,
    ]


# Tools pace their own heartbeats (activities/heartbeats.heartbeat_interval: every 5 s, or a
# third of a shorter heartbeat timeout), and each one must go out when it is made: the SDK's
# default throttle (up to 30 s, 80% of the timeout) would hold one back for 4 s of a 5 s
# timeout. A killed run's Bash command is killed on the host at once (`tool.bash_kill`).
HEARTBEAT_THROTTLE = timedelta(seconds=1)
# Model calls are abandoned on a kill (the workflow does not wait for them), so their
# heartbeats only need to show the worker is alive: every one sent is a server request and a
# billed action, and a long streamed answer would otherwise send one a second.
MODEL_HEARTBEAT_THROTTLE = timedelta(seconds=10)
# A workflow task waits this long for the worker that has the run cached before any worker
# may take it (and replay the history). The SDK's default, 10 s, was each run's stall after
# a worker crash (the dead worker's sticky queue is never polled again); 5 s is Go's default.
STICKY_TIMEOUT = timedelta(seconds=5)


def task_queue() -> str:
    """The main task queue a worker of this process serves: `OUTLAST_TASK_QUEUE`, else
    Outlast's (a demo's run has its own, which a worker serves by naming it)."""
    return os.environ.get("OUTLAST_TASK_QUEUE") or TASK_QUEUE


def host_id() -> str:
    return os.environ.get("OUTLAST_HOST_ID") or socket.gethostname()


# Imported once, outside the sandbox, instead of again for every workflow run:
# - `agents` is pure data and logic, and `activities` is only imported by workflows for its
#   types and activity references: one copy of each pydantic class keeps isinstance checks
#   true across the sandbox boundary;
# - `workflows`, every module of it. They keep no state between runs: module-level tables
#   are only read (no `global`, no module-level name changed from a function, no mutable
#   default argument, no cache, no attribute on a workflow class), and they call nothing but
#   the `workflow` API. tests/unit/test_determinism_rules.py checks all of that, since the
#   sandbox's proxies no longer see their calls (the sandbox still restricts builtins such
#   as `open` during an activation, and what they import at run time).
#   Re-importing the helpers per run cost ~60 ms of CPU per child workflow: a 16-way
#   fork-join took 2.5 s instead of 1.8 s (bench/fork_fanout.py). The modules that define
#   workflow classes were re-imported per run until 2026-12-01: executing `workflows.agent`
#   and decorating its class was 6% of the 20x5 fan-out worker's samples (py-spy), and each
#   cached run kept its own copy. Passing them through too took the 100-in-flight worker
#   from 180-184 MB to 174-176 MB and its CPU by 8%.
PASSTHROUGH = (
    "agents",
    "activities",
    "yaml",
    "anthropic",
    "httpx2",
    "workflows",
)


def sandbox_runner(data_converter: DataConverter | None = None) -> SandboxedWorkflowRunner:
    """With the workers' `data_converter`, one that answers the SDK's per-payload questions
    outside the sandbox where the converter ignores them (outlast/workflow_runner.py)."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH)
    return workflow_runner.sandbox_runner(restrictions, data_converter)


def check_environment() -> None:
    """Refuse a mistyped worker setting here, with its sentence (ValueError or RuntimeError),
    not at each Bash or model call: OUTLAST_WRITER_SANDBOX, OUTLAST_MODEL_HTTP (and aiohttp
    being usable), ANTHROPIC_BASE_URL, a state directory that cannot be made."""
    writer_policy()
    check_http_backend()
    check_base_url()
    make_state_dir()


WIRED_OPTIONS = frozenset(
    {"client", "task_queue", "workflows", "activities", "workflow_runner", "interceptors"}
)
"""`Worker` arguments that `build_workers` sets itself, so `main_options` and `tool_options`
may not: a different value would serve other queues or other code than Outlast's."""


def check_worker_options(options: Mapping[str, Any], which: str) -> None:
    """Refuse an option `build_workers` wires, or one `temporalio.worker.Worker` does not take,
    naming it, before any worker starts."""
    wired = sorted(WIRED_OPTIONS & set(options))
    if wired:
        verb = "is" if len(wired) == 1 else "are"
        raise ValueError(f"{which}: {', '.join(wired)} {verb} set by build_workers, not by options")
    known = set(inspect.signature(Worker.__init__).parameters) - {"self"}
    unknown = sorted(set(options) - known)
    if unknown:
        noun = "argument" if len(unknown) == 1 else "arguments"
        raise ValueError(f"{which}: temporalio.worker.Worker takes no {noun} {', '.join(unknown)}")


def build_id_option(options: Mapping[str, Any]) -> dict[str, Any]:
    """Outlast's short build id (outlast/build_id.py), unless the options name a worker
    deployment, which carries its own (Temporal refuses both), or there is none (the SDK's
    default then)."""
    build_id = code_build_id()
    if "deployment_config" in options or build_id is None:
        return {}
    return {"build_id": build_id}


def build_workers(
    client: Client,
    *,
    task_queue: str = TASK_QUEUE,
    host_queue: str | None = None,
    max_cached_workflows: int = 1000,
    host_activities: list | None = None,
    tracer: Tracer | None = None,
    interceptors: Sequence[Interceptor] = (),
    main_options: Mapping[str, Any] | None = None,
    tool_options: Mapping[str, Any] | None = None,
    model: bool = True,
) -> list[Worker]:
    """The main-queue worker and this host's tool worker. `tracer`: where GenAI spans go
    (default: the global tracer provider's, a no-op unless tracing is configured);
    `interceptors`: more worker interceptors, after Outlast's own; `main_options` /
    `tool_options`: more `temporalio.worker.Worker` arguments for the main-queue worker and
    the tool worker (pollers, slots, executors), over Outlast's own values
    (bench/worker_settings.py measures some). `model=False` (`outlast worker --no-model`):
    a worker without model credentials, which takes no regular activity from `task_queue`
    (the model calls, and the activities that need a Temporal client, wait for a worker
    that has them) and fails a model call made as a local activity at once, which the
    workflow then makes as a regular one (activities/no_model.py)."""
    main_options, tool_options = dict(main_options or {}), dict(tool_options or {})
    check_worker_options(main_options, "main_options")
    check_worker_options(tool_options, "tool_options")
    check_environment()
    if os.environ.get("OUTLAST_PAYLOAD_VISITS") != "full":
        payload_visits.install()
    # Temporal's TracingInterceptor comes from the client; these add the GenAI spans, the
    # activity refusals' one-line log and updates refused as not retryable.
    common = {"interceptors": [GenAISpans(tracer), ActivityLog(), UpdateRefusals(), *interceptors]}
    tool_queue = host_queue or host_task_queue(host_id())
    host = HOST_ACTIVITIES if host_activities is None else host_activities
    main = Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        # The read-only tools and an agent's start and end steps also run here, as local
        # activities, for workflows whose workspace is on this host (activities/local_tools.py,
        # activities/host_steps.py).
        activities=[
            *(model_activities(client) if model else [call_model_unavailable]),
            *local_tool_activities(tool_queue),
            *host_step_activities(tool_queue, host),
        ],
        workflow_runner=sandbox_runner(client.data_converter),
        **{
            **build_id_option(main_options),
            "max_cached_workflows": max_cached_workflows,
            "sticky_queue_schedule_to_start_timeout": STICKY_TIMEOUT,
            "max_heartbeat_throttle_interval": MODEL_HEARTBEAT_THROTTLE,
            "default_heartbeat_throttle_interval": MODEL_HEARTBEAT_THROTTLE,
            **({} if model else {"no_remote_activities": True}),
            **main_options,
        },
        **common,
    )
    tools = Worker(
        client,
        task_queue=tool_queue,
        activities=host,
        **{
            # temporalio refuses a tuner beside any max_concurrent_*: a tuner sets the slots.
            **({} if "tuner" in tool_options else {"max_concurrent_activities": 64}),
            **build_id_option(tool_options),
            "max_heartbeat_throttle_interval": HEARTBEAT_THROTTLE,
            "default_heartbeat_throttle_interval": HEARTBEAT_THROTTLE,
            **tool_options,
        },
        **common,
    )
    return [main, tools]


async def run_workers(workers: list[Worker], *, reap_every: float = 0) -> None:
    """Run the workers; with `reap_every` (seconds) also this host's worktree reaper, as a
    long-lived worker should (a short-lived `outlast run` leaves it to them)."""
    from outlast.reaper import reap_forever

    runs = [asyncio.ensure_future(w.run()) for w in workers]
    # The reaper never ends on its own (and logs its own failures): it stops with the workers.
    reaper = (
        asyncio.ensure_future(reap_forever(workers[0].client, reap_every))
        if reap_every > 0 and workers
        else None
    )
    try:
        await asyncio.gather(*runs)
    finally:
        if reaper is not None:
            reaper.cancel()
        # Only when every worker has stopped: a model call still streaming on a closed
        # aiohttp session would hang until its read timeout.
        if all(r.done() for r in runs):
            await close_clients()


SHUTDOWN_GRACE_S = 10.0
"""How long `python -m worker` waits for its workers to shut down after SIGTERM."""

KILLS_GRACE_S = 2.0
"""How long it then waits for kills of commands still under way (set-up wait plus grace)."""


def freeze_startup_heap() -> None:
    """Take what the worker process has built so far (~220,000 objects: the modules of
    temporalio, anthropic, pydantic and Outlast) out of the cycle collector's reach. None of
    it is garbage, yet every full collection scanned all of it again while the whole worker,
    workflows included, waited: 118-140 ms a pause in a 20x5 fan-out, 15-16 ms once frozen
    (bench/gc_probe). Objects are still freed by reference counting; only a reference cycle
    among them would never be collected."""
    gc.collect()
    gc.freeze()


async def serve_until_stopped(workers: list[Worker], *, reap_every: float = 0) -> None:
    """Run the workers (`run_workers`) until SIGTERM or SIGINT, then shut them down; raise
    what a worker raised. For a worker process's main: it freezes the process's heap as it
    is (`freeze_startup_heap`)."""
    freeze_startup_heap()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    serving = asyncio.ensure_future(run_workers(workers, reap_every=reap_every))
    await asyncio.wait([serving, asyncio.ensure_future(stop.wait())], return_when="FIRST_COMPLETED")
    # SIGTERM (a container stop, a rollout): shut down, which cancels running tools (their
    # process groups are killed) so another worker retries them at once instead of after a
    # heartbeat timeout. Bounded: a shutdown that hangs must not keep a stopped container alive.
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.gather(*(w.shutdown() for w in workers)), SHUTDOWN_GRACE_S)
    # A tool cancelled twice leaves its command's kill going on by itself: let it finish.
    await settle_kills(KILLS_GRACE_S)
    # A worker that failed (its namespace does not exist, say) is a failed process: a
    # supervisor restarting on failure must see it, not a clean exit.
    if serving.done() and not serving.cancelled() and serving.exception() is not None:
        raise serving.exception()


def exit_after(run: Callable[[], object]) -> NoReturn:
    """Run a worker process's main, print what it raised, and exit with its status without
    CPython's teardown: the Temporal client's native threads can hang or abort it (temporalio
    sdk-python#300), and a stopped container must actually exit."""
    exit_code = 0
    try:
        run()
    except Exception:  # noqa: BLE001 - printed, and the exit status says it
        traceback.print_exc()
        exit_code = 1
    except KeyboardInterrupt:  # a Ctrl-C after serving ended (during the traces' flush)
        exit_code = 130
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_code)


def main() -> None:
    """`python -m worker`: connect per the environment and serve both queues until killed.

    Environment: TEMPORAL_ADDRESS, OUTLAST_TASK_QUEUE (default `outlast`), OUTLAST_HOST_ID
    (default the host name; the tool queue is `outlast-host-<id>`), ANTHROPIC_API_KEY and
    ANTHROPIC_BASE_URL for the model, OUTLAST_HOME / OUTLAST_STORE_DIR for the blob store,
    OTEL_EXPORTER_OTLP_ENDPOINT (and OTEL_SERVICE_NAME) to export traces,
    OUTLAST_WRITER_SANDBOX (auto | bwrap | off) for writers' Bash, OUTLAST_REAP_INTERVAL_S
    (default 600, 0 = off) for the worktree reaper, OUTLAST_MODEL_HTTP (aiohttp | httpx) for
    the model client's transport.
    """
    from outlast.client import connect
    from outlast.reaper import reap_interval
    from outlast.search_setup import worker_warning
    from outlast.telemetry import configure_tracing, flush_tracing

    try:
        check_environment()
        check_credentials()
    except (ValueError, RuntimeError) as e:  # a sentence to fix the setting by, no traceback
        print(f"worker: {e}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(2)
    configure_tracing(os.environ)

    async def _main() -> None:
        client = await connect()
        if (warning := await worker_warning(client)) is not None:
            print(f"worker: warning: {warning}", file=sys.stderr, flush=True)
        workers = build_workers(client, task_queue=task_queue())
        await serve_until_stopped(workers, reap_every=reap_interval())

    try:
        asyncio.run(_main())
    finally:
        # `exit_after` skips the atexit handlers that would send the spans still buffered:
        # the last seconds of every deploy's traces.
        flush_tracing()


if __name__ == "__main__":
    exit_after(main)
