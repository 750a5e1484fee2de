"""A workflow no worker serves: the commands that need one say so and what to run, rather
than hang or pass the server's words on bare."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid

from tests.support import Queues, agent_input, followed_until, start
from tests.workflows.test_plan_mode import cli


async def test_attach_and_answer_say_that_no_worker_runs(client, dev_server, git_repo):
    nobody = f"nobody-{uuid.uuid4().hex[:8]}"
    queues = Queues(task_queue=nobody, host_queue=f"{nobody}-host")
    handle = await start(client, agent_input("anything", git_repo, queues), queues)
    out = await followed_until(dev_server.address, "outlast worker`", "attach", handle.id)
    flat = " ".join(out.split())
    assert f"no worker polls {nobody}, the task queue of {handle.id}" in flat, out
    # A query or an update would wait for an answer no worker gives: refused at once.
    for args in (("answer", handle.id), ("transcript", handle.id)):
        code, out = await cli(dev_server.address, *args)
        flat = " ".join(out.split())
        assert code == 2 and f"no worker polls {nobody}" in flat, out
        # Its own queue, which plain `outlast worker` does not serve (a demo's run has one).
        start_one = f"Start one with `OUTLAST_TASK_QUEUE={nobody} outlast worker`. Then try"
        assert start_one in flat, out
    # A plan's decision is a signal: queued for when a worker runs, and said so; sent, not
    # answered: 3 (it said 0, success, and the decision was then refused; a user test).
    code, out = await cli(dev_server.address, "approve", handle.id)
    flat = " ".join(out.split())
    assert code == 3 and f"no worker polls {nobody}" in flat, out
    assert "the approval is queued, for the plan waiting when a worker takes" in flat, out
    code, out = await cli(dev_server.address, "show", handle.id)
    assert code == 0 and f"no worker polls {nobody}, the task queue" in " ".join(out.split())
    # Nothing answered which sub-agents it waits on: queued, not done (it said they went on).
    code, out = await cli(dev_server.address, "background", handle.id)
    flat = " ".join(out.split())
    assert code == 3 and f"{handle.id} did not answer: the request for every" in flat, out
    # A message is kept for when one runs: sent, and said so.
    code, out = await cli(dev_server.address, "send", handle.id, "later, then")
    assert code == 0 and f"no worker polls {nobody}" in out and "message sent" in out, out
    code, out = await cli(dev_server.address, "attach", "no-such-workflow")
    assert code == 2 and "no workflow no-such-workflow; `outlast ls`" in out, out
    # A sub-agent's id: plain `ls` hides sub-agents (a user test, 2026-12-07).
    code, out = await cli(dev_server.address, "stop", f"{handle.id}/nope")
    assert code == 2 and "; `outlast ls --all` lists the workflows there" in out, out
    # Long, as a refusal that lists the choices is: its end was cut at 200 characters.
    tail = " ".join(f"choice-{i}" for i in range(40))
    await handle.terminate(reason=f"test over [/] [wip]; {tail}")
    code, out = await cli(dev_server.address, "show", handle.id)
    # Shown as given: rich read `[/]` as markup and crashed, and dropped `[wip]`.
    assert code == 0 and f"(single, terminated, test over [/] [wip]; {tail})" in out, out
    # Attached after the end: how it ended, once.
    code, out = await cli(dev_server.address, "attach", handle.id)
    assert code == 1 and "terminated: test over [/] [wip]; " in out and "failed" not in out, out


async def on_a_dead_worker_s_queue(client, git_repo):
    """An agent started on a queue whose only worker polled a moment ago and is gone: the
    server still lists its poller."""
    from temporalio.worker import Worker

    from workflows.agent import AgentWorkflow

    queue = f"died-{uuid.uuid4().hex[:8]}"
    queues = Queues(task_queue=queue, host_queue=f"{queue}-host")
    async with Worker(client, task_queue=queue, workflows=[AgentWorkflow]):
        await asyncio.sleep(1)  # it polls
    return await client.start_workflow(
        "AgentWorkflow", agent_input("x", git_repo, queues), id=queue, task_queue=queue
    )


async def test_a_worker_that_died_counts_as_none(client, git_repo, monkeypatch):
    """The server lists a dead worker's poller for five minutes more: a note that trusted the
    list said nothing while a follow waited for good (found by a user test, 2026-12-05)."""
    from outlast import cli_base

    handle = await on_a_dead_worker_s_queue(client, git_repo)
    desc = await handle.describe()
    assert await cli_base.no_worker_note(client, desc) is None  # listed, polled a moment ago
    monkeypatch.setattr(cli_base, "POLLER_GONE_S", 1)
    await asyncio.sleep(1.5)
    note = await cli_base.no_worker_note(client, desc)
    assert note is not None and f"no worker polls {handle.id}" in note
    await handle.terminate(reason="test over")


async def test_show_says_a_worker_that_just_died_did_not_answer(client, git_repo):
    """Its poller is listed a minute and more after it died, so `show` said nothing at all
    of it that long (a user test, 2026-12-06): the status query that nobody answered says it."""
    from outlast.inspect import agent_tree
    from outlast.silence import NO_WORKER_ANSWER
    from outlast.tree_text import tree_lines

    handle = await on_a_dead_worker_s_queue(client, git_repo)
    tree = await agent_tree(client, handle.id)
    # A kill sent meanwhile waits in the history for a worker: `show` said nothing of it
    # (a user test, 2026-12-07).
    await handle.cancel(reason="enough")
    killed = await agent_tree(client, handle.id)
    await handle.terminate(reason="test over")
    assert tree.outcome == NO_WORKER_ANSWER
    assert "its worker did not answer: none runs" in tree_lines(tree)[0], tree_lines(tree)
    assert killed.outcome == (f"{NO_WORKER_ANSWER}; kill requested, taken once a worker runs"), (
        killed.outcome
    )


async def test_attach_and_show_say_when_no_worker_serves_the_workspace_host(
    client, dev_server, git_repo
):
    """A start naming a host no worker serves waited at its first step, `show` said
    "starting", and nothing said why (a user test, 2026-12-05); `show` said nothing either."""
    from tests.support import running_workers

    nobody = f"outlast-host-nobody-{uuid.uuid4().hex[:6]}"
    async with running_workers(client) as queues:
        elsewhere = Queues(task_queue=queues.task_queue, host_queue=nobody)
        handle = await start(client, agent_input("anything", git_repo, elsewhere), elsewhere)
        try:
            out = await followed_until(
                dev_server.address, "OUTLAST_HOST_ID names its queue", "attach", handle.id
            )
            code, shown = await cli(dev_server.address, "show", handle.id)
        finally:
            await handle.terminate(reason="test over")
    flat = " ".join(out.split())
    assert f"no worker polls {nobody}, the host queue of its workspace ({git_repo})" in flat, out
    # `show` says it too, under the tree.
    flat = " ".join(shown.split())
    assert code == 0 and flat.startswith(handle.id), shown
    assert f"no worker polls {nobody}, the host queue of its workspace ({git_repo})" in flat, shown


async def test_an_update_no_worker_takes_is_given_up_on(client, dev_server, git_repo, monkeypatch):
    """Sent just after the worker died (still listed as polling), `approve` of a pipeline's
    stage hung for good: the SDK asks again while no worker takes an update, and its per-call
    timeout never ended the wait (a user test, 2026-12-05; 150 s and counting on the code
    before)."""
    from outlast import updates
    from tests.support import crashable_worker, scripted_model
    from tests.workflows.test_pipeline import (
        APPROVAL_SCRIPT,
        APPROVAL_STAGES,
        pipeline_input,
        start_pipeline,
        wait_for_approval,
    )
    from workflows.pattern_contracts import StageDecision

    monkeypatch.setattr(updates, "UPDATE_WAIT_S", 3.0)
    with scripted_model(APPROVAL_SCRIPT) as model:
        with crashable_worker(dev_server.address, model.url) as workers:
            inp = pipeline_input(git_repo, workers.queues, stages=APPROVAL_STAGES)
            handle = await start_pipeline(client, workers.queues, inp)
            await wait_for_approval(handle, "look")
            os.kill(workers.pid, signal.SIGKILL)
            await asyncio.sleep(5)
            began = asyncio.get_running_loop().time()
            try:
                async with asyncio.timeout(60):
                    await updates.update_within(
                        handle, "decide_stage", StageDecision(stage="look", approve=True)
                    )
                raise AssertionError("answered with no worker")
            except updates.NoAnswer:
                took = asyncio.get_running_loop().time() - began
            finally:
                await handle.terminate(reason="test over")
    assert took < 15, took
    assert "did not answer within 3 s" in updates.no_answer_text("x", "decision")


async def test_answer_and_approve_to_an_agent_whose_worker_died_say_to_start_one(
    client, dev_server, git_repo
):
    """A user test (2026-12-06): with the worker gone before the agent's first task, both
    waited and then printed the server's `consistent query buffer is full ...` (here `answer`
    waited 50 s for the SDK's "Timeout expired"), exit 2; the approval was not queued."""
    handle = await on_a_dead_worker_s_queue(client, git_repo)
    (answer_code, answered), (approve_code, approved) = await asyncio.gather(
        cli(dev_server.address, "answer", handle.id),
        cli(dev_server.address, "approve", handle.id),
    )
    await handle.terminate(reason="test")
    answered, approved = " ".join(answered.split()), " ".join(approved.split())
    assert answer_code == 2 and "no worker answered for" in answered, answered
    assert "nothing was sent. Is one running? Start one with `outlast worker`" in answered
    assert approve_code == 3 and "the approval is queued" in approved, approved


async def test_show_of_a_team_says_its_worker_did_not_answer_on_every_row(
    client, dev_server, git_repo
):
    """With the worker killed, `show TEAM` read `(team, running)` and each member just
    `running`: the team's query waited out the tree's time and the members were not asked
    (a user test, 2026-12-07). The member's own `show` said it."""
    from outlast.inspect import agent_tree
    from outlast.silence import NO_WORKER_ANSWER
    from tests.support import crashable_worker, scripted_model
    from tests.workflows.test_team import start_standing_team, team_script

    with (
        scripted_model(team_script()) as model,
        crashable_worker(dev_server.address, model.url) as workers,
    ):
        handle = await start_standing_team(client, workers.queues, git_repo)
        os.kill(workers.pid, signal.SIGKILL)
        try:
            began = asyncio.get_running_loop().time()
            tree = await agent_tree(client, handle.id)
            took = asyncio.get_running_loop().time() - began
        finally:
            await handle.terminate(reason="test over")
    said = [(node.row.workflow_id, node.outcome) for node in [tree, *tree.children]]
    assert said == [(handle.id, NO_WORKER_ANSWER)] + [
        (f"{handle.id}/{name}", NO_WORKER_ANSWER) for name in ("a", "b", "c")
    ], said
    assert took < 10, took


async def test_a_team_message_no_worker_took_says_where_to_see_it_arrive(
    client, dev_server, monkeypatch
):
    """`outlast show` lists no messages: the refusal pointed there, where a person could not
    tell whether to send it again (a user test, 2026-12-07). It names the member's
    transcript, which shows it once delivered."""
    from typer.testing import CliRunner

    from outlast import updates
    from outlast.cli import app

    monkeypatch.setattr(updates, "UPDATE_WAIT_S", 2.0)
    team = await client.start_workflow(
        "TeamWorkflow", id=f"team-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
    )
    env = {"TEMPORAL_ADDRESS": dev_server.address, "COLUMNS": "300"}
    try:
        for to, member in ((None, "<lead>"), ("bob", "bob"), ("*", "<member>")):
            extra = [] if to is None else ["--to", to]
            done = await asyncio.to_thread(
                CliRunner().invoke, app, ["send", team.id, "hi", *extra], env=env
            )
            said = " ".join(done.output.split())
            assert done.exit_code == 3, said
            check = f"check `outlast transcript {team.id}/{member}` (it shows the message once"
            assert check in said and "outlast show" not in said, said
    finally:
        await team.terminate(reason="test")


async def test_ctrl_c_on_attach_says_it_detached(client, dev_server, git_repo):
    """It exited 0 without a word, as a follow that saw the workflow end does (a user test,
    2026-12-07); `run` says it detached."""
    import sys

    handle = await client.start_workflow(
        "AgentWorkflow",
        agent_input("go", git_repo, Queues("nobody-polls", "outlast-host-nobody")),
        id=f"attached-{uuid.uuid4().hex[:8]}",
        task_queue="nobody-polls",
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "outlast.cli",
        "attach",
        handle.id,
        env={**os.environ, "TEMPORAL_ADDRESS": dev_server.address, "COLUMNS": "200"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        # Following: it has said that no worker polls the queue.
        first = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert b"no worker polls nobody-polls" in first, first
        proc.send_signal(signal.SIGINT)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
        await handle.terminate(reason="test")
    said = " ".join(out.decode().split())
    assert proc.returncode == 0, said
    assert f"detached; the workflow goes on. Follow it with: outlast attach {handle.id}" in said
