"""The `outlast` command line (typer + rich)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

import typer
from rich.markup import escape
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from activities.store import StateDirError
from outlast import (
    cli_admin,  # noqa: F401 - registers setup, search-attributes, reap, server-stop
    cli_answer,  # noqa: F401 - registers answer
    cli_decide,  # noqa: F401 - registers approve, reject
    cli_inspect,  # noqa: F401 - registers ls, show
    cli_steer,  # noqa: F401 - registers stop, kill, background, send
    cli_transcript,  # noqa: F401 - registers transcript
)
from outlast.cli_base import (
    app,
    check_id,
    connect_or_fail,
    console,
    describe_or_fail,
    host_queue_note,
    server_said,
    why_it_waits,
)
from outlast.cli_base import fail as _fail
from outlast.cli_worker import (  # also registers dev, worker, fake-model
    checked_worker_module,
    embedded_server,
    worker_logs_on_this_terminal,
    worker_module,
)
from outlast.core_logs import forward_core_logs
from outlast.devserver import DevServer, DevServerError
from outlast.listing import PATTERN_OF_TYPE
from outlast.pattern_follow import follow_pattern
from outlast.pattern_output import print_pattern_result
from outlast.patterns import (
    RESULT_TYPES,
    PatternArgs,
    build_pattern_input,
    fit_to_namespace,
    start_pattern,
    succeeded,
)
from outlast.progress import WorkerStopped, follow_while_serving
from outlast.resume import ResumeRefused, carried_line, ended_run, resume_agent
from outlast.run_ids import closed_run, id_problem
from outlast.runner import StartError, env_config, start_agent
from outlast.sigterm import Termed, cancel_on_sigterm
from outlast.telemetry import configure_tracing, flush_tracing


async def _client_for_run(embedded: DevServer) -> tuple[object, str | None]:
    """Connect to `$TEMPORAL_ADDRESS`, or to the embedded server (started if needed)."""
    if os.environ.get("TEMPORAL_ADDRESS"):
        return await connect_or_fail(), None
    if embedded.ensure_running():
        console.print(f"[dim]started the embedded Temporal dev server on {embedded.address}[/]")
    return await connect_or_fail(embedded.address), embedded.ui_url


@app.command()
def run(
    task: str = typer.Argument(..., help="What the agent (or the lead, or coordinator) does."),
    repo: Path = typer.Option(Path("."), help="The checkout the agents work in."),
    pattern: str = typer.Option(
        "single",
        help="single | coordinator | pipeline | team | fork-join | verified: which workflow runs.",
    ),
    agent: str = typer.Option(
        None, help="Agent type (built-in or .claude/agents; default general-purpose)."
    ),
    model: str = typer.Option(None, help="Model alias (sonnet, opus, haiku) or model id."),
    max_turns: int = typer.Option(None, min=1, help="Stop after this many model calls."),
    teammate: list[str] = typer.Option(
        [],
        help="team: a teammate as name=prompt or name:type=prompt (repeat); without any, "
        "the lead spawns its own with the Agent tool.",
    ),
    team_task: list[str] = typer.Option([], help="team: a task for the shared list (repeat)."),
    team_name: str = typer.Option(
        None,
        help="team: its name (default 'team'): what its members call it, and the TeamName "
        "search attribute its workflows carry.",
    ),
    fork: list[str] = typer.Option([], help="fork-join: one fork's directive (repeat)."),
    approve: bool = typer.Option(
        False, "--approve", help="pipeline: wait for `outlast approve` after each stage."
    ),
    max_rounds: int = typer.Option(
        None, min=1, max=10, help="verified: verification rounds (default 3)."
    ),
    plan: bool = typer.Option(
        False, "--plan", help="Start in plan mode: the agent plans, `outlast approve` lets it act."
    ),
    no_worker: bool = typer.Option(
        False,
        "--no-worker",
        help="Start no worker in this process: one elsewhere runs it (this still follows it; "
        "Ctrl-C detaches).",
    ),
    workflow_id: str = typer.Option(None, "--id", help="Workflow id (default: generated)."),
    model_call: str = typer.Option(
        None,
        "--model-call",
        help="regular | local | auto: how each model call runs (model.local_activity; "
        "default $OUTLAST_MODEL_CALL, else regular).",
    ),
) -> None:
    """Start an agent (or a pattern of agents) on a checkout and follow it. Ctrl-C detaches;
    the workflow goes on."""
    try:
        config = env_config(model_call)
        if pattern == "single" and config.features.coordinator_mode and agent is not None:
            raise StartError(
                f"--agent {agent}: CLAUDE_CODE_COORDINATOR_MODE is on, so this runs as a "
                "coordinator, which picks its own workers; drop --agent or unset it."
            )
        if pattern == "single" and config.features.coordinator_mode:
            # R55: in coordinator mode the main agent is a coordinator.
            console.print("[dim]CLAUDE_CODE_COORDINATOR_MODE is on: running as a coordinator[/]")
            pattern = "coordinator"
        inp = build_pattern_input(
            PatternArgs(
                pattern=pattern,
                task=task,
                repo=repo,
                host_id=worker_module().host_id(),
                agent_type=agent,
                model=model,
                max_turns=max_turns,
                approve=approve,
                teammates=teammate,
                team_tasks=team_task,
                team_name=team_name,
                forks=fork,
                max_rounds=max_rounds,
                plan_first=plan,
                config=config,
            )
        )
    except StartError as e:
        _fail(str(e))
    if workflow_id is not None and (why := id_problem(workflow_id)) is not None:
        _fail(why)
    if not no_worker:
        checked_worker_module(or_else="or pass --no-worker and run workers elsewhere")
    code = asyncio.run(
        _run_and_follow(inp, workflow_id, with_worker=not no_worker, pattern=pattern)
    )
    raise typer.Exit(code)


async def _run_and_follow(
    inp, workflow_id: str | None, *, with_worker: bool, pattern: str = "single"
) -> int:
    """The exit code: 0 once the task succeeded (or the user detached), 1 if it did not."""
    client, ui = await _client_or_fail()
    # The queue `outlast worker` and `dev` serve: run on the one its workers serve.
    queue = worker_module().task_queue()
    handle = await _start(client, inp, workflow_id, pattern, queue)
    return await _follow_serving(
        client, ui, handle, with_worker=with_worker, pattern=pattern, task_queue=queue
    )


async def _client_or_fail():
    try:
        return await _client_for_run(embedded_server())
    except DevServerError as e:
        _fail(str(e))


async def _start(client, inp, workflow_id: str | None, pattern: str, task_queue: str):
    try:
        inp, missing = await fit_to_namespace(client, inp)
    except StartError as e:  # a namespace that does not exist, no permission to list
        _fail(str(e))
    if missing:
        console.print(
            f"[yellow]this namespace lacks Outlast's search attributes ({', '.join(missing)}); "
            "starting without them. Register them once with `outlast setup`.[/]"
        )
    if workflow_id is not None and (ran := await closed_run(client, workflow_id)) is not None:
        _fail(
            f"--id {workflow_id}: a workflow with that id already ran ({ran}); "
            f"`outlast show {workflow_id}` shows it. Choose another id."
        )
    try:
        if pattern == "single":
            handle = await start_agent(client, inp, workflow_id=workflow_id, task_queue=task_queue)
        else:
            handle = await start_pattern(
                client, pattern, inp, workflow_id=workflow_id, task_queue=task_queue
            )
    except WorkflowAlreadyStartedError:
        _fail(
            f"--id {workflow_id}: a workflow with that id is running; follow it with "
            f"`outlast attach {workflow_id}`, or choose another id."
        )
    except RPCError as e:  # a namespace that does not exist, no permission to start
        _fail(f"the server refused to start the workflow: {e.message}")
    return handle


async def _follow_serving(
    client, ui, handle, *, with_worker: bool, pattern: str, task_queue: str | None = None
) -> int:
    """Follow the started `handle`, serving it with this process's workers (`with_worker`) on
    `task_queue` (default: Outlast's); the exit code, as `_run_and_follow`'s."""
    _announce(handle.id, ui)
    if with_worker:
        worker_logs_on_this_terminal()
    elif note := await _why_it_waits(client, handle):
        # `attach` said it at once; `run --no-worker` waited in silence (a user test).
        console.print(f"[yellow]{escape(note)}[/]")
    queue = {"task_queue": task_queue} if task_queue else {}
    workers = worker_module().build_workers(client, **queue) if with_worker else []
    serving = asyncio.gather(*(w.run() for w in workers))
    termed = Termed()
    try:
        with cancel_on_sigterm() as termed:
            result = await follow_while_serving(
                follow_pattern(handle, pattern, console, client), serving if workers else None
            )
    except WorkerStopped as e:
        console.print(
            f"[red]the worker stopped: {escape(str(e))}[/]\nthe workflow goes on: run "
            f"`outlast worker`, then follow it with `outlast attach {handle.id}`"
        )
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        how = "stopped (SIGTERM)" if termed.came else "detached"
        console.print(f"\n{how}; the workflow goes on. Follow it with: outlast attach {handle.id}")
        if with_worker:
            # Whether another worker serves its queue is not known here (the server lists a
            # dead poller for a minute and more): said as a condition, not as a fact.
            console.print(
                "[yellow]this process's worker stopped with it: unless another worker serves "
                "it, run `outlast worker` for it to make progress[/]"
            )
        return 128 + signal.SIGTERM if termed.came else 0
    finally:
        for w in workers:
            await w.shutdown()
        with contextlib.suppress(Exception):
            await serving
        if workers:  # a tool cancelled as its command started: let that kill finish
            await worker_module().settle_kills(worker_module().KILLS_GRACE_S)
    if result is not None:
        print_pattern_result(pattern, result, console, handle.id)
    return 0 if succeeded(result) else 1


async def _why_it_waits(client, handle) -> str | None:
    try:
        return await why_it_waits(client, await handle.describe())
    except RPCError:
        return None


def _announce(workflow_id: str, ui: str | None) -> None:
    console.print(f"workflow [bold]{workflow_id}[/]")
    if ui:
        namespace = os.environ.get("TEMPORAL_NAMESPACE") or "default"
        console.print(f"Web UI: {ui}/namespaces/{namespace}/workflows/{workflow_id}")


@app.command()
def attach(workflow_id: str = typer.Argument(..., help="The workflow to follow.")) -> None:
    """Follow a running (or finished) agent."""

    check_id(workflow_id)  # '' reached the server: "WorkflowId is not set on request"

    async def _main() -> int:
        client = await connect_or_fail()
        desc = await describe_or_fail(client.get_workflow_handle(workflow_id))
        pattern = PATTERN_OF_TYPE.get(desc.workflow_type)
        if pattern is None:
            _fail(f"{workflow_id} is a {desc.workflow_type}, not one of Outlast's tasks.")
        if note := await why_it_waits(client, desc):
            console.print(f"[yellow]{escape(note)}[/]")
        handle = client.get_workflow_handle(workflow_id, result_type=RESULT_TYPES[pattern])
        result = await follow_pattern(handle, pattern, console, client)
        if result is not None:
            # A sub-agent (`<parent>/<name>`) is its parent's to resume: no command for it.
            top = workflow_id if "/" not in workflow_id else None
            print_pattern_result(pattern, result, console, top)
        return 0 if succeeded(result) else 1

    try:
        code = asyncio.run(_main())
    except KeyboardInterrupt:
        # As `run` says it: a silent exit 0 looked like the workflow's end (a user test).
        console.print(
            f"\ndetached; the workflow goes on. Follow it with: outlast attach {workflow_id}"
        )
        return
    raise typer.Exit(code)


@app.command()
def resume(
    workflow_id: str = typer.Argument(..., help="The agent that ended."),
    message: str = typer.Argument(..., help="What it should go on with: its next turn."),
    max_turns: int = typer.Option(
        None, min=1, help="Stop after this many model calls of the new run (default: as before)."
    ),
    no_worker: bool = typer.Option(
        False, "--no-worker", help="Start no worker in this process (as `outlast run`)."
    ),
) -> None:
    """Go on with an agent that ended (completed, stopped, out of turns, killed, failed): a
    new run of its id, from the conversation it ended with, MESSAGE its next turn; followed
    as `outlast run` follows. Ctrl-C detaches."""
    check_id(workflow_id)
    if not message.strip():
        _fail("the message is empty: say what the agent should go on with.")

    async def _main() -> int:
        client, ui = await _client_or_fail()
        try:
            # What it is refuses first: "ANTHROPIC_API_KEY is not set" hid "no workflow with
            # id nope" (a user test, 2026-12-07). Nothing has started yet.
            ended = await ended_run(client, workflow_id)
            if not no_worker:
                checked_worker_module(or_else="or pass --no-worker and run workers elsewhere")
            resumed = await resume_agent(client, workflow_id, message, ended, max_turns=max_turns)
        except ResumeRefused as e:
            _fail(f"{e}.")
        except RPCError as e:
            _fail(server_said(workflow_id, e))
        for child in resumed.cancelled:
            console.print(f"cancelled {child}: the ended run had left it running")
        for text in resumed.carried:
            # A model's or a person's words, shown as written.
            console.print(carried_line(text), markup=False, highlight=False)
        if resumed.unstarted:
            names = ", ".join(resumed.unstarted)
            console.print(
                f"queued workers the ended run never started: {names} (the message says so)",
                markup=False,
                highlight=False,
            )
        console.print(f"resumed {workflow_id} from the conversation it ended with")
        desc = await resumed.handle.describe()
        if note := await host_queue_note(client, desc):
            console.print(f"[yellow]{escape(note)}[/]")
        # On the ended run's queue, which need not be Outlast's (a demo's is its own): the
        # run waited there for a worker this process did not give it.
        return await _follow_serving(
            client,
            ui,
            resumed.handle,
            with_worker=not no_worker,
            pattern=resumed.pattern,
            task_queue=desc.task_queue,
        )

    raise typer.Exit(asyncio.run(_main()))


@app.command()
def demo(
    keep_server: bool = typer.Option(True, help="Leave the dev server running to inspect the run."),
    pattern: str = typer.Option(
        "single",
        help="single | coordinator | pipeline | team | fork-join | verified: which scripted "
        "scenario runs.",
    ),
) -> None:
    """A scripted agent (or pattern of agents) works on a sample repo with a failing test, end
    to end with real tools."""
    from outlast.demo import run_demo
    from outlast.demo.patterns import DEMO_PATTERNS, run_pattern_demo

    choices = ("single", *DEMO_PATTERNS)
    if pattern not in choices:
        _fail(f"--pattern {pattern}: no demo for it; choose one of {', '.join(choices)}.")
    try:
        env_config()  # the demo's runs read it; refuse a bad value before any server
    except StartError as e:
        _fail(str(e))
    try:
        if pattern == "single":
            ok = asyncio.run(run_demo(console, keep_server=keep_server))
        else:
            ok = asyncio.run(run_pattern_demo(console, pattern, keep_server=keep_server))
    except (StateDirError, DevServerError) as e:
        _fail(str(e))
    except (KeyboardInterrupt, asyncio.CancelledError) as e:  # Ctrl-C; SIGTERM cancels
        console.print("\nthe demo stopped; its run, if it had started, was terminated")
        stop = signal.SIGINT if isinstance(e, KeyboardInterrupt) else signal.SIGTERM
        raise typer.Exit(128 + stop) from None
    raise typer.Exit(0 if ok else 1)


def main() -> None:
    """The `outlast` command. Once the command is done the process exits without CPython's
    teardown: the Temporal client's native threads can abort it there (temporalio
    sdk-python#300), turning a finished command into a crash with exit code -6."""
    code = 0
    forward_core_logs(logging.ERROR)  # `worker` and `dev` take warnings as well
    tracing = configure_tracing(os.environ)
    try:
        app()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except RPCError as e:
        # A refusal no command words better (no such namespace, no operator rights): one
        # sentence, as for the others, not a traceback.
        try:
            _fail(f"the Temporal server refused: {e.message}")
        except typer.Exit as exit_:
            code = exit_.exit_code
    if tracing:
        flush_tracing()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
