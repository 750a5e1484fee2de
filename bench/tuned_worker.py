"""A worker process like `python -m worker`, with one of bench/worker_settings.py's settings.

    python bench/tuned_worker.py SETTING      # configured by the environment, as the worker

It imports only what `python -m worker` imports (plus temporalio's poller types), so its peak
RSS compares with the production worker's; the driver and its helpers stay out of it. Exits
non-zero when a worker fails, so the driver sees it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from temporalio.worker import (  # noqa: E402
    PollerBehaviorAutoscaling,
    PollerBehaviorSimpleMaximum,
)

import worker as w  # noqa: E402
from outlast.client import connect  # noqa: E402

Options = tuple[dict[str, Any], dict[str, Any]]
"""(main_options, tool_options) for `build_workers`."""


def _pollers(kind: str, behavior: Any, tools_too: bool) -> Options:
    key = f"{kind}_task_poller_behavior"
    return {key: behavior}, ({key: behavior} if tools_too else {})


SETTINGS: dict[str, Callable[[], Options]] = {
    "default": lambda: ({}, {}),
    # temporalio's default is 5 workflow-task pollers, a fifth of them on the normal queue.
    "wf-pollers-2": lambda: _pollers("workflow", PollerBehaviorSimpleMaximum(2), False),
    "wf-pollers-20": lambda: _pollers("workflow", PollerBehaviorSimpleMaximum(20), False),
    "act-pollers-1": lambda: _pollers("activity", PollerBehaviorSimpleMaximum(1), True),
    "act-pollers-20": lambda: _pollers("activity", PollerBehaviorSimpleMaximum(20), True),
    "autoscaling": lambda: (
        {
            "workflow_task_poller_behavior": PollerBehaviorAutoscaling(),
            "activity_task_poller_behavior": PollerBehaviorAutoscaling(),
        },
        {"activity_task_poller_behavior": PollerBehaviorAutoscaling()},
    ),
    # Fewer cached runs than the fan-out has workflows (21): evicted runs replay their history.
    "cache-10": lambda: ({"max_cached_workflows": 10}, {}),
    # The dev server hands an activity scheduled by a workflow task back with its completion.
    "no-eager": lambda: ({"disable_eager_activity_execution": True}, {}),
}


async def serve(name: str) -> None:
    """Serve both queues with setting `name` until SIGTERM; raise what a worker raised."""
    main_options, tool_options = SETTINGS[name]()
    client = await connect()
    workers = w.build_workers(
        client,
        task_queue=os.environ["OUTLAST_TASK_QUEUE"],
        main_options=main_options,
        tool_options=tool_options,
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    serving = asyncio.ensure_future(w.run_workers(workers))
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait([serving, stopped], return_when="FIRST_COMPLETED")
    await asyncio.wait_for(asyncio.gather(*(x.shutdown() for x in workers)), w.SHUTDOWN_GRACE_S)
    if serving.done() and not serving.cancelled() and serving.exception() is not None:
        raise serving.exception()


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in SETTINGS:
        sys.exit(f"usage: tuned_worker.py SETTING, one of: {', '.join(SETTINGS)}")
    code = 0
    try:
        asyncio.run(serve(sys.argv[1]))
    except Exception:  # noqa: BLE001 - printed, and the exit status says it
        traceback.print_exc()
        code = 1
    # As `python -m worker`: the Temporal client's native threads can hang CPython's teardown
    # (temporalio sdk-python#300).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
