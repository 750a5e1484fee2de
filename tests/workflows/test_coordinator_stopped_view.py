"""A coordinator stopped or killed while its workers ran: `run`'s follow, `attach` and `show`
say how each worker ended. `attach` showed them running, long after the coordinator's end had
cancelled them (a user test): its `status` lists them as they were when it ended."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from rich.console import Console

from outlast.inspect import agent_tree
from outlast.progress import follow
from outlast.tree_text import tree_lines
from tests.support import running_workers, scripted_model
from tests.workflows.test_coordinator import start_coordinator, worker
from tests.workflows.test_plan_mode import cli
from workflows.contracts import AgentStatus, StopRequest

HOLD = "until [ -e released ]; do sleep 0.1; done"
LOOK = "Look at {{cwd}}/src/app.py. Purpose: a test. Report; do not modify files."
WORKERS = ("scout-a", "scout-b")


def script() -> dict:
    return {
        "agents": [
            *(
                {
                    "name": name,
                    "match": {"agent_name": name},
                    # Until its coordinator's end kills it: the file never comes.
                    "turns": [
                        {"tool_use": {"name": "Bash", "input": {"command": HOLD}}},
                        {"text": "Summary: looked."},
                    ],
                }
                for name in WORKERS
            ),
            {
                "name": "coordinator",
                "match": {"agent_type": "coordinator"},
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": [worker(name, "research", LOOK) for name in WORKERS]},
                    {"text": "Waiting for the workers."},
                ],
            },
        ]
    }


def terminal() -> Console:
    return Console(force_terminal=True, record=True, width=200, color_system=None)


async def statuses(client, workflow_ids: list[str]) -> dict[str, str]:
    return {
        wid: (await client.get_workflow_handle(wid).describe()).status.name for wid in workflow_ids
    }


def last_frame(text: str) -> str:
    return text[text.rindex("coordinator ") :]


@pytest.fixture
def closing_wait(monkeypatch) -> None:
    """A follow waits `CLOSING_WAIT_S` (5 s) for the children its agent's end killed to
    close; under CI's load they took longer once, and the last frame showed them running.
    What is tested is what the frame says once they have closed."""
    from outlast import live_tree, progress

    monkeypatch.setattr(live_tree, "CLOSING_WAIT_S", 60.0)
    monkeypatch.setattr(progress, "CLOSING_WAIT_S", 60.0)


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_run_attach_and_show_of_an_ended_coordinator_say_its_workers_were_killed(
    client, dev_server, git_repo, how, closing_wait
):
    wf_id = f"coord-{uuid.uuid4().hex[:8]}"
    seen: list[AgentStatus] = []

    async def look() -> None:
        try:
            seen[:] = [await handle.query("status", result_type=AgentStatus)]
        except Exception:  # noqa: BLE001 - not picked up yet
            pass

    def both_at_work() -> bool:
        return bool(seen) and seen[0].state == "waiting" and len(seen[0].children) == 2

    with scripted_model(script()):
        async with running_workers(client) as queues:
            handle = await start_coordinator(client, queues, git_repo, wf_id)
            run_console = terminal()
            followed = asyncio.create_task(follow(handle, run_console, client))  # `run`'s
            for _ in range(300):
                await look()
                if both_at_work():
                    break
                await asyncio.sleep(0.1)
            assert both_at_work(), seen
            if how == "stop":
                await handle.signal("stop", StopRequest(reason="enough"))
            else:
                await handle.cancel()
            await asyncio.wait_for(followed, 60)
            ids = [c.workflow_id for c in seen[0].children]
            for _ in range(300):  # the attach comes after every worker has ended
                ends = await statuses(client, ids)
                if "RUNNING" not in ends.values():
                    break
                await asyncio.sleep(0.1)
            attach_console = terminal()
            await follow(client.get_workflow_handle(wf_id), attach_console, client)
            _, logged = await cli(dev_server.address, "attach", wf_id)
            shown = "\n".join(tree_lines(await agent_tree(client, wf_id)))
    assert set(ends.values()) == {"CANCELED"}, ends
    run_text, attached = run_console.export_text(), attach_console.export_text()
    for name in WORKERS:
        killed = f"■ {name} (worker, background) killed"
        assert killed in last_frame(run_text), run_text
        assert killed in attached, attached
        assert f"sub-agent {name} (worker): killed, background" in logged, logged
    # Never running, in any frame or line of the follows of the ended coordinator.
    assert "…" not in attached, attached
    assert "running, background" not in logged, logged
    assert shown.count("(worker, canceled, killed") == 2, shown


async def test_show_gives_the_reason_a_person_killed_a_worker_with(client, git_repo):
    """`show` gave a kill's reason for the workflow asked about only: a worker, a stage or a
    lead a person killed read plain `killed` in its pattern's tree (a user test,
    2026-12-07). A worker its coordinator's end stopped was stopped by that workflow."""
    wf_id = f"coord-{uuid.uuid4().hex[:8]}"
    with scripted_model(script()):
        async with running_workers(client) as queues:
            handle = await start_coordinator(client, queues, git_repo, wf_id)
            for _ in range(300):
                seen = await handle.query("status", result_type=AgentStatus)
                if seen.state == "waiting" and len(seen.children) == 2:
                    break
                await asyncio.sleep(0.1)
            scout_a, scout_b = (c.workflow_id for c in seen.children)
            await client.get_workflow_handle(scout_a).cancel(reason="wrong file")
            for _ in range(300):
                if (await statuses(client, [scout_a]))[scout_a] != "RUNNING":
                    break
                await asyncio.sleep(0.1)
            await handle.signal("stop", StopRequest(reason="enough"))
            await handle.result()
            for _ in range(300):
                if (await statuses(client, [scout_b]))[scout_b] != "RUNNING":
                    break
                await asyncio.sleep(0.1)
            rows = {line.split()[0]: line for line in tree_lines(await agent_tree(client, wf_id))}
    assert "killed" in rows[scout_a] and "reason: wrong file" in rows[scout_a], rows
    # Said as stopped by its coordinator: the server's "Cancel requested by workflow with run
    # id ... with reason:" was shown. With the words the coordinator's stop was given.
    said = f"reason: stopped by workflow {wf_id}, which was stopped: enough)"
    assert said in rows[scout_b], rows
