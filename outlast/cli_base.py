"""What every `outlast` command shares: the typer app, the console, and how a command
refuses (exit code 2 and one sentence, never a traceback)."""

from __future__ import annotations

import os
import time
from datetime import timedelta

import typer
from rich.console import Console
from rich.markup import escape
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from activities.store import state_dir
from outlast.client import connect, connect_failure
from outlast.devserver import DevServer
from outlast.question_view import terminal_text
from outlast.silence import NO_POLLER as NO_WORKER
from outlast.silence import QUERY_BUFFER_FULL
from outlast.telemetry import MODEL_ACTIVITY
from outlast.tree_text import queued_line
from workflows.contracts import TASK_QUEUE, AgentStatus

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    help="The `outlast` command line: run, steer and inspect durable agents on Temporal.",
)
console = Console(soft_wrap=True)  # paths and ids must stay copyable


def fail(message: str) -> None:
    # Messages quote what a person typed, a model wrote or a server said: text, not markup.
    console.print(f"[red]error:[/] {escape(terminal_text(message))}")
    raise typer.Exit(2)


UNANSWERED_EXIT = 3
"""Sent, and no worker answered in time: it may still be delivered (2 said it was refused,
and a script that sent it again on 2 sent it twice; a user test, 2026-12-06)."""


def not_answered(message: str) -> None:
    """Like `fail`, for a request that was sent but not answered: exit UNANSWERED_EXIT."""
    console.print(f"[yellow]not answered:[/] {escape(terminal_text(message))}")
    raise typer.Exit(UNANSWERED_EXIT)


async def connect_or_fail(address: str | None = None) -> Client:
    """A client, or a one-sentence refusal: the server cannot be reached, or the payload
    settings (`OUTLAST_PAYLOAD_KEY`, `OUTLAST_PAYLOAD_STORE`) do not make sense."""
    try:
        client = await connect(address)
    except RuntimeError as e:
        where = address or os.environ.get("TEMPORAL_ADDRESS", "localhost:7233")
        # The embedded server is Outlast's to start; another one, its operator's.
        hint = "start it with `outlast dev`" if where == "localhost:7233" else "is it running?"
        home = DevServer(state_dir=state_dir()).live_address()
        if home is not None and one_address(home) != one_address(where):
            # `server-start --port` put it elsewhere: `dev` would be refused (a user test).
            hint = f"this OUTLAST_HOME's embedded server runs on {home}: TEMPORAL_ADDRESS={home}"
        fail(f"cannot reach Temporal at {where}: {connect_failure(e)}; {hint}")
    except ValueError as e:  # the data converter's settings (PayloadKeyError is one)
        fail(str(e))
    CONNECTED[:] = [client.service_client.config.target_host]
    return client


CONNECTED: list[str] = []
"""The address this command connected to: the embedded server's port is not always 7233, nor
named by `$TEMPORAL_ADDRESS` (`outlast server-start --port`)."""


def one_address(address: str) -> str:
    """`127.0.0.1:7233` and `localhost:7233` as one address."""
    host, _, port = address.rpartition(":")
    return f"{'localhost' if host in ('127.0.0.1', '[::1]', '::1') else host}:{port}"


def ls_hint(workflow_id: str) -> str:
    """Where to find the right id: plain `ls` hides sub-agents, so for one of theirs (a `/` in
    the id) it pointed at a list without them (a user test, 2026-12-07)."""
    if "/" in workflow_id:
        return "`outlast ls --all` lists the workflows there are, sub-agents included"
    return "`outlast ls` lists the workflows there are"


def check_id(workflow_id: str) -> None:
    if not workflow_id.strip():
        fail("the workflow id is empty; `outlast ls` lists the workflows there are.")


async def describe_or_fail(handle: WorkflowHandle) -> WorkflowExecutionDescription:
    """The workflow's description, or a sentence and exit 2 (no such workflow, a refusal)."""
    try:
        return await handle.describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            if queued := await queued_worker_note(handle):
                fail(queued)
            fail(f"no workflow {handle.id}; {ls_hint(handle.id)}.")
        fail(server_said(handle.id, e))
        raise  # not reached: fail() exits


QUEUED_QUERY = timedelta(seconds=2)


async def queued_worker_note(handle: WorkflowHandle) -> str | None:
    """What `PARENT/NAME`, which has no workflow, is when it is a worker its coordinator
    queued for its files: `send`, `stop` and `kill` said "no workflow" of a worker `show`
    lists as queued (a user test, 2026-12-07). None for anything else."""
    parent, _, name = handle.id.rpartition("/")
    if not parent:
        return None
    coordinator = handle._client.get_workflow_handle(parent)  # noqa: SLF001
    try:
        status = await coordinator.query(
            "status", result_type=AgentStatus, rpc_timeout=QUEUED_QUERY
        )
    except (RPCError, WorkflowQueryFailedError):
        return None
    for q in status.queued:
        if name in (q.label, q.agent_id):
            return (
                f"{handle.id} has no workflow yet: its coordinator queued it for its files "
                f"({queued_line(q)}), and it starts by itself once they are free. Until then "
                f"only {parent} can act on it: its TaskStop takes it off the queue (ask it "
                f'with `outlast send {parent} "..."`), and its end leaves it unstarted.'
            )
    return None


def server_said(workflow_id: str, error: RPCError) -> str:
    """A server's refusal about a workflow, with what to do when it is that no worker runs."""
    text = f"{workflow_id}: {error.message}"
    if error.status == RPCStatusCode.UNAVAILABLE and "connect" in error.message:
        # The server went away mid-command: it read "tcp connect error" (a user test).
        where = CONNECTED[0] if CONNECTED else os.environ.get("TEMPORAL_ADDRESS", "localhost:7233")
        return (
            f"{workflow_id}: lost the Temporal server at {where} ({error.message}); is it running?"
        )
    if QUERY_BUFFER_FULL in error.message:
        # The server's words for a workflow no worker has taken up (a user test, 2026-12-06).
        text = f"{workflow_id}: no worker has taken it up yet ({error.message})"
    if NO_WORKER in error.message or QUERY_BUFFER_FULL in error.message:
        text += "; start one with `outlast worker` (or `outlast dev`), then try again"
    return text


POLLER_GONE_S = 90
"""A worker polls without pause (a long poll lasts about a minute); the server lists a worker
that died for five minutes more, by its last poll."""


def live_poller(last_poll_s: float, now_s: float) -> bool:
    return now_s - last_poll_s < POLLER_GONE_S


async def polled(client: Client, queue: str, kind: TaskQueueType.ValueType) -> bool | None:
    """Whether a live worker polls `queue` for `kind` tasks; None when the server cannot say."""
    try:
        described = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=queue),
                task_queue_type=kind,
            )
        )
    except RPCError:
        return None
    now = time.time()
    return any(live_poller(p.last_access_time.ToSeconds(), now) for p in described.pollers)


async def host_queue_note(client: Client, desc: WorkflowExecutionDescription) -> str | None:
    """For a running task whose workspace's host queue no worker serves, a note saying so: its
    tools and first steps run there, so it waits at its start with nothing else to show it (a
    raw start naming a host with no worker, a host whose worker is down)."""
    if desc.status != WorkflowExecutionStatus.RUNNING:
        return None
    try:
        async for event in client.get_workflow_handle(desc.id).fetch_history_events():
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            [given] = await client.data_converter.decode(payloads, [dict])
            break
        workspace = given["workspace"]
        queue, root = workspace["host_queue"], workspace["root"]
    except (RPCError, KeyError, TypeError, ValueError):
        return None  # not a task of Outlast's shape, or not readable here: nothing to say
    if await polled(client, queue, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY) is not False:
        return None
    return (
        f"no worker polls {queue}, the host queue of its workspace ({root}): its tools run "
        "there, so it waits until one does. Start `outlast worker` on the machine that holds "
        "the checkout (OUTLAST_HOST_ID names its queue)."
    )


async def why_it_waits(
    client: Client, desc: WorkflowExecutionDescription, answered: bool = False
) -> str | None:
    """What a running workflow waits for that nothing else says, if anything: a worker on its
    queue, one with model credentials, one on its workspace's host (`show`, `attach`,
    `run --no-worker`). `answered`: a worker has just answered its query, so one polls its
    queue whatever the server's list of pollers says (a server restarted a moment ago has
    none yet: `show` told people to start a worker that was running; a user test,
    2026-12-07)."""
    if (
        answered
        and await polled(client, desc.task_queue, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW) is False
    ):
        return None  # the server's list of pollers is not to be trusted yet: it says nothing
    return (
        await no_worker_note(client, desc)
        or await model_call_note(client, desc)
        or await host_queue_note(client, desc)
    )


async def no_worker_note(client: Client, desc: WorkflowExecutionDescription) -> str | None:
    """For a running workflow whose task queue no worker has polled lately, a note saying
    that it waits for one; None when a worker polls it (or the server cannot say)."""
    if desc.status != WorkflowExecutionStatus.RUNNING:
        return None
    queue = desc.task_queue
    if await polled(client, queue, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW) is not False:
        return None
    return (
        f"no worker polls {queue}, the task queue of {desc.id}: it waits until one does. "
        f"Start one with {_start_one(queue)}."
    )


def _start_one(queue: str) -> str:
    if queue != (os.environ.get("OUTLAST_TASK_QUEUE") or TASK_QUEUE):
        # `outlast worker` serves $OUTLAST_TASK_QUEUE, else Outlast's (a demo's run has its own).
        return f"`OUTLAST_TASK_QUEUE={queue} outlast worker`"
    # A worker started with another OUTLAST_TASK_QUEUE polls only that (a user test: the
    # `outlast dev` said to start ran, on another queue).
    return (
        "`outlast worker` (or `outlast dev`; one started with OUTLAST_TASK_QUEUE serves that "
        "queue only)"
    )


async def model_call_note(client: Client, desc: WorkflowExecutionDescription) -> str | None:
    """For a running workflow whose model call waits while no worker takes activities from
    its queue, a note saying so. An `outlast worker --no-model` runs its workflow tasks and
    answers its queries, so nothing else says it (a review, 2026-12-07); not a refusal of a
    command that asks the workflow something, which that worker answers."""
    if desc.status != WorkflowExecutionStatus.RUNNING:
        return None
    pending = desc.raw_description.pending_activities
    if not any(p.activity_type.name == MODEL_ACTIVITY for p in pending):
        return None
    queue = desc.task_queue
    if await polled(client, queue, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY) is not False:
        return None
    return (
        f"no worker with model credentials polls {queue}: the model call of {desc.id} waits "
        f"until one does (an `outlast worker --no-model` takes none). Start one with "
        f"{_start_one(queue)} and the model's key."
    )
