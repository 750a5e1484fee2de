"""`PipelineWorkflow` (R87): each stage's request carries the previous stage's output; a
failing stage ends the run naming it; approval between stages is an update."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import uuid

import pytest
from rich.console import Console
from temporalio import activity
from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
    WorkflowUpdateStage,
)
from temporalio.exceptions import CancelledError

from activities.spot_check import SpotCheckInput, spot_check
from agents.builtin.verification import NOTHING_RAN
from agents.pipeline import PipelineStage
from outlast.inspect import agent_tree
from outlast.listing import list_rows
from outlast.pattern_follow import _progress
from outlast.pattern_output import print_pattern_result
from outlast.tree_text import tree_lines
from outlast.waiting import waiting_on_people
from tests.support import (
    fast_config,
    kill_with_an_update_held,
    running_workers,
    scripted_model,
    taken_changes,
)
from tests.workflows.test_agent_control import wait_status
from workflows import search_attributes as sa
from workflows.contracts import AgentStatus, StopRequest, Workspace
from workflows.pattern_contracts import PipelineInput, PipelineResult, PipelineView, StageDecision
from workflows.pipeline import MAX_ATTEMPTS, PIPELINE_WAITS_MARKED

TASK = "Make greet() say hi."


def stage_agent(agent_type: str, final: str, read: bool = True) -> dict:
    turns = [{"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}}}]
    return {
        "name": agent_type,
        "match": {"agent_type": agent_type},
        "turns": [*(turns if read else []), {"text": final}],
    }


CHECKED = (
    "### Check: greet says hi\n**Command run:**\n  python3 -c 'from src.app import greet; "
    "print(greet())'\n**Output observed:**\n  hi\n**Result: PASS**\n\n"
)
"""A check the verifier ran, in the report format (R82): a PASS needs one."""


def verifier_agent(final: str) -> dict:
    """The verification stage: it runs CHECKED's command, then reports."""
    command = "cd {{cwd}} && python3 -c 'from src.app import greet; print(greet())'"
    return {
        "name": "verification",
        "match": {"agent_type": "verification"},
        "turns": [{"tool_use": {"name": "Bash", "input": {"command": command}}}, {"text": final}],
    }


def default_script(verdict: str = "VERDICT: PASS") -> dict:
    return {
        "agents": [
            stage_agent("Explore", "EXPLORE-OUT: greet() is at src/app.py:1"),
            stage_agent("Plan", "PLAN-OUT: change line 2 of src/app.py"),
            {
                "name": "implement",
                "match": {"agent_type": "general-purpose"},
                "turns": [
                    {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}}},
                    {
                        "tool_use": {
                            "name": "Edit",
                            "input": {
                                "file_path": "{{cwd}}/src/app.py",
                                "old_string": "'hello'",
                                "new_string": "'hi'",
                            },
                        }
                    },
                    {"text": "IMPLEMENT-OUT: changed src/app.py line 2"},
                ],
            },
            verifier_agent(f"{CHECKED}{verdict}"),
        ]
    }


FAILING_PLAN = {
    "agents": [
        stage_agent("Explore", "EXPLORE-OUT"),
        {
            "name": "plan",
            "match": {"agent_type": "Plan"},
            "turns": [
                {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}}},
                {"error": {"status": 400, "message": "prompt is too long"}},
            ],
        },
    ]
}
"""The plan stage fails for good (a 400) after one Read."""


def pipeline_input(repo, queues, **kw) -> PipelineInput:
    kw.setdefault("config", fast_config())
    return PipelineInput(
        task=TASK, workspace=Workspace(root=str(repo), host_queue=queues.host_queue), **kw
    )


async def start_pipeline(client, queues, inp: PipelineInput, wf_id: str | None = None):
    return await client.start_workflow(
        "PipelineWorkflow",
        inp,
        id=wf_id or f"pipe-{uuid.uuid4().hex[:8]}",
        task_queue=queues.task_queue,
        result_type=PipelineResult,
    )


def first_requests(log) -> dict[str, str]:
    """Each stage agent's first request, as text."""
    seen: dict[str, str] = {}
    for r in log:
        kind = r["headers"].get("x-outlast-agent-type")
        seen.setdefault(kind, json.dumps(r["body"]["messages"]))
    return seen


async def test_default_pipeline_hands_each_output_to_the_next_stage(client, git_repo):
    with scripted_model(default_script(), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_pipeline(client, queues, pipeline_input(git_repo, queues))
            result = await handle.result()
    assert result.status == "completed", result.message
    assert [s.name for s in result.stages] == ["explore", "plan", "implement", "verify"]
    assert [s.verdict for s in result.stages] == [None, None, None, "PASS"]
    assert (git_repo / "src/app.py").read_text() == "def greet():\n    return 'hi'\n"
    first = first_requests(model.log)
    assert TASK in first["Explore"]
    assert "EXPLORE-OUT" in first["Plan"]
    assert "PLAN-OUT" in first["general-purpose"]
    assert "IMPLEMENT-OUT" in first["verification"] and TASK in first["verification"]
    # The verification stage is read-only (R10): no Edit or Write offered.
    verify_tools = next(
        r["tools"] for r in model.log if r["headers"]["x-outlast-agent-type"] == "verification"
    )
    assert "Edit" not in verify_tools and "Write" not in verify_tools
    assert result.usage.tool_uses >= 5


async def test_a_failing_stage_ends_the_pipeline_and_is_named(client, git_repo):
    with scripted_model(default_script("VERDICT: FAIL")):
        async with running_workers(client) as queues:
            handle = await start_pipeline(client, queues, pipeline_input(git_repo, queues))
            result = await handle.result()
    assert result.status == "failed"
    assert result.failed_stage == "verify"
    assert "verify" in result.message and "FAIL" in result.message
    # The stage's agent completed; its line says it ended the pipeline, where it read plain
    # `completed` (a user test, 2026-12-07), in the result and in `show`.
    out = io.StringIO()
    print_pattern_result("pipeline", result, Console(file=out, width=300))
    said = out.getvalue()
    assert (
        "verify (verification, attempt 1): completed, VERDICT: FAIL; the pipeline failed here"
        in said
    ), said
    assert "explore (Explore, attempt 1): completed\n" in said, said
    tree = await agent_tree(client, handle.id)
    verify = next(c for c in tree.children if c.row.workflow_id.endswith("verify"))
    assert verify.outcome == "completed; the pipeline failed here", verify.outcome
    line = next(line for line in tree_lines(tree) if verify.row.workflow_id in line)
    assert "completed, the pipeline failed here" in line and "completed, completed" not in line
    # `ls --status failed` lists it, `completed (failed)`: it did not (a user test).
    for _ in range(50):  # visibility is eventually consistent
        failed = {r.workflow_id: r for r in await list_rows(client, status="failed", limit=500)}
        if handle.id in failed:
            break
        await asyncio.sleep(0.1)
    row = failed[handle.id]
    assert (row.status, row.outcome) == ("completed", "failed"), row

    with scripted_model(FAILING_PLAN) as model:
        async with running_workers(client) as queues:
            handle = await start_pipeline(client, queues, pipeline_input(git_repo, queues))
            result = await handle.result()
    assert result.status == "failed" and result.failed_stage == "plan"
    assert [s.status for s in result.stages] == ["completed", "failed"]
    # What the failed stage spent before it failed counts (read from its run after the end).
    explore, plan = result.stages
    assert plan.usage.tool_uses == 1 and plan.usage.tokens.output_tokens > 0, plan.usage
    assert result.usage.tool_uses == explore.usage.tool_uses + 1
    assert result.usage.total_tokens == explore.usage.total_tokens + plan.usage.total_tokens
    assert "prompt is too long" in result.message
    assert not any(r["headers"]["x-outlast-agent-type"] == "general-purpose" for r in model.log)


async def test_a_pass_with_no_check_run_ends_the_pipeline_as_a_fail(client, git_repo):
    """R82: a verification report's PASS stands only on checks it shows running (a command
    and its output), as in a verified task; a bare "looks good" PASS had let it through."""
    script = default_script()
    script["agents"][-1] = stage_agent("verification", "Read the code; looks good.\nVERDICT: PASS")
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_pipeline(client, queues, pipeline_input(git_repo, queues))
            result = await handle.result()
    assert result.status == "failed" and result.failed_stage == "verify"
    assert "PASS without any executed check" in result.message
    assert result.stages[-1].verdict == "FAIL"


APPROVAL_STAGES = [
    PipelineStage(name="look", agent_type="Explore", instructions="Look.", approval=True),
    PipelineStage(name="plan", agent_type="Plan", instructions="Plan it."),
]
APPROVAL_SCRIPT = {
    "agents": [
        {
            "name": "look-again",
            "match": {"agent_type": "Explore", "prompt_contains": "more detail"},
            "turns": [{"text": "LOOK-2"}],
        },
        stage_agent("Explore", "LOOK-1", read=False),
        stage_agent("Plan", "PLAN-OUT", read=False),
    ]
}


async def steer_approvals(handle) -> None:
    """Wrong stages refused, a re-run of `look`, a late decision on its first attempt
    refused, then its second approved (also the replay corpus's `pipeline_approval`)."""
    view = await wait_for_approval(handle, "look")
    assert view.stages[-1].final_text == "LOOK-1"
    for wrong in ("plan", "nonesuch"):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update("decide_stage", StageDecision(stage=wrong, approve=True))
        assert wrong in str(refused.value.cause), refused.value.cause
    assert view.awaiting_attempt == 1
    answer = await handle.execute_update(
        "decide_stage",
        StageDecision(stage="look", approve=False, rerun=True, feedback="more detail"),
        result_type=str,
    )
    assert answer == "stage look re-run (attempt 2)"
    view = await wait_for_approval(handle, "look", after=1)
    assert view.stages[-1].final_text == "LOOK-2" and view.awaiting_attempt == 2
    # A decision taken on attempt 1's output does not land on attempt 2.
    with pytest.raises(WorkflowUpdateFailedError) as late:
        await handle.execute_update(
            "decide_stage", StageDecision(stage="look", approve=True, attempt=1)
        )
    assert "stage look attempt 1 is not the one to decide on: attempt 2 is" in str(late.value.cause)
    answer = await handle.execute_update(
        "decide_stage", StageDecision(stage="look", approve=True, attempt=2), result_type=str
    )
    assert answer == "stage look approved"


async def test_stages_wait_for_approval_and_can_be_rerun_with_feedback(
    client, dev_server, git_repo
):
    from tests.workflows.test_plan_mode import cli

    with scripted_model(APPROVAL_SCRIPT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=APPROVAL_STAGES)
            )
            # A misspelt field is refused, not dropped (a re-run without its feedback).
            typo = {"stage": "look", "approve": False, "rerun": True, "feedbak": "x"}
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await handle.execute_update("decide_stage", typo)
            assert "unknown field feedbak (did you mean feedback?)" in str(refused.value.cause)
            # `outlast show` says which stage waits, and the command (it said `running`).
            await wait_for_approval(handle, "look")
            waiting = (await agent_tree(client, handle.id)).outcome
            listed = [
                w for w in (await waiting_on_people(client)).waiting if w.workflow_id == handle.id
            ]
            look = await client.get_workflow_handle(f"{handle.id}/look").describe()
            # The Web UI's filter for what waits on a person finds it (a user test).
            marked = await attribute_until(handle, sa.WAITING_FOR_APPROVAL)
            # Without the stage, the refusal names the one that waits, as a command.
            code, unnamed = await cli(dev_server.address, "approve", handle.id)
            await steer_approvals(handle)
            result = await handle.result()
            followed = [line for _, line in await _progress(handle, "pipeline")]
            patches = await taken_changes(handle)
    assert marked == sa.WAITING_FOR_APPROVAL and PIPELINE_WAITS_MARKED in patches, marked
    assert result.status == "completed"
    assert [(s.name, s.attempt, s.status) for s in result.stages] == [
        ("look", 1, "rejected"),
        ("look", 2, "completed"),
        ("plan", 1, "completed"),
    ]
    assert waiting == (
        f"stage look (attempt 1) waits for approval: outlast approve {handle.id} look --attempt 1"
        f"; its output: outlast transcript {handle.id}/look"
    )
    # Since its stage's agent ended, as a plan or a question says since when (it was null:
    # a user test, 2026-12-07).
    assert [(w.kind, w.since) for w in listed] == [("stage", look.close_time)], listed
    assert code == 2, unnamed
    assert (
        f"Stage look (attempt 1) waits: outlast approve {handle.id} look --attempt 1"
        in " ".join(unnamed.split())
    ), unnamed
    # A follow tells the re-run from the first run (it printed the same line twice).
    assert followed == [
        "stage look: rejected",
        "stage look (attempt 2): completed",
        "stage plan: completed",
    ]
    plan_request = first_requests(model.log)["Plan"]
    assert "LOOK-2" in plan_request and "LOOK-1" not in plan_request


async def attribute_until(handle, status: str) -> str | None:
    """The pipeline's `AgentStatus` once it reads `status` (or after 10 s)."""
    shown = None
    for _ in range(100):
        shown = (await handle.describe()).typed_search_attributes.get(sa.AGENT_STATUS)
        if shown == status:
            break
        await asyncio.sleep(0.1)
    return shown


async def wait_for_running(handle, stage: str) -> PipelineView:
    for _ in range(100):
        view = await handle.query("pipeline", result_type=PipelineView)
        if view.current == stage:
            return view
        await asyncio.sleep(0.1)
    raise AssertionError(f"stage {stage} never ran: {view}")


async def wait_for_approval(handle, stage: str, after: int = 0) -> PipelineView:
    for _ in range(200):
        view = await handle.query("pipeline", result_type=PipelineView)
        if view.awaiting_approval == stage and len(view.stages) > after:
            return view
        await asyncio.sleep(0.1)
    raise AssertionError(f"stage {stage} never waited for approval")


async def test_a_stop_with_a_rerun_decided_ahead_starts_no_stage(client, git_repo):
    """A re-run decided while the approval stage still runs is held; a `stop` meanwhile
    wins: `stop` promises that no further stage starts. Without the fix the re-run started
    one when the stop reached the pipeline as the stage ended (the held update's handler
    resumes first and sets the decision); with the stop in earlier, the wait for a decision
    saw it first. So this fails without the fix only in some timings (it did under load)."""
    stages = [
        PipelineStage(name="look", agent_type="Explore", instructions="Look.", approval=True),
        PipelineStage(name="plan", agent_type="Plan", instructions="Plan it."),
        PipelineStage(name="write", agent_type="Plan", instructions="Write.", approval=True),
    ]
    script = {
        "agents": [
            {
                "name": "look",
                "match": {"agent_type": "Explore"},
                "turns": [{"delay_ms": 5000, "text": "LOOK"}],
                "after_last": "repeat_last",
            },
            stage_agent("Plan", "PLAN-OUT", read=False),
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=stages)
            )
            await wait_for_running(handle, "look")
            # An attempt that has not run is refused at once, not held until attempt 1 ends.
            with pytest.raises(WorkflowUpdateFailedError) as ahead:
                await asyncio.wait_for(
                    handle.execute_update(
                        "decide_stage", StageDecision(stage="look", approve=True, attempt=2)
                    ),
                    10,
                )
            assert "stage look attempt 2 is not the one to decide on: attempt 1 is" in str(
                ahead.value.cause
            )
            # So is a decision on a stage behind another approval, and an approval with a
            # re-run: both were held until look ended (a user test from a raw client).
            for wrong, said in (
                (
                    StageDecision(stage="write", approve=True),
                    "stage write is not the next to decide: stage look waits for approval first",
                ),
                (
                    StageDecision(stage="look", approve=True, rerun=True, feedback="x"),
                    "rerun is a rejection's",
                ),
            ):
                with pytest.raises(WorkflowUpdateFailedError) as refused:
                    await asyncio.wait_for(handle.execute_update("decide_stage", wrong), 10)
                assert said in str(refused.value.cause), refused.value.cause
            rerun = StageDecision(stage="look", approve=False, rerun=True, feedback="again")
            held = await handle.start_update(
                "decide_stage", rerun, wait_for_stage=WorkflowUpdateStage.ACCEPTED
            )
            await handle.signal("stop", StopRequest(reason="enough"))
            result = await asyncio.wait_for(handle.result(), 60)
            try:
                answer = await held.result()
            except WorkflowUpdateFailedError as e:  # the wait for a decision saw the stop first
                answer = str(e.cause)
    assert result.status == "stopped", result
    # Never "re-run": the answer says what the pipeline did.
    assert answer in (
        "stage look not re-run: the pipeline was stopped",
        "stage look is not waiting for approval: the pipeline has ended",
    ), answer
    assert [(s.name, s.attempt) for s in result.stages] == [("look", 1)]


HANGING_EXPLORE = {
    "agents": [
        {
            "name": "explore",
            "match": {"agent_type": "Explore"},
            "turns": [
                {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}}},
                {"tool_use": {"name": "Bash", "input": {"command": "sleep 60"}}},
                {"text": "never"},
            ],
        }
    ]
}
"""The first stage reads, then runs a command that outlasts the test."""


async def kill_while_explore_runs(client, git_repo, pipeline_too: bool, wf_id=None):
    """Kill the Explore stage alone, or the whole pipeline, while its command runs."""
    with scripted_model(HANGING_EXPLORE):
        async with running_workers(client) as queues:
            inp = pipeline_input(git_repo, queues)
            handle = await start_pipeline(client, queues, inp, wf_id)
            stage = client.get_workflow_handle(f"{handle.id}/explore")
            await wait_status(stage, lambda s: "Bash" in s.current_tools)
            await (handle if pipeline_too else stage).cancel()
            try:
                return handle, await asyncio.wait_for(handle.result(), 60)
            except WorkflowFailureError as e:
                assert (await stage.describe()).status == WorkflowExecutionStatus.CANCELED
                return handle, e


async def test_a_killed_stage_fails_the_pipeline_a_killed_pipeline_ends_cancelled(client, git_repo):
    handle, result = await kill_while_explore_runs(client, git_repo, pipeline_too=False)
    assert result.status == "failed" and result.failed_stage == "explore", result
    (explore,) = result.stages
    assert explore.status == "killed" and explore.usage.tool_uses == 2, explore
    assert result.usage.tool_uses == 2
    assert await agent_status(handle) == "failed"
    # The pipeline's own kill is not taken for its stage's: the pipeline ends cancelled, and
    # says so in its search attributes.
    handle, failure = await kill_while_explore_runs(client, git_repo, pipeline_too=True)
    assert isinstance(failure, WorkflowFailureError), failure
    assert isinstance(failure.cause, CancelledError)
    assert await agent_status(handle) == "killed"


async def agent_status(handle) -> str | None:
    """The workflow's `AgentStatus` search attribute, from its own record (no visibility lag)."""
    return (await handle.describe()).typed_search_attributes.get(sa.AGENT_STATUS)


async def kill_with_a_decision_held(client, git_repo, wf_id=None):
    """Approve the running approval stage ahead (held), then kill the pipeline: the
    pipeline's failure and the held decision's."""
    stages = [
        PipelineStage(name="look", agent_type="Explore", instructions="Look.", approval=True),
        PipelineStage(name="plan", agent_type="Plan", instructions="Plan it."),
    ]
    with scripted_model(HANGING_EXPLORE):
        async with running_workers(client) as queues:
            inp = pipeline_input(git_repo, queues, stages=stages)
            handle = await start_pipeline(client, queues, inp, wf_id)
            stage = client.get_workflow_handle(f"{handle.id}/look")
            await wait_status(stage, lambda s: "Bash" in s.current_tools)
            ended, answer = await kill_with_an_update_held(
                handle, "decide_stage", StageDecision(stage="look", approve=True)
            )
    return handle, ended, answer


async def test_a_decision_held_when_the_pipeline_is_killed_is_answered(client, git_repo):
    """A decision made ahead (the approval stage still runs) is held; a kill meanwhile
    answers it with the kill, not with Temporal's "the Workflow completed before the Update
    completed" for an update the run never answered."""
    handle, ended, answer = await kill_with_a_decision_held(client, git_repo)
    assert isinstance(ended.cause, CancelledError)
    assert answer.cause.message == "stage look was not decided: the pipeline was killed"
    assert await agent_status(handle) == "killed"


async def test_a_follow_says_what_the_running_stage_s_agent_is_doing(client, git_repo):
    """Off a terminal a follow printed `stage look: running` and then nothing until the
    stage ended (a user test); it now says what the stage's agent is doing, by turn."""
    import io

    from rich.console import Console

    from outlast.pattern_follow import follow_pattern

    stages = [
        PipelineStage(name="look", agent_type="Explore", instructions="Look."),
        PipelineStage(name="plan", agent_type="Plan", instructions="Plan it."),
    ]
    look = stage_agent("Explore", "LOOK")
    look["turns"][0]["delay_ms"] = 1500
    script = {"agents": [look, stage_agent("Plan", "PLAN-OUT", read=False)]}
    out = io.StringIO()
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=stages)
            )
            console = Console(file=out, width=300, force_terminal=False)
            result = await follow_pattern(handle, "pipeline", console, client)
    assert result.status == "completed"
    text = out.getvalue()
    for line in ("stage look: turn 1: calling", "stage look: completed", "stage plan: completed"):
        assert line in text, text


async def test_a_decision_sent_while_its_stage_runs_is_said_to_be_held(
    client, git_repo, monkeypatch
):
    """`outlast approve PIPE look` while look still ran waited for the answer, which comes only
    when the stage ends, and said "did not answer within 30 s: is a worker running?" though
    the decision was taken and applied later (user test 3). It now says it is held."""
    from outlast import updates
    from outlast.cli_steer import run_update

    monkeypatch.setattr(updates, "UPDATE_WAIT_S", 4.0)
    stages = [
        PipelineStage(name="look", agent_type="Explore", instructions="Look.", approval=True),
        PipelineStage(name="plan", agent_type="Plan", instructions="Plan it."),
    ]
    look = {
        "name": "look",
        "match": {"agent_type": "Explore"},
        "turns": [{"delay_ms": 12000, "text": "LOOK"}],
    }
    script = {"agents": [look, stage_agent("Plan", "PLAN-OUT", read=False)]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=stages)
            )
            await wait_for_running(handle, "look")
            loop = asyncio.get_running_loop()
            unread: list = []
            loop.set_exception_handler(lambda _, context: unread.append(context["message"]))
            try:
                said = await run_update(
                    handle, handle.id, "decide_stage", StageDecision(stage="look", approve=True)
                )
                # The answer it stopped waiting for: asyncio printed its error with a
                # traceback, "Task exception was never retrieved" (a user test, 2026-12-07).
                gc.collect()
                await asyncio.sleep(0)
            finally:
                loop.set_exception_handler(None)
            assert unread == [], unread
            # Said while the stage still runs: it waited the whole UPDATE_WAIT_S (30 s) to
            # say it had no answer yet (a user test, 2026-12-07).
            view = await handle.query("pipeline", result_type=PipelineView)
            result = await asyncio.wait_for(handle.result(), 60)
    assert said == (
        f"{handle.id}: stage look still runs; the decision is held and taken when it ends "
        f"(`outlast show {handle.id}` says what became of it)"
    ), said
    assert view.current == "look" and view.held_decisions == ["approve look"], view
    assert result.status == "completed"
    assert [s.name for s in result.stages] == ["look", "plan"]


async def test_answer_to_a_pipeline_says_only_an_agent_asks(client, dev_server, git_repo):
    """`outlast answer PIPE` showed Temporal's "Query handler for 'question' expected but not
    found, known queries: [...]" (user test 3)."""
    from tests.workflows.test_plan_mode import cli

    look = {
        "name": "look",
        "match": {"agent_type": "Explore"},
        "turns": [{"delay_ms": 3000, "text": "LOOK"}],
    }
    stages = [PipelineStage(name="look", agent_type="Explore", instructions="Look.")]
    with scripted_model({"agents": [look]}):
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=stages)
            )
            code, out = await cli(dev_server.address, "answer", handle.id)
            await asyncio.wait_for(handle.result(), 60)
    flat = " ".join(out.split())
    assert code == 2 and f"{handle.id} is a PipelineWorkflow, which asks no questions" in flat, out
    assert "Query handler" not in out


async def test_a_stage_type_no_definition_has_is_refused_before_any_stage_runs(client, git_repo):
    """A misspelt last stage failed the pipeline when that stage started, after every stage
    before it had run (and been paid for). The pipeline now looks its stages' types up when
    it starts, as its stages will, and refuses the ones defined nowhere."""
    stages = [
        PipelineStage(name="look", agent_type="Explore", instructions="Look."),
        PipelineStage(name="review", agent_type="Reveiw", instructions="Review."),
        PipelineStage(name="check", agent_type="checker", instructions="Check."),
    ]
    with scripted_model(default_script()) as model:
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=stages)
            )
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(handle.result(), 30)
            tree = await agent_tree(client, handle.id)
    cause = failed.value.cause
    assert cause.type == "AgentTypeNotFound" and cause.non_retryable, cause
    assert cause.message.startswith(
        "PipelineWorkflow refused: agent type 'Reveiw' (stage review) not found; nor "
        "'checker' (stage check). Available agents: "
    ), cause.message
    assert "Explore" in cause.message
    assert not model.log and not tree.children


async def test_a_stage_type_an_earlier_stage_defines_runs_when_named_late(client, git_repo):
    """A stage may write the definition a later stage's type needs: named in
    `late_agent_types`, that type is not looked up at the start."""
    definition = "---\nname: checker\ndescription: checks\n---\nCheck things.\n"
    write = {"file_path": "{{cwd}}/.claude/agents/checker.md", "content": definition}
    script = {
        "agents": [
            {
                "name": "define",
                "match": {"agent_type": "general-purpose"},
                "turns": [{"tool_use": {"name": "Write", "input": write}}, {"text": "DEFINED"}],
            },
            {"name": "check", "match": {"agent_type": "checker"}, "turns": [{"text": "CHECKED"}]},
        ]
    }
    stages = [
        PipelineStage(name="define", agent_type="general-purpose", instructions="Define it."),
        PipelineStage(name="check", agent_type="checker", instructions="Check."),
    ]
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = pipeline_input(git_repo, queues, stages=stages, late_agent_types=["checker"])
            handle = await start_pipeline(client, queues, inp)
            result = await asyncio.wait_for(handle.result(), 60)
    assert result.status == "completed", result
    assert [(s.name, s.final_text) for s in result.stages] == [
        ("define", "DEFINED"),
        ("check", "CHECKED"),
    ]


async def test_a_type_check_that_cannot_run_is_skipped_and_the_stage_finds_its_type(
    client, git_repo
):
    """The check only says early what a stage would say later: a host whose worker does not
    have the step yet (a rolling deploy) skips it, and the run goes on as before."""
    from worker import HOST_ACTIVITIES

    older = [fn for fn in HOST_ACTIVITIES if fn.__name__ != "definition_names"]
    stages = [PipelineStage(name="look", agent_type="Explore", instructions="Look.")]
    script = {"agents": [stage_agent("Explore", "LOOKED", read=False)]}
    with scripted_model(script):
        async with running_workers(client, host_activities=older) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=stages)
            )
            result = await asyncio.wait_for(handle.result(), 90)
    assert result.status == "completed" and result.stages[0].final_text == "LOOKED", result


async def test_a_pass_from_a_verifier_that_ran_nothing_ends_the_pipeline_as_a_fail(
    client, git_repo
):
    """Its checks are written as run (a command and its output), but the verifier called no
    tool: the pipeline had completed on it (a user test)."""
    script = default_script()
    script["agents"][-1] = stage_agent("verification", CHECKED + "VERDICT: PASS", read=False)
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_pipeline(client, queues, pipeline_input(git_repo, queues))
            result = await handle.result()
    assert result.status == "failed" and result.failed_stage == "verify"
    assert NOTHING_RAN in result.message
    assert result.stages[-1].verdict == "FAIL"


async def test_a_pass_whose_check_never_ran_ends_the_pipeline_as_a_fail(client, git_repo):
    """R82's spot-check: the verifier read the code and reported its check as run, with a
    command it never ran; the pipeline had completed on it."""
    script = default_script()
    script["agents"][-1] = stage_agent("verification", CHECKED + "VERDICT: PASS")
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_pipeline(client, queues, pipeline_input(git_repo, queues))
            result = await handle.result()
    assert result.status == "failed" and result.failed_stage == "verify", result
    assert "PASS, but the check 'greet says hi' was never run" in result.message, result.message
    assert result.stages[-1].verdict == "FAIL"
    assert "verifier-spot-check" in await taken_changes(handle)


async def test_a_rerun_past_the_last_attempt_is_refused_and_the_stage_still_waits(client, git_repo):
    """A third `reject --rerun` answered "not re-run" and ended the whole pipeline as
    rejected, and the follow's hint still offered --rerun (a user test). Refused now, the
    stage waits on, and the hint leaves --rerun out on the last attempt."""
    with scripted_model(APPROVAL_SCRIPT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=APPROVAL_STAGES)
            )
            for attempt in range(1, MAX_ATTEMPTS):
                await wait_for_approval(handle, "look", after=attempt - 1)
                said = f"FEEDBACK-{attempt}"
                again = StageDecision(stage="look", approve=False, rerun=True, feedback=said)
                await handle.execute_update("decide_stage", again)
            view = await wait_for_approval(handle, "look", after=MAX_ATTEMPTS - 1)
            assert view.awaiting_attempt == MAX_ATTEMPTS
            hint = [line for key, line in await _progress(handle, "pipeline") if "approve" in key]
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await handle.execute_update("decide_stage", again)
            view = await handle.query("pipeline", result_type=PipelineView)
            approved = StageDecision(stage="look", approve=True, attempt=MAX_ATTEMPTS)
            await handle.execute_update("decide_stage", approved)
            result = await handle.result()
    assert refused.value.cause.message == (
        f"stage look has run {MAX_ATTEMPTS} times, as often as a stage may ({MAX_ATTEMPTS}): "
        "approve it, or reject it without rerun to end the pipeline"
    )
    assert view.awaiting_approval == "look" and view.awaiting_attempt == MAX_ATTEMPTS
    assert result.status == "completed"
    assert hint and "--feedback '...')" in hint[0] and "--rerun" not in hint[0], hint
    # The last re-run saw both attempts before it and the feedback on each (it had the
    # latest feedback only, not what was sent back; a user test), and that the checkout
    # keeps their changes.
    last = [json.dumps(r["body"]) for r in model.log if r["agent"] == "Explore"][-1]
    for n in (1, 2):
        assert f'<attempt n=\\"{n}\\">' in last and f"FEEDBACK-{n}" in last, last
    assert "The checkout keeps whatever those attempts changed" in last


async def test_a_rejected_re_run_leaves_the_pipeline_no_stage_s_output(client, git_repo):
    """The first attempt re-run, the second rejected: the pipeline's result is no attempt's
    output. The re-run attempt stayed `completed`, and the rejected pipeline printed its
    text as its result (a user test)."""
    with scripted_model(APPROVAL_SCRIPT):
        async with running_workers(client) as queues:
            handle = await start_pipeline(
                client, queues, pipeline_input(git_repo, queues, stages=APPROVAL_STAGES)
            )
            await wait_for_approval(handle, "look")
            again = StageDecision(stage="look", approve=False, rerun=True, feedback="more detail")
            await handle.execute_update("decide_stage", again)
            await wait_for_approval(handle, "look", after=1)
            # Time enough for the `pipeline` query on a loaded machine.
            running = await agent_tree(
                client, handle.id, queries_until=asyncio.get_running_loop().time() + 20
            )
            no = StageDecision(stage="look", approve=False, attempt=2, feedback="still vague")
            await handle.execute_update("decide_stage", no)
            result = await handle.result()
            tree = await agent_tree(client, handle.id)
    # `show`'s rows of the attempts say it too (they read `completed`: a user test).
    assert [(c.row.workflow_id, c.outcome) for c in tree.children] == [
        (f"{handle.id}/look", "rejected"),
        (f"{handle.id}/look-2", "rejected"),
    ], tree.children
    # While the pipeline still ran, the re-run attempt read `completed` (a user test).
    assert running.children[0].outcome == "rejected", running.children
    assert running.children[1].outcome != "rejected", running.children  # it waits
    assert result.status == "rejected" and result.failed_stage == "look", result
    assert result.message == "stage look rejected: still vague"
    assert [(s.attempt, s.status) for s in result.stages] == [(1, "rejected"), (2, "rejected")]
    assert result.final_text == ""


HOLD = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.1; done"}}
"""A Bash call that waits for `released` in the checkout."""


def held_look(then: str) -> tuple[list[PipelineStage], dict]:
    """Stages `look` (Explore) and `plan`, and a script whose `look` says LOOK-HALF and runs a
    Bash that waits for `released` in the checkout, then says `then`."""
    stages = [
        PipelineStage(name="look", agent_type="Explore", instructions="Look."),
        PipelineStage(name="plan", agent_type="Plan", instructions="Plan it."),
    ]
    script = {
        "agents": [
            {
                "name": "look",
                "match": {"agent_type": "Explore"},
                "turns": [{"text": "LOOK-HALF", "tool_use": HOLD}, {"text": then}],
            },
            stage_agent("Plan", "PLAN-OUT", read=False),
        ]
    }
    return stages, script


async def stop_a_stage(
    client, repo, wf_id: str | None = None, log: list | None = None, approve: bool = True
):
    """A two-stage pipeline (no approvals asked) whose first stage's agent a person stops
    mid-Bash; approved once it waits (or rejected). Its handle, result and the view while it
    waited; `log` gets the model's."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    stages, script = held_look("never")
    with scripted_model(script, log_bodies=log is not None) as model:
        async with running_workers(client) as queues:
            inp = pipeline_input(repo, queues, stages=stages)
            handle = await start_pipeline(client, queues, inp, wf_id)
            look = client.get_workflow_handle(f"{handle.id}/look")
            await wait_until_tool_runs(look, "Bash")
            await look.signal("stop", StopRequest(reason="enough looking"))
            (repo / "released").touch()
            view = await wait_for_approval(handle, "look")
            decision = StageDecision(stage="look", approve=approve, feedback="not it")
            await handle.execute_update("decide_stage", decision)
            result = await handle.result()
    if log is not None:
        log.extend(model.log)
    return handle, result, view


async def test_a_stage_a_person_stops_waits_for_a_decision(client, dev_server, git_repo):
    """It went on to the next stage with its half-done output (a review, 2026-12-06)."""
    from tests.workflows.test_plan_mode import cli
    from workflows.pipeline import STOPPED_STAGE_WAITS

    log: list = []
    handle, result, view = await stop_a_stage(client, git_repo, log=log)
    # The next stage is told the approved output is of a stopped stage (it was not).
    (plan,) = [json.dumps(r["body"]) for r in log if r["agent"] == "Plan"]
    assert "This stage was stopped by the user before it finished" in plan, plan
    assert "LOOK-HALF" in plan
    # The pipeline has no conversation of its own: its stages' agents are named.
    code, out = await cli(dev_server.address, "transcript", handle.id)
    flat = " ".join(out.split())
    assert code == 2 and f"{handle.id}/look, {handle.id}/plan." in flat, out
    assert view.stages[-1].stopped and view.stages[-1].final_text == "LOOK-HALF", view
    assert view.awaiting_attempt == 1
    assert result.status == "completed" and result.final_text == "PLAN-OUT", result
    assert STOPPED_STAGE_WAITS in await taken_changes(handle)


async def test_a_stage_attempt_stopped_and_then_rejected_reads_both(client, git_repo):
    """It read only `stopped`, though its rejection ended the pipeline (a user test,
    2026-12-07)."""
    handle, result, _ = await stop_a_stage(client, git_repo, approve=False)
    tree = await agent_tree(client, handle.id)
    assert result.status == "rejected", result
    [look] = [c for c in tree.children if c.row.workflow_id == f"{handle.id}/look"]
    assert look.outcome == "stopped, rejected", look
    assert look.error == "reason: enough looking", look


async def test_a_decision_on_a_stage_that_runs_is_held_and_refused_if_it_does_not_wait(
    client, git_repo
):
    """Such a stage waits only if a person stops it, so its decision is held while it runs
    (a worker replaying the run may not have applied its stop yet); it ends on its own here,
    and the decision is refused with why, while the pipeline goes on."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    stages, script = held_look("LOOK-DONE")
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = pipeline_input(git_repo, queues, stages=stages)
            handle = await start_pipeline(client, queues, inp)
            await wait_until_tool_runs(client.get_workflow_handle(f"{handle.id}/look"), "Bash")
            held = await handle.start_update(
                "decide_stage",
                StageDecision(stage="look", approve=True),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            )
            # `show` says it is held (it said only that the stage ran: a user test).
            shown = (await agent_tree(client, handle.id)).outcome
            # A second decision on it is refused at once: both were taken, and the second
            # failed unseen once the stage ended (a user test, 2026-12-07).
            second = StageDecision(stage="look", approve=False, rerun=True, feedback="x")
            with pytest.raises(WorkflowUpdateFailedError) as twice:
                await handle.execute_update("decide_stage", second)
            (git_repo / "released").touch()
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await held.result()
            result = await handle.result()
            after = await handle.query("pipeline", result_type=PipelineView)
    assert shown == "stage look running, decision held until it ends: approve look", shown
    assert twice.value.cause.message == (
        "stage look was decided already (approve look): one decision per stage"
    )
    assert after.held_decisions == []
    assert "stage look ended without waiting for a decision" in str(refused.value.cause)
    assert result.status == "completed" and result.final_text == "PLAN-OUT", result


def verifier_then_plan() -> tuple[list[PipelineStage], dict]:
    """Stages `verify` (verification, no approval) and `plan`; the verifier runs its check,
    then reports PASS beside a Bash that waits for `released` in the checkout."""
    check = "python3 -c 'from src.app import greet; print(greet())'"
    report = (
        f"### Check: greet says hello\n**Command run:**\n  {check}\n**Output observed:**\n"
        "  hello\n**Result: PASS**\n\nVERDICT: PASS"
    )
    stages = [
        PipelineStage(name="verify", agent_type="verification", instructions="Verify."),
        PipelineStage(name="plan", agent_type="Plan", instructions="Plan it."),
    ]
    script = {
        "agents": [
            {
                "name": "verify",
                "match": {"agent_type": "verification"},
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": check}}},
                    {"text": report, "tool_use": HOLD},
                    {"text": "never"},
                ],
            },
            stage_agent("Plan", "PLAN-OUT", read=False),
        ]
    }
    return stages, script


async def until_second_turn_runs(verify, wait_until_tool_runs) -> None:
    """Until the verifier's second turn's Bash runs (the one that holds)."""
    for _ in range(300):
        await wait_until_tool_runs(verify, "Bash")
        if (await verify.query("status", result_type=AgentStatus)).turn >= 2:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the verifier's second turn never ran")


async def test_a_decision_held_on_a_verifier_is_taken_when_it_waits_after_its_spot_check(
    client, git_repo
):
    """A verification stage (no approval asked) that a person stops after its PASS report:
    the stage's outcome comes after the spot-check of that PASS, and a decision held while
    the stage ran was refused in that gap as if the stage had ended without waiting (a
    review, 2026-12-07). It is taken once the stage waits."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    stages, script = verifier_then_plan()
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = pipeline_input(git_repo, queues, stages=stages)
            handle = await start_pipeline(client, queues, inp)
            verify = client.get_workflow_handle(f"{handle.id}/verify")
            await until_second_turn_runs(verify, wait_until_tool_runs)
            held = await handle.start_update(
                "decide_stage",
                StageDecision(stage="verify", approve=True),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            )
            await verify.signal("stop", StopRequest(reason="enough"))
            (git_repo / "released").touch()
            answer = await asyncio.wait_for(held.result(), 60)
            result = await asyncio.wait_for(handle.result(), 60)
    assert answer == "stage verify approved", answer
    assert result.stages[0].stopped and result.stages[0].verdict == "PASS", result.stages[0]
    assert result.status == "completed" and result.final_text == "PLAN-OUT", result


async def test_a_decision_sent_while_a_verifiers_pass_is_spot_checked_is_held(client, git_repo):
    """Between the verifier's end and its stage's outcome (the spot-check of its PASS) the
    stage neither runs nor waits: a decision sent then was refused as on a stage that never
    waits (a review, 2026-12-07), though a person had stopped it and it was about to wait."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs
    from worker import HOST_ACTIVITIES

    gate, checking = asyncio.Event(), asyncio.Event()

    @activity.defn(name="verification.spot_check")
    async def gated_spot_check(req: SpotCheckInput) -> str:
        checking.set()
        await gate.wait()
        return await spot_check(req)

    host = [fn for fn in HOST_ACTIVITIES if fn is not spot_check] + [gated_spot_check]
    stages, script = verifier_then_plan()
    with scripted_model(script):
        async with running_workers(client, host_activities=host) as queues:
            inp = pipeline_input(git_repo, queues, stages=stages)
            handle = await start_pipeline(client, queues, inp)
            verify = client.get_workflow_handle(f"{handle.id}/verify")
            await until_second_turn_runs(verify, wait_until_tool_runs)
            await verify.signal("stop", StopRequest(reason="enough"))
            (git_repo / "released").touch()
            await asyncio.wait_for(checking.wait(), 60)
            held = await handle.start_update(
                "decide_stage",
                StageDecision(stage="verify", approve=True),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            )
            gate.set()
            answer = await asyncio.wait_for(held.result(), 60)
            result = await asyncio.wait_for(handle.result(), 60)
    assert answer == "stage verify approved", answer
    assert result.status == "completed" and result.final_text == "PLAN-OUT", result


async def test_a_pipeline_asked_to_stop_says_it_ends_with_its_stage(client, dev_server, git_repo):
    """A user test (2026-12-06): `outlast stop PIPELINE` said "after its current turn" while
    the stage went on for a minute, and `show` said nothing of the stop."""
    from tests.workflows.test_plan_mode import cli
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    stages, script = held_look("LOOK-DONE")
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            inp = pipeline_input(git_repo, queues, stages=stages)
            handle = await start_pipeline(client, queues, inp)
            await wait_until_tool_runs(client.get_workflow_handle(f"{handle.id}/look"), "Bash")
            code, said = await cli(dev_server.address, "stop", handle.id)
            asked: list[bool] = []

            async def stop_seen() -> bool:
                view = await handle.query("pipeline", result_type=PipelineView)
                asked.append(view.stop_requested)
                return view.stop_requested

            for _ in range(100):
                if await stop_seen():
                    break
                await asyncio.sleep(0.1)
            assert asked and asked[-1], "the pipeline never said the stop was asked"
            shown_code, shown = await cli(dev_server.address, "show", handle.id)
            (git_repo / "released").touch()
            result = await handle.result()
    said, shown = " ".join(said.split()), " ".join(shown.split())
    assert code == 0 and "to stop when its running stage ends (no later stage starts" in said
    assert f"`outlast stop {handle.id}/STAGE` ends the stage after its current turn" in said
    assert (
        shown_code == 0
        and (
            "stage look running, stop requested: the pipeline ends when this stage does "
            f"(`outlast stop {handle.id}/look` ends the stage after its current turn)"
        )
        in shown
    ), shown
    assert result.status == "stopped", result
    assert not [r for r in model.log if r["agent"] == "Plan"]


async def test_a_pipeline_stopped_while_a_stage_waits_for_a_decision_says_it_ends_now(
    client, dev_server, git_repo
):
    """A review (2026-12-06): the stop's line said "when its running stage ends" of a
    pipeline whose stage waited for a decision, which a stop ends at once."""
    from tests.workflows.test_plan_mode import cli

    with scripted_model(APPROVAL_SCRIPT):
        async with running_workers(client) as queues:
            inp = pipeline_input(git_repo, queues, stages=APPROVAL_STAGES)
            handle = await start_pipeline(client, queues, inp)
            await wait_for_approval(handle, "look")
            code, said = await cli(dev_server.address, "stop", handle.id)
            result = await handle.result()
    said = " ".join(said.split())
    assert (
        code == 0
        and (
            f"asked {handle.id} to stop: no stage runs (stage look waits for a decision), so it "
            "ends now"
        )
        in said
    ), said
    assert result.status == "stopped", result


async def test_decisions_sent_while_no_worker_runs_wait_in_the_history(
    client, dev_server, git_repo
):
    """`outlast approve`/`reject` of a stage while no worker ran sent the `decide_stage`
    update, which the server holds in memory only: a restart before a worker came lost it,
    and of two that conflicted, the refused one was seen by nobody (a user test,
    2026-12-07). Both go as the `stage_decision` signal now: taken, or refused where `show`
    lists it."""
    handle, approved, rejected, result, view = await queued_stage_decisions(
        client, dev_server.address, git_repo
    )
    for code, out in (approved, rejected):
        flat = " ".join(out.split())
        assert code == 3 and f"no worker answered for {handle.id}: the " in flat, out
        assert "is queued, for stage look waiting when a worker takes the pipeline up" in flat
    assert result.status == "completed", result
    assert [(s.name, s.status) for s in result.stages] == [
        ("look", "completed"),
        ("plan", "completed"),
    ]
    assert view.refused_signals == [
        "signal `stage_decision` refused: stage look was decided already (approve look "
        "attempt 1): one decision per stage"
    ], view.refused_signals


async def queued_stage_decisions(client, address: str | None, repo, wf_id: str | None = None):
    """Stage look waits; its worker stops; `outlast approve` and then `reject --rerun` of it
    are sent (as the `stage_decision` signals the CLI sends, without an `address`); a worker
    comes. (handle, approve's and reject's (code, output), the result, the last `pipeline`
    view)"""
    from tests.workflows.test_plan_mode import cli

    with scripted_model(APPROVAL_SCRIPT):
        async with running_workers(client) as queues:
            inp = pipeline_input(repo, queues, stages=APPROVAL_STAGES)
            handle = await start_pipeline(client, queues, inp, wf_id)
            await wait_for_approval(handle, "look")
        if address is None:  # the replay corpus: a release before the signal records it too
            approve = {"stage": "look", "approve": True, "attempt": 1}
            await handle.signal("stage_decision", approve)
            await handle.signal("stage_decision", {"stage": "look", "rerun": True})
            approved = rejected = (3, "")
        else:
            approved = await cli(address, "approve", handle.id, "look", "--attempt", "1")
            rejected = await cli(address, "reject", handle.id, "look", "--rerun")
        async with running_workers(client, queues=queues):
            try:
                result = await asyncio.wait_for(asyncio.shield(handle.result()), 20)
            except TimeoutError:  # a release that refused the signals: the update decides
                approve = StageDecision(stage="look", approve=True, attempt=1)
                await handle.execute_update("decide_stage", approve, result_type=str)
                result = await asyncio.wait_for(handle.result(), 60)
            view = await handle.query("pipeline", result_type=PipelineView)
    return handle, approved, rejected, result, view
