"""A coordinator's queued worker (R59) in its `status` and in `outlast show`: it has no
workflow until its files come free, and was listed nowhere (a user test, 2026-12-06)."""

from __future__ import annotations

import asyncio
import uuid

from outlast.inspect import agent_tree
from outlast.tree_text import tree_lines
from tests.support import running_workers, scripted_model
from tests.workflows.test_coordinator import start_coordinator, worker
from tests.workflows.test_plan_mode import cli
from workflows.contracts import AgentStatus, ChildSummary

HOLD = "until [ -e looked ]; do sleep 0.1; done"
EDIT = "In {{cwd}}/src/app.py change greet(). Purpose: a test. Done = the file changed."


def script() -> dict:
    return {
        "agents": [
            {
                "name": "fix",
                "match": {"agent_name": "fix"},
                "turns": [
                    # Until the test has looked while `doc` waits for the file.
                    {"tool_use": {"name": "Bash", "input": {"command": HOLD}}},
                    {"text": "Summary: fixed."},
                ],
            },
            {
                "name": "doc",
                "match": {"agent_name": "doc"},
                "turns": [{"text": "Summary: documented."}],
            },
            {
                "name": "coordinator",
                "match": {"agent_type": "coordinator"},
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": [
                            worker("fix", "implementation", EDIT, ["src/app.py"]),
                            worker("doc", "implementation", EDIT, ["src/app.py"]),
                        ]
                    },
                    {"text": "Waiting for the workers."},
                    {"text": "Both are done."},
                ],
            },
        ]
    }


async def test_a_queued_worker_is_in_its_coordinator_s_status_and_show(
    client, dev_server, git_repo
):
    wf_id = f"coord-{uuid.uuid4().hex[:8]}"
    queued: list = []
    tasks: list[ChildSummary] = []
    children: list[ChildSummary] = []

    async def look() -> None:
        try:
            status = await handle.query("status", result_type=AgentStatus)
        except Exception:  # noqa: BLE001 - not picked up yet
            return
        queued[:] = status.queued
        children[:] = status.children
        # A raw client's view: it listed the running worker only (a user test, 2026-12-07).
        tasks[:] = await handle.query("tasks", result_type=list[ChildSummary])

    with scripted_model(script()):
        async with running_workers(client) as queues:
            handle = await start_coordinator(client, queues, git_repo, wf_id)
            for _ in range(150):
                await look()
                # Both: the worker that holds the files may still be starting when the
                # other is queued behind it (CI, 2026-12-08: the status had no child yet).
                if queued and children:
                    break
                await asyncio.sleep(0.1)
            tree = await agent_tree(client, wf_id)
            # It has no workflow yet: `kill` said "no workflow" (a user test, 2026-12-07).
            killed = await cli(dev_server.address, "kill", f"{wf_id}/doc")
            shown_doc = await cli(dev_server.address, "show", f"{wf_id}/doc")
            (git_repo / "looked").touch()
            result = await handle.result()
            after = await handle.query("status", result_type=AgentStatus)
    (doc,) = queued
    assert [(t.name, t.status, t.run_generation) for t in tasks] == [
        ("fix", "running", 1),
        ("doc", "queued", 0),
    ], tasks
    # Not in the status query's children: it is apart there, and a client of an earlier
    # release knows no `queued` status (a review, 2026-12-07).
    assert [c.status for c in children] == ["running"], children
    assert (tasks[1].agent_id, tasks[1].workflow_id, tasks[1].agent_type) == (
        doc.agent_id,
        "",
        tasks[0].agent_type,
    ), tasks
    assert (doc.label, doc.phase, doc.files, doc.waits_for) == (
        "doc",
        "implementation",
        ["src/app.py"],
        ["fix"],
    ), doc
    shown = "\n".join(tree_lines(tree))
    assert f"  queued: doc ({doc.agent_id}), implementation of src/app.py: waits for fix" in (
        shown
    ), shown
    assert result.status == "completed" and after.queued == []
    assert shown_doc[0] == 2 and "has no workflow yet" in shown_doc[1], shown_doc
    code, said = killed
    said = " ".join(said.split())
    assert code == 2 and f"{wf_id}/doc has no workflow yet: its coordinator queued it" in said
    assert f"doc ({doc.agent_id}), implementation of src/app.py: waits for fix" in said, said
