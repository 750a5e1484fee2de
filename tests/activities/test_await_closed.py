"""`agents.await_closed`: a continued team waits on its earlier run's members with it."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from temporalio.testing import ActivityEnvironment

from activities.resume import AgentControl


async def test_it_returns_once_one_closes_with_where_each_stands(client):
    """Two agents no worker takes (they stay running); one terminated: the wait ends with
    its status, the other's RUNNING. Until then it waits, heartbeating."""
    queue = f"none-{uuid.uuid4().hex}"
    handles = [
        await client.start_workflow("AgentWorkflow", id=f"t-{uuid.uuid4().hex}", task_queue=queue)
        for _ in range(2)
    ]
    env = ActivityEnvironment()
    waiting = asyncio.create_task(
        env.run(AgentControl(client).await_closed, [h.id for h in handles])
    )
    try:
        await asyncio.sleep(1.0)
        assert not waiting.done()  # both still run
        await handles[1].terminate(reason="gone")
        # Its usage is asked of it (no worker answers: a 5 s query timeout).
        states = await asyncio.wait_for(waiting, 20)
    finally:
        with contextlib.suppress(Exception):
            await handles[0].terminate(reason="test")
    assert [(s.workflow_id, s.status) for s in states] == [
        (handles[0].id, "RUNNING"),
        (handles[1].id, "TERMINATED"),
    ]
    assert "terminated" in (states[1].error or "")
