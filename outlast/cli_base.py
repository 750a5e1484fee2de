"""What every `outlast` command shares: the typer app, the console, and how a command
refuses (exit code 2 and one sentence, never a traceback)."""

from __future__ import annotations

import os

import typer
from rich.console import Console
from rich.markup import escape
from temporalio.client import Client

from outlast.client import connect
from outlast.question_view import terminal_text

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="The `outlast` command line: run, steer and inspect durable agents on Temporal.",
)
console = Console(soft_wrap=True)  # paths and ids must stay copyable


def fail(message: str) -> None:
    # Messages quote what a person typed, a model wrote or a server said: text, not markup.
    console.print(f"[red]error:[/] {escape(terminal_text(message))}")
    raise typer.Exit(2)


async def connect_or_fail(address: str | None = None) -> Client:
    """A client, or a one-sentence refusal: the server cannot be reached, or the payload
    settings (`OUTLAST_PAYLOAD_KEY`, `OUTLAST_PAYLOAD_STORE`) do not make sense."""
    try:
        return await connect(address)
    except RuntimeError as e:
        where = address or os.environ.get("TEMPORAL_ADDRESS", "localhost:7233")
        fail(f"cannot reach Temporal at {where}: {e}; start it with `outlast dev`.")
    except ValueError as e:  # the data converter's settings (PayloadKeyError is one)
        fail(str(e))
    raise AssertionError("unreachable")  # fail() raises
