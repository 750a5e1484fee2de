"""`outlast transcript ID`: an agent's conversation, read from the conversation store.

The workflow's history holds the conversation by reference only (issue 4: history that does
not grow with it), so nothing but this showed a person what an agent was told and answered,
tool by tool. A completed agent's result names its conversation; a running one is asked
for it (the `transcript` query), and so is an ended one for the conversations its compactions
summed up (`--compacted`: a worker replays the run to answer). It is read from the store this
machine's workers use (`OUTLAST_STORE_DIR`), across continue-as-new.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import typer
from rich.markup import escape
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError

from activities.errors import OutlastError
from activities.resume import AGENT_TYPES
from activities.store import default_store
from activities.transcripts import load
from agents.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agents.transcript import TranscriptRef
from outlast.cli_base import (
    app,
    connect_or_fail,
    console,
    describe_or_fail,
    fail,
    no_worker_note,
    polled,
)
from outlast.end_reasons import UNDECODED_INPUT, why_it_ended
from outlast.resume import last_model_call
from workflows.contracts import AgentResult, TranscriptView

SHORT_LINES = 12
ENDED_QUERY_S = 5
SHORT_CHARS = 300


COMPACTED_HERE = (
    "[dim]── compacted here: the model went on from a summary of the conversation above ──[/]"
)


@app.command()
def transcript(
    workflow_id: str = typer.Argument(..., help="The agent whose conversation to print."),
    full: bool = typer.Option(False, "--full", help="Tool inputs and results in full."),
    as_json: bool = typer.Option(False, "--json", help="One JSON message per line."),
    compacted: bool = typer.Option(
        False,
        "--compacted",
        help="The conversations compactions summed up too, oldest first (JSON: `segment`).",
    ),
) -> None:
    """An agent's conversation: what it was told, what it said, each tool call and result
    (since its last compaction, which starts it from a summary; --compacted: before too)."""
    if not workflow_id.strip():
        fail("the workflow id is empty.")
    segments, ended = asyncio.run(_segments(workflow_id, compacted))
    if as_json:
        for n, segment in enumerate(segments):
            for message in segment:
                line = message.model_dump(mode="json")
                print(json.dumps({"segment": n, **line} if compacted else line))
        return
    if not any(segments):
        # "yet" of an agent that had failed at its start (a user test, 2026-12-06).
        if ended:
            console.print(
                f"{workflow_id} has no conversation: it ended ({ended}) before one began."
            )
        else:
            console.print(f"{workflow_id} has no conversation yet.")
        return
    # Over every segment: a compaction's first message answers the last calls before it.
    answered = {
        b.tool_use_id
        for segment in segments
        for m in segment
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    for n, segment in enumerate(segments):
        if n:
            console.print(COMPACTED_HERE)
        for message in segment:
            for line in message_lines(message, full, answered, running=ended is None):
                console.print(line, highlight=False)


async def _segments(
    workflow_id: str, compacted: bool
) -> tuple[list[tuple[Message, ...]], str | None]:
    """The conversation since the last compaction; with `compacted`, first as it was at each
    compaction, oldest first. And how the workflow ended, None while it runs."""
    client = await connect_or_fail()
    handle = client.get_workflow_handle(workflow_id, result_type=AgentResult)
    desc = await describe_or_fail(handle)
    if desc.workflow_type not in AGENT_TYPES:
        # Named, so the next command is one paste away (a pipeline's stage output was read
        # nowhere else before its approval: a user test, 2026-12-06).
        query = f'ParentWorkflowId = "{workflow_id}"'
        kids = sorted({w.id async for w in client.list_workflows(query, limit=50)})
        named = f": {', '.join(kids)}" if kids else " (none has started yet)"
        fail(
            f"{workflow_id} is a {desc.workflow_type}, not an agent; each of its agents has a "
            f"conversation of its own (`outlast transcript <agent id>`){named}."
        )
    if desc.status == WorkflowExecutionStatus.FAILED:
        why, kind = await why_it_ended(handle, desc.status)
        if kind == UNDECODED_INPUT:  # asked anyway, a worker's replay fails with a traceback
            fail(f"{workflow_id} never started: its input did not decode ({why}).")
    refs = await _references(client, handle, desc, compacted)
    running = desc.status in (None, WorkflowExecutionStatus.RUNNING)
    ended = None if running else desc.status.name.lower().replace("canceled", "killed")
    try:
        return [await asyncio.to_thread(load, default_store(), ref) for ref in refs], ended
    except OutlastError as e:  # not in this machine's store, or damaged
        fail(f"cannot read the conversation of {workflow_id}: {e.message}")


async def _references(client, handle, desc, compacted: bool) -> list[TranscriptRef]:
    ended = desc.status == WorkflowExecutionStatus.COMPLETED
    if ended and not compacted:
        return [(await handle.result(follow_runs=False)).transcript]
    closed = desc.status != WorkflowExecutionStatus.RUNNING
    if closed and not compacted and (last := await last_model_call(client, handle)) is not None:
        # A killed, terminated or failed agent has no result to name its conversation. It
        # was asked of a worker, which replays the run: none, or one just gone, and the
        # command waited half a minute to fail, saying "compactions" (a user test).
        return [last]
    # Asked of the agent: a running one's worker, or one that replays the ended run (its
    # result names the last conversation only).
    workflow_tasks = TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
    if await polled(client, desc.task_queue, workflow_tasks) is False:
        if note := await no_worker_note(client, desc):
            # The query would wait for the server's "no poller seen" (about half a minute).
            fail(f"{note} Then try again.")
        fail(
            f"no worker polls {desc.task_queue}: the conversations before {handle.id}'s "
            "compactions are asked of one. Start one with `outlast worker`, then try again."
        )
    try:
        timeout = timedelta(seconds=ENDED_QUERY_S) if ended else None
        view = await handle.query("transcript", result_type=TranscriptView, rpc_timeout=timeout)
    except (RPCError, WorkflowQueryFailedError) as e:
        fail(f"{handle.id} did not answer for its conversation: {e}")
    return [*view.compacted, view.transcript] if compacted else [view.transcript]


UNANSWERED = "[dim](no result: cut off by the run's end; a resume drops it)[/]"
"""Under a call of an ended agent whose result is nowhere in the conversation: one a kill cut
off read as if its result were simply not shown (a user test, 2026-12-06)."""
NOT_YET = "[dim](no result yet: the tool runs, or its result goes with the next model call)[/]"
"""The same under a running agent's call: a result enters the conversation with the model
call that sends it, and a finished Glob's read as cut off (a user test, 2026-12-06)."""


def message_lines(
    message: Message,
    full: bool = False,
    answered: set[str] | None = None,
    running: bool = False,
) -> list[str]:
    """A message as markup lines for the terminal (what the model and the tools wrote is
    escaped: shown as written); `answered`: the tool_use ids the conversation has results
    for, to mark the calls it has none for (as not yet, where the agent is `running`)."""
    colour = "cyan" if message.role == "assistant" else "green"
    lines = [f"[bold {colour}]{message.role}[/]"]
    for block in message.content:
        lines += [f"  {line}" for line in _block_lines(block, full)]
        if isinstance(block, ToolUseBlock) and answered is not None and block.id not in answered:
            lines.append(f"    {NOT_YET if running else UNANSWERED}")
    return lines


def _block_lines(block: object, full: bool) -> list[str]:
    if isinstance(block, TextBlock):
        return [escape(line) for line in block.text.splitlines() or [""]]
    if isinstance(block, ToolUseBlock):
        arguments = json.dumps(block.input, ensure_ascii=False)
        return [f"[yellow]→ {escape(block.name)}[/] {escape(_short(arguments, full))}"]
    if isinstance(block, ToolResultBlock):
        mark = "[red]← error[/]" if block.is_error else "[dim]← result[/]"
        text = block.content if isinstance(block.content, str) else _texts(block.content)
        body = text.splitlines() or ["(empty)"]
        if not full and len(body) > SHORT_LINES:
            body = [*body[:SHORT_LINES], f"… {len(body) - SHORT_LINES} more lines (--full)"]
        return [mark, *(f"  {escape(_short(line, full))}" for line in body)]
    if isinstance(block, ThinkingBlock):
        return [f"[dim](thinking, {len(block.thinking)} characters)[/]"]
    if isinstance(block, RedactedThinkingBlock):
        return ["[dim](redacted thinking)[/]"]
    if isinstance(block, ImageBlock):
        return ["[dim](an image)[/]"]
    if isinstance(block, DocumentBlock):
        return ["[dim](a document)[/]"]
    return [f"[dim]({escape(getattr(block, 'type', 'block'))})[/]"]


def _texts(blocks: list) -> str:
    parts = [b.text if isinstance(b, TextBlock) else f"({b.type})" for b in blocks]
    return "\n".join(parts)


def _short(text: str, full: bool) -> str:
    if full or len(text) <= SHORT_CHARS:
        return text
    return text[:SHORT_CHARS] + f"… ({len(text)} characters)"
