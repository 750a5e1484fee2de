"""A Temporal worker for one peer family, run as a child process by run.py.

    <venv>/bin/python peer_worker.py --family minimal|pyd|oai --address HOST:PORT
                                     --task-queue TQ [--local-model]

Prints READY once polling and runs until SIGTERM/SIGINT; the driver reads this process's
peak RSS (VmHWM) from /proc before stopping it. From shared/bench-peers' worker.py, without
the in-process loops. It imports only this directory's modules and its venv's packages, so
the `agents` of openai-agents never meets Outlast's `agents`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def family_parts(family: str, local_model: bool) -> tuple[list, list, list]:
    """(workflows, activities, plugins) of an integration family."""
    if family == "minimal":
        import cfg_minimal as m

        return m.WORKFLOWS, m.ACTIVITIES, []
    if family == "pyd":
        import cfg_pydantic_ai as m

        return m.WORKFLOWS, m.ACTIVITIES, m.plugins()
    if family == "oai":
        import cfg_openai_agents as m

        return m.WORKFLOWS, m.ACTIVITIES, m.plugins(local=local_model)
    raise SystemExit(f"unknown family {family}")


async def run_worker(args: argparse.Namespace) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    workflows, activities, plugins = family_parts(args.family, args.local_model)
    client = await Client.connect(args.address, plugins=plugins)
    worker = Worker(client, task_queue=args.task_queue, workflows=workflows, activities=activities)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        print("READY", flush=True)
        await stop.wait()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--family", required=True)
    p.add_argument("--address", required=True)
    p.add_argument("--task-queue", required=True)
    p.add_argument("--local-model", action="store_true")
    args = p.parse_args()
    if args.family == "oai":
        # No API key and no network: keep the SDK's trace exporter from trying to ship spans.
        os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    asyncio.run(run_worker(args))


if __name__ == "__main__":
    main()
