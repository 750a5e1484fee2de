"""Reading work from the command line: `ls`, `show` and `waiting`."""

from __future__ import annotations

import asyncio
from datetime import UTC

import typer
from rich.markup import escape
from temporalio.service import RPCError

from outlast.cli_base import (
    app,
    check_id,
    connect_or_fail,
    console,
    fail,
    ls_hint,
    queued_worker_note,
    server_said,
    why_it_waits,
)
from outlast.inspect import NotFound, agent_tree
from outlast.listing import STATUSES, Row, list_rows
from outlast.patterns import WORKFLOW_TYPES
from outlast.silence import NO_WORKER_ANSWER
from outlast.tree_text import tree_lines
from outlast.waiting import waiting_lines, waiting_on_people


@app.command("ls")
def ls(
    status: str = typer.Option(None, help=f"Only this status, one of {', '.join(STATUSES)}."),
    pattern: str = typer.Option(None, help=f"Only this pattern: {', '.join(WORKFLOW_TYPES)}."),
    all_: bool = typer.Option(False, "--all", help="Include sub-agents and pattern members."),
    limit: int = typer.Option(50, min=1, help="At most this many."),
    as_json: bool = typer.Option(False, "--json", help="JSON lines instead of a table."),
) -> None:
    """List Outlast workflows: running ones first, then the most recently ended (the order
    Temporal lists them in)."""
    if status is not None and status not in STATUSES:
        fail(f"--status {status}: choose one of {', '.join(STATUSES)}.")
    if pattern is not None and pattern not in WORKFLOW_TYPES:
        fail(f"--pattern {pattern}: choose one of {', '.join(WORKFLOW_TYPES)}.")

    async def _main() -> None:
        client = await connect_or_fail()
        rows = await list_rows(
            client, status=status, pattern=pattern, include_children=all_, limit=limit
        )
        if as_json:
            for row in rows:
                print(row.model_dump_json())
            return
        if not rows:
            console.print("no Outlast workflows match")
            return
        for n, line in enumerate(ls_lines(rows)):
            console.print(line, style="dim" if n == 0 else None, markup=False, highlight=False)

    asyncio.run(_main())


@app.command()
def waiting(
    as_json: bool = typer.Option(False, "--json", help="JSON lines instead of text."),
    timeout: float = typer.Option(
        5.0, min=0.5, max=120, help="Seconds to wait for the workers' answers in all."
    ),
) -> None:
    """What waits on you across every running task: plans to approve, questions to answer,
    pipeline stages to decide; each with the command that answers it."""

    async def _main() -> None:
        client = await connect_or_fail()
        try:
            found = await waiting_on_people(client, within_s=timeout)
        except RPCError as e:
            fail(server_said("the namespace", e))
        if as_json:
            for w in found.waiting:
                print(w.model_dump_json())
            return
        for line in waiting_lines(found):
            console.print(line, markup=False, highlight=False)

    asyncio.run(_main())


def ls_lines(rows: list[Row]) -> list[str]:
    """`outlast ls`'s table: a header, then one aligned line per workflow."""
    table = [("WORKFLOW ID", "PATTERN", "STATUS", "STARTED (UTC)")] + [
        (
            r.workflow_id,
            r.pattern,
            _status(r),
            r.started.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if r.started else "-",
        )
        for r in rows
    ]
    widths = [max(len(cols[i]) for cols in table) for i in range(3)]
    return ["  ".join([*(cols[i].ljust(widths[i]) for i in range(3)), cols[3]]) for cols in table]


def _status(row: Row) -> str:
    notes = [row.outcome] if row.outcome else []
    if row.resumed_since:
        notes.append(f"run {row.run}, resumed since")
    elif row.run > 1:
        notes.append(f"resumed, run {row.run}")
    return f"{row.status} ({'; '.join(notes)})" if notes else row.status


@app.command()
def show(
    workflow_id: str = typer.Argument(..., help="The workflow to show."),
    as_json: bool = typer.Option(False, "--json", help="The tree as JSON."),
) -> None:
    """The agent tree of a workflow: type, status, turns, tokens, duration, verdict."""

    async def _main() -> None:
        check_id(workflow_id)
        client = await connect_or_fail()
        try:
            tree = await agent_tree(client, workflow_id)
        except NotFound as e:
            if queued := await queued_worker_note(client.get_workflow_handle(workflow_id)):
                fail(queued)  # as `kill`, `send` and `transcript` say it
            fail(f"{e}; {ls_hint(workflow_id)}.")
        except RPCError as e:
            fail(server_said(workflow_id, e))
        if as_json:
            print(tree.model_dump_json())
            return
        for line in tree_lines(tree):
            # Plain text: a failure's message or a terminate reason may hold `[...]`.
            console.print(line, markup=False, highlight=False)
        # A running task that waits for a worker shows nothing else that says why.
        try:
            desc = await client.get_workflow_handle(workflow_id).describe()
            answered = tree.outcome is not None and NO_WORKER_ANSWER not in tree.outcome
            note = await why_it_waits(client, desc, answered)
        except RPCError:
            return  # the server went away after the tree: nothing more to say
        if note:
            console.print(f"[yellow]{escape(note)}[/]")

    asyncio.run(_main())
