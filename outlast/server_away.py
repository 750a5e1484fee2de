"""A follow that outlasts the server's outages.

The SDK gives up a call after about ten seconds of a server that does not answer; a follow
that waited for the workflow's result ended there with "the Temporal server refused" and
exit code 2, while the workflow went on (a user test, 2026-12-05: a server restart).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from rich.console import Console
from rich.markup import escape
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

SERVER_AWAY = (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED)


def server_away(e: RPCError) -> bool:
    """The server did not answer, as against refused: a graceful stop of the server (`outlast
    server-stop`, a deploy) closes the connection under a waiting call, which the SDK reports
    as UNKNOWN "transport error"; the follow ended there, exit 2 (a user test, 2026-12-05)."""
    return e.status in SERVER_AWAY or (
        e.status == RPCStatusCode.UNKNOWN and "transport error" in e.message
    )


AWAY_RETRY_S = 2.0


async def lasting_result(handle: WorkflowHandle, console: Console) -> Any:
    """`handle.result()`, waited for however long the server is away: said once per
    outage, and when the server answers again."""
    away = False
    while True:
        try:
            result = await handle.result()
        except RPCError as e:
            if not server_away(e):
                raise
            if not away:
                console.print(
                    f"[yellow]lost the Temporal server ({escape(e.message)}); the workflow "
                    "goes on there. Waiting for it (Ctrl-C detaches).[/]"
                )
            away = True
            await asyncio.sleep(AWAY_RETRY_S)
            with contextlib.suppress(RPCError):  # still away: the next wait says so
                await handle.describe()
                console.print("[green]reached the Temporal server again[/]")
                away = False
            continue
        if away:
            console.print("[green]reached the Temporal server again[/]")
        return result
