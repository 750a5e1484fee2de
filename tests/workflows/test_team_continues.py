"""A team continues as new once its history is long (patched `team-continues`): its members,
started with ABANDON, go on working for the next run; their ends reach it by their last
report, or by the liveness check for one that closed without one; and a team killed after it
continued still kills its members."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.service import RPCError

from agents.config import AgentSettings
from agents.team_tasks import TaskCreateInput, TeamTask
from tests.support import fast_config, running_workers, scripted_model
from tests.workflows.test_continue_as_new import chain_statuses
from tests.workflows.test_team import member, wait_for_states
from tests.workflows.test_visibility import current_details
from workflows.contracts import MailMessage, StopRequest, Workspace
from workflows.pattern_contracts import (
    MemberRef,
    ShutdownAsk,
    ShutdownOutcome,
    TaskCreateRequest,
    TeamInput,
    TeamMail,
    TeammateSpec,
    TeamResult,
    TeamView,
)

SCRIPT = {
    "agents": [
        member("lead", "idle", {"text": "lead idle"}),
        member("b", "idle", {"text": "b idle"}),
        member("c", "idle", {"text": "c idle"}),
    ]
}


def long_team(repo, queues, liveness_s: float = 1, answer_wait_s: float = 2) -> TeamInput:
    """A standing team that continues as new at 100 events (the least the config takes)."""
    agents = AgentSettings(
        continue_as_new_events=100,
        liveness_check_s=liveness_s,
        hand_on_answer_wait_s=answer_wait_s,
    )
    return TeamInput(
        team_name="long",
        workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
        lead=TeammateSpec(name="lead", prompt="Wait for your teammates."),
        teammates=[
            TeammateSpec(name="b", prompt="Answer mail."),
            TeammateSpec(name="c", prompt="Answer mail."),
        ],
        end_when_quiet=False,
        config=fast_config(agents=agents),
    )


async def received(handle, name: str) -> int:
    view = await handle.query("team", result_type=TeamView)
    return next(m.received for m in view.members if m.name == name)


async def continued(client, workflow_id: str, first_run: str) -> bool:
    desc = await client.get_workflow_handle(workflow_id, run_id=first_run).describe()
    return desc.status == WorkflowExecutionStatus.CONTINUED_AS_NEW


async def mail_until_continued(client, handle, first_run: str, to: str = "b") -> int:
    """Mail `to` until the team's first run has continued as new; how many were sent."""
    for n in range(1, 40):
        before = await received(handle, to)
        sent = await handle.execute_update(
            "message_member", TeamMail(to=to, text=f"ping {n}"), result_type=str
        )
        assert sent == f"Message sent to {to}."
        await wait_for(lambda b=before: received(handle, to), lambda got, b=before: got > b)
        await wait_for_states(handle, {to: "idle"})
        if await continued(client, handle.id, first_run):
            return n
    raise AssertionError("the team never continued as new")


async def wait_for(read, ok, timeout: float = 30):
    deadline = asyncio.get_running_loop().time() + timeout
    got = None
    while asyncio.get_running_loop().time() < deadline:
        try:
            got = await read()
            if ok(got):
                return got
        except RPCError:
            pass  # the run is handing on
        await asyncio.sleep(0.1)
    raise AssertionError(f"never: last read {got!r}")


async def start_long_team(
    client, queues, repo, wf_id: str | None = None, liveness_s: float = 1, answer_wait_s=2
):
    handle = await client.start_workflow(
        "TeamWorkflow",
        long_team(repo, queues, liveness_s, answer_wait_s),
        id=wf_id or f"team-{uuid.uuid4().hex[:8]}",
        task_queue=queues.task_queue,
        result_type=TeamResult,
    )
    await wait_for_states(handle, {"lead": "idle", "b": "idle", "c": "idle"}, timeout=60)
    first_run = (await handle.describe()).run_id
    return handle, first_run


async def run_long_team(client, repo, wf_id: str | None = None):
    """Mail b until the team has continued as new, then once more; kill c; terminate b;
    shut the team down. The handle and the team's result."""
    async with running_workers(client) as queues:
        # Liveness checks five minutes apart: b's end is not found by them.
        handle, first_run = await start_long_team(client, queues, repo, wf_id, liveness_s=300)
        sent = await mail_until_continued(client, handle, first_run)
        # The next run has the members the first started, and their counts.
        assert await received(handle, "b") == sent
        # Its page in the UI (no static summary: continue_as_new takes none) says where the
        # task is.
        await wait_for(
            lambda: current_details(client, handle.id),
            lambda got: (
                f"(continued as new): the task's summary and details are on its "
                f"first run, `{first_run}`" in got
            ),
        )
        # Mail after the hand-on reaches b, and its reports reach the new run.
        await handle.execute_update(
            "message_member", TeamMail(to="b", text="after"), result_type=str
        )
        await wait_for(lambda: received(handle, "b"), lambda got: got == sent + 1)
        await wait_for_states(handle, {"b": "idle"})
        # c killed: its last report says so.
        await handle.signal("kill_member", MemberRef(name="c"))
        await wait_for_states(handle, {"c": "ended"})
        # b terminated: no last report; the run waiting for it to close (patched
        # team-members-awaited) finds it at once, and the lead is told.
        await client.get_workflow_handle(f"{handle.id}/b").terminate("gone")
        await wait_for_states(handle, {"b": "ended"})
        await handle.signal("shutdown", StopRequest(reason="done"))
        return handle, await handle.result()


async def test_a_long_team_continues_as_new_and_loses_no_member_mail_or_end(client, git_repo):
    with scripted_model(SCRIPT):
        handle, result = await run_long_team(client, git_repo)
    outcomes = {m.name: m for m in result.members}
    team_runs = [w async for w in client.list_workflows(f'WorkflowId = "{handle.id}"')]
    assert len(team_runs) >= 2
    # Its runs that handed it on read `continued`, not `running` for good.
    statuses = await chain_statuses(client, handle.id, len(team_runs))
    assert statuses == [*["continued"] * (len(team_runs) - 1), "stopped"], statuses
    assert outcomes["c"].status == "killed"
    assert outcomes["b"].status == "failed" and "terminated" in (outcomes["b"].error or "")
    assert outcomes["lead"].status == "completed"
    assert outcomes["lead"].usage.total_tokens > 0
    # The lead was told of b (team-loss-told), by the run that found it gone.
    # Every run of the lead: it continues as new at 100 events too (the latest run by
    # describe, should the list not show it yet).
    lead_id = f"{handle.id}/lead"
    runs = {r.run_id async for r in client.list_workflows(f'WorkflowId = "{lead_id}"')}
    runs.add((await client.get_workflow_handle(lead_id).describe()).run_id)
    notes = [
        mail.text
        for run_id in runs
        async for e in client.get_workflow_handle(lead_id, run_id=run_id).fetch_history_events()
        if e.workflow_execution_signaled_event_attributes.signal_name == "send_message"
        for mail in await client.data_converter.decode(
            e.workflow_execution_signaled_event_attributes.input.payloads, [MailMessage]
        )
    ]
    assert any(n.startswith("Teammate b failed") for n in notes), notes


async def test_a_team_killed_after_it_continued_kills_its_members(client, git_repo):
    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            handle, first_run = await start_long_team(client, queues, git_repo)
            await mail_until_continued(client, handle, first_run)
            await handle.cancel()
            for name in ("lead", "b", "c"):
                member_handle = client.get_workflow_handle(f"{handle.id}/{name}")
                await wait_for(
                    lambda h=member_handle: h.describe(),
                    lambda d: d.status == WorkflowExecutionStatus.CANCELED,
                )


async def test_the_reaper_cancels_the_members_of_a_terminated_team(client, git_repo):
    """Started with ABANDON, a terminated team's members are no longer cancelled by the
    server: the reaper finds them as it finds a terminated agent's sub-agents."""
    from outlast.orphans import stop_orphans

    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            handle, _ = await start_long_team(client, queues, git_repo)
            await handle.terminate("gone")
            done = await stop_orphans(client, parents=[handle.id])
            assert sorted(o.workflow_id for o in done) == [
                f"{handle.id}/{n}" for n in ("b", "c", "lead")
            ]
            for name in ("lead", "b", "c"):
                member_handle = client.get_workflow_handle(f"{handle.id}/{name}")
                await wait_for(
                    lambda h=member_handle: h.describe(),
                    lambda d: d.status == WorkflowExecutionStatus.CANCELED,
                )


async def test_a_carry_from_a_client_is_refused(client, git_repo):
    """`carry` is the team's own, for its next run: a client's start with one fails at once,
    saying so, instead of starting a team from made-up state."""
    async with running_workers(client) as queues:
        inp = long_team(git_repo, queues).model_copy(update={"carry": {"members": []}})
        handle = await client.start_workflow(
            "TeamWorkflow", inp, id=f"team-{uuid.uuid4().hex[:8]}", task_queue=queues.task_queue
        )
        with pytest.raises(WorkflowFailureError) as e:
            await handle.result()
    assert "carry is set only by a team's own continue-as-new" in str(e.value.cause)


async def test_an_update_retried_after_the_hand_on_is_answered_as_it_was(client, git_repo):
    """A member's task update whose attempt timed out as the team handed on is retried, with
    its id, on the next run: Temporal's dedup of update ids is per run, so the team keeps
    the latest answers itself (a second task was made)."""
    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            handle, first_run = await start_long_team(client, queues, git_repo)
            create = TaskCreateRequest(
                task=TaskCreateInput(subject="one", description="Do one."), caller="lead"
            )
            first = await handle.execute_update(
                "task_create", create, id="lead-call-1", result_type=TeamTask
            )
            await mail_until_continued(client, handle, first_run)
            again = await handle.execute_update(
                "task_create", create, id="lead-call-1", result_type=TeamTask
            )
            tasks = await handle.query("task_list", result_type=list[TeamTask])
            await handle.signal("shutdown", StopRequest(reason="done"))
            await handle.result()
    assert again == first
    assert [t.id for t in tasks] == [first.id]


async def ask_b_while_the_team_hands_on(client, repo, script, answer_wait_s: float):
    """Ask b to shut down, then mail c until the team has handed on, then shut the team
    down: what the request answered."""
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle, first_run = await start_long_team(
                client, queues, repo, answer_wait_s=answer_wait_s
            )
            asking = asyncio.create_task(
                handle.execute_update(
                    "request_shutdown",
                    ShutdownAsk(name="b", timeout_s=600),
                    result_type=ShutdownOutcome,
                )
            )
            await mail_until_continued(client, handle, first_run, to="c")
            outcome = await asyncio.wait_for(asking, 90)
            await handle.signal("shutdown", StopRequest(reason="done"))
            await handle.result()
    return outcome


@pytest.mark.parametrize("answer_wait_s", [2, 0])
async def test_a_shutdown_request_waiting_for_its_answer_does_not_hold_the_hand_on(
    client, git_repo, answer_wait_s
):
    """A `request_shutdown` waits up to its `timeout_s` for the member's answer; the team's
    hand-on waits for its handlers. b never answers here: the request gives up waiting
    (`answered: false`) when the team hands on, after `hand_on_answer_wait_s` (0: at once),
    rather than let the history grow on."""
    outcome = await ask_b_while_the_team_hands_on(
        client, git_repo, SCRIPT, answer_wait_s=answer_wait_s
    )
    assert not outcome.answered and outcome.name == "b"


async def test_a_continued_team_ends_at_once_when_a_carried_member_closed_unseen(client, git_repo):
    """A member of the run before, terminated, sends no last report: the ending team learns
    of it from `agents.await_closed` at once, not from a liveness check after its interval
    (here five minutes)."""
    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            handle, first_run = await start_long_team(client, queues, git_repo, liveness_s=300)
            await mail_until_continued(client, handle, first_run)
            await client.get_workflow_handle(f"{handle.id}/c").terminate("gone")
            await handle.signal("shutdown", StopRequest(reason="done"))
            result = await asyncio.wait_for(handle.result(), 60)
    outcomes = {m.name: m for m in result.members}
    assert outcomes["c"].status == "failed" and "terminated" in (outcomes["c"].error or "")


async def test_a_shutdown_answer_on_its_way_is_waited_for_before_the_hand_on(client, git_repo):
    """b answers the request a moment after the team's hand-on is due: the team waits for it
    (patched team-hand-on-waits-answers), and the request answers with b's reason; it gave
    up at once, and b's answer was shown nowhere (a user test, 2026-12-06)."""
    from tests.workflows.test_team import answering

    declining = answering("b", 1, False, "still busy")
    # Long enough that the mail to c below makes the hand-on due before the answer comes.
    declining["turns"] = [{**declining["turns"][0], "delay_ms": 10_000}]
    script = {"agents": [declining, *SCRIPT["agents"]]}
    outcome = await ask_b_while_the_team_hands_on(client, git_repo, script, answer_wait_s=60)
    assert outcome.answered and not outcome.approve and outcome.reason == "still busy"
