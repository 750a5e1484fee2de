"""Replay-corpus scenarios of the orchestration patterns: fork-join, coordinator, pipeline,
team, verified task (tests/replay/record.py runs them)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from temporalio.client import Client, WorkflowHandle

from tests.conftest import make_git_repo
from tests.support import fast_config, running_workers, scripted_model


async def fork_join(client: Client, tmp: Path) -> WorkflowHandle:
    from workflows.contracts import ForkJoinInput, ForkJoinResult, Workspace

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    script = {
        "agents": [
            *(
                {
                    "name": f"f{i}",
                    "match": {"last_user_contains": f"part {i}"},
                    "turns": [{"text": "unused"}, {"text": f"Scope: part {i}"}],
                }
                for i in range(3)
            ),
            {
                "name": "synth",
                "match": {"last_user_contains": "Combine them"},
                "turns": [{"text": "unused"}, {"text": "all fine"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = ForkJoinInput(
                workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
                directives=[f"check part {i}" for i in range(3)],
                context="Audit the repository.",
                synthesize=True,
            )
            handle = await client.start_workflow(
                "ForkJoinWorkflow",
                inp,
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
                result_type=ForkJoinResult,
            )
            await handle.result()
    return handle


async def fork_join_killed_fork(client: Client, tmp: Path) -> WorkflowHandle:
    """`task_stop` of fork 2 after its Glob: the join reads what it spent after its end."""
    from agents.control_tools import TaskStopInput
    from tests.workflows.test_fork_join import (
        hanging_fork_2_script,
        start_fork_join,
        when_fork_2_hangs,
    )

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(hanging_fork_2_script()):
        async with running_workers(client) as queues:
            wf_id = os.environ["OUTLAST_RECORDING"]
            handle = await start_fork_join(client, queues, repo, 3, wf_id=wf_id)
            await when_fork_2_hangs(client, handle)
            await handle.signal("task_stop", TaskStopInput(task_id="fork-2"))
            await handle.result()
    return handle


async def coordinator(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_coordinator import coordinator_script, run_coordinator

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(coordinator_script()):
        async with running_workers(client) as queues:
            handle, _ = await run_coordinator(client, queues, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def pipeline(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_pipeline import default_script

    return await _run_pipeline(client, tmp, default_script())


async def verified_read_only_implementer(client: Client, tmp: Path) -> WorkflowHandle:
    """A read-only implementer (`Plan`): refused at the start (patched
    pattern-writer-checked); on the code before, every round ran with it."""
    from tests.workflows.test_verified_task import refuse_a_read_only_implementer, task_repo

    repo = task_repo(tmp / "repo")
    handle, _, _ = await refuse_a_read_only_implementer(
        client, repo, os.environ["OUTLAST_RECORDING"]
    )
    return handle


async def pipeline_unknown_type(client: Client, tmp: Path) -> WorkflowHandle:
    """A stage type no definition has: refused at the start (patched
    pattern-agent-types-checked); on the code before, the pipeline failed at that stage."""
    from temporalio.client import WorkflowFailureError

    from agents.pipeline import PipelineStage
    from tests.workflows.test_pipeline import pipeline_input

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    stages = [PipelineStage(name="review", agent_type="Reveiw", instructions="Review.")]
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}):
        async with running_workers(client) as queues:
            handle = await client.start_workflow(
                "PipelineWorkflow",
                pipeline_input(repo, queues, stages=stages),
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
            )
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def team_unknown_type(client: Client, tmp: Path) -> WorkflowHandle:
    """A lead of a type no definition has, and a teammate of a built-in its config leaves
    off: refused before any member starts (patched team-agent-types-checked); on the code
    before, the lead failed at its start and the team ended with it."""
    from tests.workflows.test_team_types import refuse_an_unknown_member_type

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    wf_id = os.environ["OUTLAST_RECORDING"]
    handle, _, _ = await refuse_an_unknown_member_type(client, repo, wf_id)
    return handle


async def pipeline_failed_stage(client: Client, tmp: Path) -> WorkflowHandle:
    """The plan stage fails after a Read: the pipeline reads what it spent after its end."""
    from tests.workflows.test_pipeline import FAILING_PLAN

    return await _run_pipeline(client, tmp, FAILING_PLAN)


async def _run_pipeline(client: Client, tmp: Path, script: dict) -> WorkflowHandle:
    """The default pipeline, with no approvals, to its end."""
    from tests.workflows.test_pipeline import pipeline_input
    from workflows.pattern_contracts import PipelineResult

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await client.start_workflow(
                "PipelineWorkflow",
                pipeline_input(repo, queues, approve_between=False),
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
                result_type=PipelineResult,
            )
            await handle.result()
    return handle


async def pipeline_killed(client: Client, tmp: Path) -> WorkflowHandle:
    """The pipeline killed while its first stage runs a command: it ends cancelled."""
    from tests.workflows.test_pipeline import kill_while_explore_runs

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    wf_id = os.environ["OUTLAST_RECORDING"]
    handle, _ = await kill_while_explore_runs(client, repo, pipeline_too=True, wf_id=wf_id)
    return handle


async def pipeline_killed_held_decision(client: Client, tmp: Path) -> WorkflowHandle:
    """A decision made ahead is held when the pipeline is killed: the kill answers it."""
    from tests.workflows.test_pipeline import kill_with_a_decision_held

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    wf_id = os.environ["OUTLAST_RECORDING"]
    handle, _, _ = await kill_with_a_decision_held(client, repo, wf_id=wf_id)
    return handle


async def pipeline_queued_decisions(client: Client, tmp: Path) -> WorkflowHandle:
    """Two stage decisions sent while no worker ran, as `stage_decision` signals: the first
    taken, the second refused into `refused_signals` (patched stage-decision-signal). `_v0`
    is recorded on 3ea9475, whose pipeline refused both as signals it had no handler for:
    the `decide_stage` update approves the stage then."""
    from tests.workflows.test_pipeline import queued_stage_decisions

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    handle, *_ = await queued_stage_decisions(client, None, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def pipeline_approval(client: Client, tmp: Path) -> WorkflowHandle:
    """A stage re-run on feedback, a late decision on its first attempt refused, the second
    approved (decisions name their attempt; the answer says what the pipeline did)."""
    from tests.workflows.test_pipeline import (
        APPROVAL_SCRIPT,
        APPROVAL_STAGES,
        pipeline_input,
        steer_approvals,
    )
    from workflows.pattern_contracts import PipelineResult

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(APPROVAL_SCRIPT):
        async with running_workers(client) as queues:
            handle = await client.start_workflow(
                "PipelineWorkflow",
                pipeline_input(repo, queues, stages=APPROVAL_STAGES),
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
                result_type=PipelineResult,
            )
            await steer_approvals(handle)
            await handle.result()
    return handle


async def team_killed_held_shutdown(client: Client, tmp: Path) -> WorkflowHandle:
    """A shutdown request waits for a member that never answers when the team is killed:
    the kill answers it."""
    from tests.workflows.test_team import kill_with_a_shutdown_held

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    wf_id = os.environ["OUTLAST_RECORDING"]
    handle, _, _ = await kill_with_a_shutdown_held(client, repo, wf_id=wf_id)
    return handle


async def team_peer_plan_answer(client: Client, tmp: Path) -> WorkflowHandle:
    """A peer's message reads like the lead's answer to b's plan: mail; the lead decides."""
    from tests.workflows.test_team import a_peer_answers_b_s_plan

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    handle, _, _, _ = await a_peer_answers_b_s_plan(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def team(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_team import team_script

    return await _run_team(client, tmp, team_script())


async def team_structured_broadcast(client: Client, tmp: Path) -> WorkflowHandle:
    """The lead broadcasts a plan approval (refused), then plain words."""
    from tests.workflows.test_team import broadcast_script

    return await _run_team(client, tmp, broadcast_script())


async def team_spawn(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_team_spawn import spawn_script

    return await _run_team(client, tmp, spawn_script())


async def _run_team(client: Client, tmp: Path, script: dict) -> WorkflowHandle:
    from tests.workflows.test_team import start_team

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_team(client, queues, repo, os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def team_shutdown(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_team import SHUTDOWN_SCRIPT, run_shutdown_scenario

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(SHUTDOWN_SCRIPT):
        async with running_workers(client) as queues:
            handle, _ = await run_shutdown_scenario(
                client, queues, repo, os.environ["OUTLAST_RECORDING"]
            )
    return handle


async def fork_stop_starting(client: Client, tmp: Path) -> WorkflowHandle:
    """A `task_stop` for a fork whose start is held (patched fork-stop-when-started)."""
    from tests.workflows.test_fork_join import stop_as_fork_2_starts

    repo = make_git_repo(tmp / "repo", {"README.md": "# sample\n"})
    handle, _ = await stop_as_fork_2_starts(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def team_steered(client: Client, tmp: Path) -> WorkflowHandle:
    """`team_shutdown` with mail and kills after b has ended (patched
    team-handlers-all-members)."""
    from tests.workflows.test_team import SHUTDOWN_SCRIPT, run_shutdown_scenario

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(SHUTDOWN_SCRIPT):
        async with running_workers(client) as queues:
            handle, _ = await run_shutdown_scenario(
                client, queues, repo, os.environ["OUTLAST_RECORDING"], after_b=True
            )
    return handle


async def verified_task(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_verified_task import APP, SCRIPT, TEST, run_verified

    repo = make_git_repo(
        tmp / "repo",
        {
            "src/__init__.py": "",
            "src/app.py": APP,
            "tests/__init__.py": "",
            "tests/test_app.py": TEST,
        },
    )
    name = os.environ["OUTLAST_RECORDING"]
    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            await run_verified(client, queues, repo, name)
    return client.get_workflow_handle(name)


async def verified_late_mail(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_verified_task import implementer_mailed_as_it_ends

    await implementer_mailed_as_it_ends(client, tmp, "verified_late_mail")
    return client.get_workflow_handle("verified_late_mail")


async def verified_killed_verifier(client: Client, tmp: Path) -> WorkflowHandle:
    """Round 1's verifier killed on its own: a FAIL round, and the task goes on."""
    from temporalio.client import WorkflowFailureError

    from tests.workflows.test_verified_task import kill_the_first_verifier

    name = os.environ["OUTLAST_RECORDING"]
    # Recorded on older code too (`_v0`), where the kill failed the task.
    with contextlib.suppress(WorkflowFailureError):
        await kill_the_first_verifier(client, tmp, name)
    return client.get_workflow_handle(name)


async def verified_liveness_backoff(client: Client, tmp: Path) -> WorkflowHandle:
    """A long implementer run checked further apart each time (patched liveness-backoff)."""
    from tests.workflows.test_verified_task import verified_with_a_slow_implementer

    return await verified_with_a_slow_implementer(client, tmp, os.environ["OUTLAST_RECORDING"])


async def stop_starting(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_stop_starting_worker import stop_as_it_starts

    repo = make_git_repo(tmp / "repo", {"README.md": "# sample\n"})
    handle, _, _ = await stop_as_it_starts(client, repo, "coordinator_stop_starting")
    return handle


async def fork_join_blank(client: Client, tmp: Path) -> WorkflowHandle:
    """A fork-join a client started with a blank directive (patched
    fork-join-blank-directives: refused at the start; before, its fork ran)."""
    from temporalio.client import WorkflowFailureError

    from workflows.contracts import ForkJoinInput, ForkJoinResult, Workspace

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    script = {
        "agents": [
            {
                "name": "f0",
                "match": {"last_user_contains": "part 0"},
                "turns": [{"text": "unused"}, {"text": "Scope: part 0"}],
            },
            {"name": "blank", "turns": [{"text": "unused"}, {"text": "Nothing to do."}]},
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = ForkJoinInput(
                workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
                directives=["check part 0", "  "],
                context="Audit the repository.",
            )
            handle = await client.start_workflow(
                "ForkJoinWorkflow",
                inp,
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
                result_type=ForkJoinResult,
            )
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def verified_verifier_fails(client: Client, tmp: Path) -> WorkflowHandle:
    """A verifier that cannot run (an unknown type) ends the task (patched
    verified-verifier-failure-ends); on the code before, a FAIL round each time."""
    from tests.workflows.test_verified_task import verifier_cannot_run

    name = os.environ["OUTLAST_RECORDING"]
    await verifier_cannot_run(client, tmp, name)
    return client.get_workflow_handle(name)


async def verified_implementer_stopped(client: Client, tmp: Path) -> WorkflowHandle:
    """A person stops the implementer mid-Bash: the task ends unverified (patched
    verified-implementer-stop-ends); the implementer's history is kept too (CHILDREN)."""
    from tests.workflows.test_verified_task import stop_the_implementer

    handle, _, _ = await stop_the_implementer(client, tmp, os.environ["OUTLAST_RECORDING"])
    return handle


async def pipeline_stage_stopped(client: Client, tmp: Path) -> WorkflowHandle:
    """A person stops a stage's agent: the stage waits for a decision, is approved, and the
    next stage runs (patched pipeline-stopped-stage-waits); the stage's history too."""
    from tests.workflows.test_pipeline import stop_a_stage

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    handle, _, _ = await stop_a_stage(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def coordinator_resumed(client: Client, tmp: Path) -> WorkflowHandle:
    """A coordinator that completed, resumed by a person (`outlast resume`): the new run's
    input has `resumed`, and its agent starts from the conversation. The latest run's."""
    from outlast.api import resume_task
    from workflows.contracts import Workspace
    from workflows.pattern_contracts import CoordinatorInput

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    script = {
        "agents": [
            {
                "name": "resumed",
                "match": {"last_user_contains": "and the docs"},
                "after_last": "repeat_last",
                "turns": [{"text": "The docs are fine too."}],
            },
            {"name": "first", "turns": [{"text": "No workers needed."}]},
        ]
    }
    name = os.environ["OUTLAST_RECORDING"]
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = CoordinatorInput(
                task="Check the code.",
                workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
                config=fast_config(),
            )
            handle = await client.start_workflow(
                "CoordinatorWorkflow", inp, id=name, task_queue=queues.task_queue
            )
            await handle.result()
            task = await resume_task(client, name, "and the docs")
            await task.result()
    return client.get_workflow_handle(name)


async def verified_ran_nothing(client: Client, tmp: Path) -> WorkflowHandle:
    """A verifier's PASS with no tool called is a FAIL round (patched verifier-ran-nothing);
    `verified_ran_nothing_v0` recorded on 9897664, where the task passed on it."""
    from tests.workflows.test_verified_task import verifier_ran_nothing

    name = os.environ["OUTLAST_RECORDING"]
    await verifier_ran_nothing(client, tmp, name)
    return client.get_workflow_handle(name)


async def verified_spot_check(client: Client, tmp: Path) -> WorkflowHandle:
    """A PASS whose output no command of the verifier printed is a FAIL round (patched
    verifier-spot-check: the spot-check activity reads the verifier's conversation)."""
    from tests.workflows.test_verified_task import verifier_made_up_output

    name = os.environ["OUTLAST_RECORDING"]
    await verifier_made_up_output(client, tmp, name)
    return client.get_workflow_handle(name)


async def pipeline_spot_check(client: Client, tmp: Path) -> WorkflowHandle:
    """The verification stage reports a check it never ran: the pipeline fails on it
    (patched verifier-spot-check)."""
    from tests.workflows.test_pipeline import CHECKED, default_script, stage_agent

    script = default_script()
    script["agents"][-1] = stage_agent("verification", CHECKED + "VERDICT: PASS")
    return await _run_pipeline(client, tmp, script)


async def team_background_refused(client: Client, tmp: Path) -> WorkflowHandle:
    """The `background` signal to teammate b waiting on a sync helper: refused (patched
    teammate-background-refused); b's history is kept (CHILDREN)."""
    from tests.workflows.test_team import background_a_teammate_s_helper

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    name = os.environ["OUTLAST_RECORDING"]
    await background_a_teammate_s_helper(client, repo, name)
    return client.get_workflow_handle(name)


async def team_shutdown_told(client: Client, tmp: Path) -> WorkflowHandle:
    """A teammate holding a task approves a person's shutdown request: the task goes back on
    the list and the lead is mailed (patched team-shutdown-told)."""
    from tests.workflows.test_team_losses import person_shuts_down_w1

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _, _ = await person_shuts_down_w1(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def team_member_lost(client: Client, tmp: Path) -> WorkflowHandle:
    """A teammate killed while it works on its task: the task goes back on the list and the
    lead is mailed (patched team-loss-told)."""
    from tests.workflows.test_team_losses import SCRIPT, start_pair, wait_for_view

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    name = os.environ["OUTLAST_RECORDING"]
    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            handle = await start_pair(client, queues, repo, ["Task one"], name)
            await wait_for_view(handle, lambda v: v.tasks[0].owner == "w1")
            await client.get_workflow_handle(f"{name}/w1").cancel(reason="w1 hung")
            await handle.result()
    return handle


async def team_ends_with_lead(client: Client, tmp: Path) -> WorkflowHandle:
    """A team whose lead is killed while a teammate works ends, stopping the teammate
    (patched team-ends-with-lead)."""
    import asyncio

    from tests.workflows.test_team_losses import HEADLESS, start_pair, wait_for_view

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    name = os.environ["OUTLAST_RECORDING"]
    with scripted_model(HEADLESS):
        async with running_workers(client) as queues:
            handle = await start_pair(client, queues, repo, wf_id=name)
            await client.get_workflow_handle(f"{name}/lead").cancel(reason="lead gone")
            await wait_for_view(handle, lambda v: v.members[0].state == "ended")
            (repo / "released").touch()
            await asyncio.wait_for(handle.result(), 60)
    return handle


async def team_continues(client: Client, tmp: Path) -> WorkflowHandle:
    """A standing team that continues as new at 100 events (patched team-continues): mail
    before and after, a member killed (its last report), one terminated (the liveness
    check), then its shutdown."""
    from tests.workflows.test_team_continues import SCRIPT, run_long_team

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(SCRIPT):
        handle, _ = await run_long_team(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def team_person_plan_decision(client: Client, tmp: Path) -> WorkflowHandle:
    """b's plan approved by a person while its lead was asked: b tells the lead it needs no
    answer (patched plan-decided-once), and the lead's late answer reaches b said to be one."""
    from tests.workflows.test_team_plans import a_person_approves_b_s_plan

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    handle, _, _ = await a_person_approves_b_s_plan(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def team_teammate_turns(client: Client, tmp: Path) -> WorkflowHandle:
    """A teammate with two turns a wake answers three messages, then loops until its turns
    are spent (patched teammate-turns-per-wake, in b)."""
    from tests.workflows.test_teammate_turns import run_turns_team

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _ = await run_turns_team(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def _doc_unstarted(client: Client, tmp: Path, how: str) -> WorkflowHandle:
    from tests.workflows.test_coordinator_unstarted import end_with_doc_queued, script

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(script()):
        async with running_workers(client) as queues:
            name = os.environ["OUTLAST_RECORDING"]
            handle, _ = await end_with_doc_queued(client, queues, repo, how, name)
    return handle


async def coordinator_out_of_turns_unstarted(client: Client, tmp: Path) -> WorkflowHandle:
    """Out of turns with `doc` queued, woken by the end that frees its file: `doc` does not
    start (patched ending-freezes-queue)."""
    return await _doc_unstarted(client, tmp, "out of turns")


async def coordinator_killed_unstarted(client: Client, tmp: Path) -> WorkflowHandle:
    """Killed with `doc` queued: its memo names it (patched unstarted-in-memo)."""
    return await _doc_unstarted(client, tmp, "kill")


async def coordinator_glob_refused(client: Client, tmp: Path) -> WorkflowHandle:
    """A worker spawn that declares a pattern for its files, refused (patched
    claim-globs-refused); on the code before, the worker ran with it as a path."""
    from tests.workflows.test_coordinator import run_coordinator, worker

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    script = {
        "agents": [
            {
                "name": "coordinator",
                "match": {"agent_type": "coordinator"},
                "turns": [
                    {"tool_use": worker("globber", "implementation", "Shorten.", ["src/*.py"])},
                    {"text": "Nothing to do after all."},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle, _ = await run_coordinator(client, queues, repo, os.environ["OUTLAST_RECORDING"])
    return handle
