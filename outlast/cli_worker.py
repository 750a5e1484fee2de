"""The `outlast` commands that run a worker or a server of their own (`dev`, `worker`,
`fake-model`), and the loading and checks of the worker module that `run` and `resume`
share with them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path

import typer
from rich.markup import escape

from activities.store import state_dir
from outlast.cli_base import app, connect_or_fail, console, fail
from outlast.core_logs import CORE_LOGGER
from outlast.devserver import DevServer, DevServerError
from outlast.reaper import reap_interval
from outlast.search_setup import worker_warning


def worker_module():
    """`worker`, imported only by the commands that run or address a worker: its imports (the
    Anthropic SDK above all) take seconds, which `ls`, `show`, a stop or a refused argument
    should not wait for (issue 9)."""
    import worker

    return worker


def worker_logs_on_this_terminal() -> None:
    """What the in-process worker logs (a skipped agent definition, a retried call), as one
    `worker WARNING: ...` line each, without the dict of workflow or activity context the SDK
    appends to every message (`outlast show` and the Web UI have that)."""
    from temporalio import activity, workflow

    workflow.logger.workflow_info_on_message = False
    activity.logger.activity_info_on_message = False
    logging.basicConfig(level=logging.WARNING, format="worker %(levelname)s: %(message)s")


def _operator_logs() -> None:
    """A long-running worker's log is for its operator: the SDK core's warnings too (a poll
    the server refused, a connection retried), as `worker WARNING: ...` lines."""
    logging.basicConfig(level=logging.WARNING, format="worker %(levelname)s: %(message)s")
    CORE_LOGGER.setLevel(logging.WARNING)


def checked_worker_module(or_else: str = "", *, model: bool = True, without_credentials: str = ""):
    """`worker`, with the environment its workers read checked first: a mistyped setting, or
    no credentials for the model (unless `model` is False), is refused with its sentence
    before any server or worker starts, not as a traceback (`or_else`: what else the command
    could do; `without_credentials`: what else to do then, if not that)."""
    w = worker_module()
    try:
        w.check_environment()
    except (ValueError, RuntimeError) as e:
        fail(_or_else(e, or_else))
    try:
        if model:
            w.check_credentials()
    except (ValueError, RuntimeError) as e:
        fail(_or_else(e, without_credentials or or_else))
    return w


def _or_else(error: Exception, or_else: str) -> str:
    return f"{str(error).rstrip('.')}; {or_else}." if or_else else str(error)


def embedded_server(port: int = 7233, ui_port: int = 8233) -> DevServer:
    return DevServer(state_dir=state_dir(), port=port, ui_port=ui_port)


@app.command()
def dev(
    port: int = typer.Option(7233, min=1, max=65535, help="gRPC port of the dev server."),
    ui_port: int = typer.Option(8233, min=1, max=65535, help="Web UI port."),
) -> None:
    """Run the embedded Temporal dev server (SQLite under .outlast/) and a worker."""
    _operator_logs()
    server = embedded_server(port, ui_port)
    if server.running():
        fail(f"something already listens on {server.address}; run `outlast worker` instead.")
    checked_worker_module()

    async def _main() -> None:
        try:
            proc = server.start(detach=False)
        except DevServerError as e:
            fail(str(e))
        console.print(f"Temporal dev server on {server.address}, Web UI {server.ui_url}")
        try:
            await _serve(await connect_or_fail(server.address))
        finally:
            proc.terminate()
            with contextlib.suppress(OSError):  # unless it names another server by now
                if server.pid_file.read_text() == str(proc.pid):
                    server.pid_file.unlink()

    _stop_on_sigterm()  # until the worker serves, and handles SIGTERM and Ctrl-C itself
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main())


def _stop_on_sigterm() -> None:
    """`kill` (or a service manager) stops the server and worker cleanly, like Ctrl-C."""

    def _interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)


async def _serve(client, *, model: bool = True) -> None:
    """Serve `$OUTLAST_TASK_QUEUE` (else Outlast's queue) and this host's tool queue until
    stopped. As `python -m worker`: a SIGTERM cancels running tools, so their commands are
    killed and another worker retries them at once."""
    w = worker_module()
    queue = w.task_queue()
    console.print(f"worker serving task queues {queue} and outlast-host-{w.host_id()}")
    if not model:
        console.print(
            "--no-model: it answers queries and runs workflow tasks and this host's tools; the "
            f"activities of {queue}, model calls among them, wait for a worker with model "
            "credentials"
        )
    workers = w.build_workers(client, task_queue=queue, model=model)
    await w.serve_until_stopped(workers, reap_every=_reap_every())


@app.command()
def worker(
    no_model: bool = typer.Option(
        False,
        "--no-model",
        help="Start without model credentials: answer queries (a finished run's details in "
        "the Web UI), run workflow tasks and this host's tools, and leave the model calls to "
        "a worker that has them.",
    ),
) -> None:
    """Run a worker against $TEMPORAL_ADDRESS (default localhost:7233) on
    $OUTLAST_TASK_QUEUE (default outlast)."""
    _operator_logs()
    checked_worker_module(
        model=not no_model, without_credentials="or, to only answer queries, pass --no-model"
    )

    async def _main() -> None:
        client = await connect_or_fail()
        if (warning := await worker_warning(client)) is not None:
            console.print(f"[yellow]warning: {escape(warning)}[/]")
        await _serve(client, model=not no_model)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main())


@app.command("fake-model")
def fake_model(
    script: Path = typer.Option(
        ..., exists=True, dir_okay=False, help="Scenario script (YAML/JSON)."
    ),
    port: int = typer.Option(8765, help="Port to listen on (0 = any free port)."),
    host: str = typer.Option("127.0.0.1"),
    log: Path = typer.Option(None, help="Append a JSONL record of every request here."),
    var: list[str] = typer.Option([], help="KEY=VALUE substituted for {{KEY}} in the script."),
    log_bodies: bool = typer.Option(False, help="Also log full request bodies."),
) -> None:
    """Serve a scripted Anthropic-compatible model (see SCRIPT_FORMAT.md)."""
    from outlast.scripted_model.__main__ import main as serve

    argv = ["--script", str(script), "--port", str(port), "--host", host]
    if log:
        argv += ["--log", str(log)]
    for item in var:
        argv += ["--var", item]
    if log_bodies:
        argv.append("--log-bodies")
    raise typer.Exit(serve(argv) or 0)


def _reap_every() -> float:
    try:
        return reap_interval()
    except ValueError as e:
        fail(str(e))
        raise  # _fail exits; this keeps the type checker sure of it
