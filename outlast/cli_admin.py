"""The `outlast` commands that look after a namespace and a host rather than a task:
`setup`, `search-attributes`, `reap`, `server-start`, `server-stop`."""

from __future__ import annotations

import asyncio
import os

import typer
from temporalio.service import RPCError

from activities.store import state_dir
from outlast.cli_base import app, connect_or_fail, console, fail
from outlast.devserver import DevServer, DevServerError
from outlast.orphans import stop_orphans
from outlast.reaper import reap
from outlast.search_setup import missing_search_attributes, register_search_attributes
from workflows.search_attributes import ALL


@app.command()
def setup() -> None:
    """Prepare $TEMPORAL_ADDRESS's namespace for Outlast: register its search attributes
    (the embedded server registers them itself). Safe to run again."""

    async def _main() -> None:
        client = await connect_or_fail()
        try:
            added = await register_search_attributes(client)
        except RPCError as e:
            fail(
                f"could not register search attributes on namespace {client.namespace}: "
                f"{e.message}. On Temporal Cloud, add them with `tcld namespace "
                "search-attributes add`; elsewhere the caller needs operator rights."
            )
        for key in ALL:
            mark = "added" if key.name in added else "present"
            console.print(f"  {key.name} ({key.indexed_value_type.name.title()}): {mark}")
        console.print(f"namespace {client.namespace} is ready for Outlast")

    asyncio.run(_main())


@app.command("reap")
def reap_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Report, change nothing."),
    as_json: bool = typer.Option(
        False, "--json", help="One JSON object per worktree, snapshot, /tmp or sub-agent."
    ),
) -> None:
    """Clean up this host's worktrees whose agent closed without cleaning up (terminated or
    timed out): removed if unchanged, kept and listed if they hold work. Also removes the
    verifiers' workspace snapshots of verifications that closed without removing them, and
    the sandbox /tmp of every workspace that no longer exists, and cancels the sub-agents
    a terminated or timed-out parent left running. Workers do this every
    $OUTLAST_REAP_INTERVAL_S seconds (default 600) on their own."""

    async def _main() -> None:
        client = await connect_or_fail()
        # Orphans first: a cancelled sub-agent cleans up its own worktree.
        try:
            orphans = await stop_orphans(client, dry_run=dry_run)
        except RPCError as e:  # the worktrees are reaped all the same
            console.print(f"could not look for orphaned sub-agents: {e.message}", markup=False)
            orphans = []
        for orphan in orphans:
            if as_json:
                print(orphan.model_dump_json())
            else:
                console.print(f"{orphan.workflow_id}: {orphan.reason}", markup=False)
        items = await reap(client, dry_run=dry_run)
        if not items and not orphans and not as_json:
            console.print("nothing to clean up")
        for item in items:
            if as_json:
                print(item.model_dump_json())
                continue
            owner = ", ".join(filter(None, [item.workflow_id, item.owner_status.lower()]))
            if dry_run:
                line = f"{item.worktree_path} ({owner}): {item.reason}"
            else:
                verb = (
                    ("killed" if item.kind == "command" else "removed") if item.removed else "kept"
                )
                line = f"{verb} {item.worktree_path} ({owner}): {item.reason}"
            console.print(line, markup=False, highlight=False)

    asyncio.run(_main())


@app.command("search-attributes")
def search_attributes(
    register: bool = typer.Option(False, "--register", help="Register the missing ones."),
) -> None:
    """Check (or register: prefer `outlast setup`) Outlast's search attributes."""

    async def _main() -> None:
        client = await connect_or_fail()
        if register:
            added = await register_search_attributes(client)
            console.print(f"registered: {', '.join(added)}" if added else "all registered already")
            return
        missing = await missing_search_attributes(client)
        if missing:
            # Exit 1, as a check a script can act on (it exited 0 either way; a user test).
            console.print(f"missing: {', '.join(missing)}; `outlast setup` registers them")
            raise typer.Exit(1)
        console.print("all registered")

    asyncio.run(_main())


@app.command("server-start")
def server_start(
    port: int = typer.Option(7233, min=1, max=65535, help="gRPC port of the dev server."),
    ui_port: int = typer.Option(8233, min=1, max=65535, help="Web UI port."),
) -> None:
    """Start the embedded dev server in the background, as `run` does, on any port: workers
    (`outlast worker`) and runs (`outlast run --no-worker`) then reach it with
    TEMPORAL_ADDRESS, each in a process of its own. `outlast server-stop` stops it."""
    if port == ui_port:
        fail(f"--port and --ui-port are both {port}: the Web UI needs a port of its own")
    server = DevServer(state_dir=state_dir(), port=port, ui_port=ui_port)
    # Only `dev` started one elsewhere than 7233, in the foreground with a worker, so a
    # worker could not be killed and restarted on its own (a user test, 2026-12-07).
    env = f"TEMPORAL_ADDRESS={server.address} "
    if port == 7233 and os.environ.get("TEMPORAL_ADDRESS", server.address) == server.address:
        env = ""
    use = f"`{env}outlast worker`, then `{env}outlast run --no-worker ...`"
    try:
        started = server.ensure_running()
    except DevServerError as e:
        fail(str(e))
    if not started and server.live_address() != server.address:
        fail(
            f"something else listens on {server.address}, not the embedded server of "
            f"{server.state_dir}: choose another --port (and --ui-port), or use that server "
            "with TEMPORAL_ADDRESS"
        )
    if not started:
        if (owner := server.foreground_owner()) is not None:
            use = (
                f"it runs for the `outlast dev` in the foreground (pid {owner}), whose worker "
                "serves it, and stops with it"
            )
        running_ui = server.live_ui_port()
        if running_ui not in (None, ui_port):
            use += f"; its Web UI is on port {running_ui}, not {ui_port}"
        console.print(f"already running on {server.address}: {use}", markup=False)
        return
    console.print(
        f"started the embedded Temporal dev server on {server.address} (Web UI {server.ui_url},"
        f" state in {server.state_dir}): {use}; `outlast server-stop` stops it",
        markup=False,
    )


@app.command("server-stop")
def server_stop() -> None:
    """Stop the embedded dev server started in the background by `run` or `demo` (one that
    `outlast dev` runs stops with it)."""
    server = DevServer(state_dir=state_dir())
    if (owner := server.foreground_owner()) is not None:
        # Stopped under it, `outlast dev` went on with a worker and no server, retrying its
        # polls for good (a user test, 2026-12-07).
        console.print(
            f"the embedded server with the state in {server.state_dir} runs for the `outlast "
            f"dev` in the foreground (pid {owner}): stop that one (Ctrl-C where it runs, or "
            f"`kill {owner}`), which stops its worker with it; nothing was stopped",
            markup=False,
        )
        raise typer.Exit(1)
    if server.stop():
        console.print("stopped")
    elif server.running():
        # Its pid is in the state directory it was started with (OUTLAST_HOME, ./.outlast).
        # Nothing of this directory's is left running: not an error for a cleanup script.
        console.print(
            f"no embedded server was started with the state in {server.state_dir}, but "
            f"something listens on {server.address}: if it is an `outlast` server, run "
            "`outlast server-stop` where it was started, or with its OUTLAST_HOME.",
            markup=False,
        )
    else:
        console.print("no embedded server was running")
