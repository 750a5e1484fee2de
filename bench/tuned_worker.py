"""A worker process like `python -m worker`, with one of bench/worker_settings.py's settings.

    python bench/tuned_worker.py SETTING      # configured by the environment, as the worker

It imports only what `python -m worker` imports (plus temporalio's poller types), so its peak
RSS compares with the production worker's; the driver and its helpers stay out of it. Exits
non-zero when a worker fails, so the driver sees it.
"""

from __future__ import annotations

import asyncio
import os
import sys
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
    """Serve both queues with setting `name` until SIGTERM, as `python -m worker` does."""
    main_options, tool_options = SETTINGS[name]()
    client = await connect()
    workers = w.build_workers(
        client,
        task_queue=os.environ["OUTLAST_TASK_QUEUE"],
        main_options=main_options,
        tool_options=tool_options,
    )
    await w.serve_until_stopped(workers)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in SETTINGS:
        sys.exit(f"usage: tuned_worker.py SETTING, one of: {', '.join(SETTINGS)}")
    w.exit_after(lambda: asyncio.run(serve(sys.argv[1])))
