"""Record a new replay history: `python -m tests.replay.record NAME`.

Each scenario runs on a fresh dev server with the scripted model and writes
`tests/replay/histories/NAME.json`. Histories are a contract with every workflow already
running in production: record new ones for new behaviour, never re-record an existing one
to make a replay test pass (an existing file is refused).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import Client, WorkflowHandle

from outlast.client import connect
from outlast.demo import HERE as DEMO_DIR
from outlast.demo import TASK as DEMO_TASK
from outlast.demo import make_sample_repo
from outlast.devserver import DevServer
from outlast.scripted_model import load_script
from tests.conftest import make_git_repo
from tests.support import (
    FAST_MODEL,
    agent_input,
    fast_config,
    free_port,
    running_workers,
    scripted_model,
    start,
)

HISTORIES = Path(__file__).parent / "histories"


async def _demo(client: Client, tmp: Path) -> WorkflowHandle:
    repo = make_sample_repo(tmp / "repo")
    script = load_script(DEMO_DIR / "scenario.yaml").model_copy(update={"latency_ms": 0})
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input(DEMO_TASK, repo, queues), queues)
            await handle.result()
    return handle


async def _killed(client: Client, tmp: Path) -> WorkflowHandle:
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 1003"}}},
                    {"text": "never"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("sleep", repo, queues), queues)
            await asyncio.sleep(3)
            await handle.cancel()
            try:
                await handle.result()
            except Exception:  # noqa: BLE001 - cancelled, as intended
                pass
    return handle


async def _tool_errors(client: Client, tmp: Path) -> WorkflowHandle:
    repo = make_git_repo(tmp / "repo", {"dup.txt": "alpha\nalpha\n"})
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {
                        "tool_use": [
                            {"name": "Frobnicate", "input": {}},
                            {"name": "Read", "input": {"file_path": "../../etc/passwd"}},
                            {"name": "Read", "input": {"file_path": "{{cwd}}/dup.txt"}},
                        ]
                    },
                    {
                        "tool_use": {
                            "name": "Edit",
                            "input": {
                                "file_path": "{{cwd}}/dup.txt",
                                "old_string": "alpha",
                                "new_string": "beta",
                            },
                        }
                    },
                    {"text": "done"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("try", repo, queues), queues)
            await handle.result()
    return handle


async def _scripted(client: Client, tmp: Path, script: dict, config=None) -> WorkflowHandle:
    """Runs under workflow id = the history's name: replay needs the original id, since
    child workflow ids are derived from it."""
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(script):
        async with running_workers(client) as queues:
            kw = {"config": config} if config else {}
            inp = agent_input("go", repo, queues, **kw)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def _shared_timers(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_child_timers import script

    return await _scripted(client, tmp, script({"quick": 0, "slow1": 3000, "slow2": 3000}))


async def _parallel_sync(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_child_timers import script

    return await _scripted(client, tmp, script({"quick": 0, "slow1": 3000, "slow2": 3000}))


async def _model_local(client: Client, tmp: Path) -> WorkflowHandle:
    read = {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}}
    turns = [read, {"fail": [529], **read}, {"text": "done"}]
    config = fast_config(model=FAST_MODEL.model_copy(update={"local_activity": True}))
    return await _scripted(client, tmp, {"agents": [{"name": "main", "turns": turns}]}, config)


def _spawn(name: str, background: bool) -> dict:
    return {
        "name": "Agent",
        "input": {
            "description": f"task {name}",
            "prompt": "work",
            "name": name,
            "run_in_background": background,
        },
    }


def _kid(name: str, *turns: dict) -> dict:
    return {"name": name, "match": {"agent_name": name}, "turns": list(turns)}


async def _subagents_sync_async(client: Client, tmp: Path) -> WorkflowHandle:
    return await _scripted(
        client,
        tmp,
        {
            "agents": [
                _kid("bg1", {"text": "bg1 done"}),
                _kid(
                    "bg2",
                    {"tool_use": {"name": "Glob", "input": {"pattern": "*"}}},
                    {"text": "bg2 done"},
                ),
                _kid("fg", {"text": "fg done"}),
                {
                    "name": "parent",
                    "after_last": "repeat_last",
                    "turns": [
                        {
                            "tool_use": [
                                _spawn("bg1", True),
                                _spawn("bg2", True),
                                _spawn("fg", False),
                            ]
                        },
                        {"text": "waiting"},
                    ],
                },
            ]
        },
    )


async def _subagents_taskstop(client: Client, tmp: Path) -> WorkflowHandle:
    return await _scripted(
        client,
        tmp,
        {
            "agents": [
                _kid(
                    "sleeper",
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 1201"}}},
                    {"text": "never"},
                ),
                {
                    "name": "parent",
                    "after_last": "repeat_last",
                    "turns": [
                        {"tool_use": _spawn("sleeper", True)},
                        {
                            "delay_ms": 1500,
                            "tool_use": {"name": "TaskStop", "input": {"task_id": "sleeper"}},
                        },
                        {"text": "stopped"},
                    ],
                },
            ]
        },
    )


async def _subagents_resume(client: Client, tmp: Path) -> WorkflowHandle:
    return await _scripted(
        client,
        tmp,
        {
            "agents": [
                _kid("helper", {"text": "first"}, {"text": "second"}),
                {
                    "name": "parent",
                    "after_last": "repeat_last",
                    "turns": [
                        {"tool_use": _spawn("helper", False)},
                        {
                            "tool_use": {
                                "name": "SendMessage",
                                "input": {"to": "helper", "message": "more"},
                            }
                        },
                        {"text": "waiting"},
                    ],
                },
            ]
        },
    )


async def _continue_as_new(client: Client, tmp: Path) -> WorkflowHandle:
    from agents.config import AgentSettings
    from tests.support import fast_config

    config = fast_config(agents=AgentSettings(turns_per_run=3))
    return await _scripted(
        client,
        tmp,
        {
            "agents": [
                {
                    "name": "main",
                    "turns": [
                        *(
                            {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}}
                            for _ in range(7)
                        ),
                        {"text": "read it seven times"},
                    ],
                }
            ]
        },
        config=config,
    )


async def _fork_join(client: Client, tmp: Path) -> WorkflowHandle:
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


async def _coordinator(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_coordinator import coordinator_script, run_coordinator

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(coordinator_script()):
        async with running_workers(client) as queues:
            handle, _ = await run_coordinator(client, queues, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def _pipeline(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_pipeline import default_script, pipeline_input
    from workflows.pattern_contracts import PipelineResult

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(default_script()):
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


async def _team(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_team import start_team, team_script

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(team_script()):
        async with running_workers(client) as queues:
            handle = await start_team(client, queues, repo, os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def _team_shutdown(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_team import SHUTDOWN_SCRIPT, run_shutdown_scenario

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(SHUTDOWN_SCRIPT):
        async with running_workers(client) as queues:
            handle, _ = await run_shutdown_scenario(
                client, queues, repo, os.environ["OUTLAST_RECORDING"]
            )
    return handle


async def _plan(client: Client, tmp: Path, approve: bool) -> WorkflowHandle:
    from tests.workflows.test_plan_mode import APPROVED, REJECTED, wait_for_pending

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(APPROVED if approve else REJECTED):
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("add X", repo, queues), queues, os.environ["OUTLAST_RECORDING"]
            )
            view = await wait_for_pending(handle)
            decision = {"request_id": view.pending.request_id}
            if approve:
                await handle.signal("approve_plan", decision)
            else:
                await handle.signal("reject_plan", {**decision, "feedback": "add error handling"})
            await handle.result()
    return handle


async def _plan_approved(client: Client, tmp: Path) -> WorkflowHandle:
    return await _plan(client, tmp, approve=True)


async def _plan_rejected(client: Client, tmp: Path) -> WorkflowHandle:
    return await _plan(client, tmp, approve=False)


async def _verified_task(client: Client, tmp: Path) -> WorkflowHandle:
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


async def _verified_late_mail(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_verified_task import implementer_mailed_as_it_ends

    await implementer_mailed_as_it_ends(client, tmp, "verified_late_mail")
    return client.get_workflow_handle("verified_late_mail")


async def _spawn_limit(client: Client, tmp: Path) -> WorkflowHandle:
    from agents.config import AgentSettings
    from tests.support import fast_config
    from tests.workflows.test_bad_output import RUNAWAY

    config = fast_config(agents=AgentSettings(max_concurrent=2))
    return await _scripted(client, tmp, RUNAWAY, config)


def _late_mail(background: bool, wf_id: str):
    async def scenario(client: Client, tmp: Path) -> WorkflowHandle:
        from tests.workflows.test_late_mail import mail_while_exporting

        repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
        parent, _, _ = await mail_while_exporting(client, repo, background, wf_id)
        return parent

    return scenario


async def _closed_child(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_sync_end import backgrounded_as_it_completes

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    parent, _ = await backgrounded_as_it_completes(client, repo, "subagents_closed_child")
    return parent


async def _late_mail_notice(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_late_mail import mail_during_the_notice

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    parent, _, _ = await mail_during_the_notice(client, repo, "subagents_late_mail_notice")
    return parent


async def _late_mail_settles(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_late_mail import mail_during_the_notice

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    wf_id = "subagents_late_mail_settles"
    parent, _, _ = await mail_during_the_notice(client, repo, wf_id, second_late=True)
    return parent


async def _late_mail_stopped(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_late_mail import stop_after_the_notice

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    parent, _, _ = await stop_after_the_notice(client, repo, "subagents_late_mail_stopped")
    return parent


async def _stop_starting(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_stop_starting_worker import stop_as_it_starts

    repo = make_git_repo(tmp / "repo", {"README.md": "# sample\n"})
    handle, _, _ = await stop_as_it_starts(client, repo, "coordinator_stop_starting")
    return handle


SCENARIOS: dict[str, Callable[[Client, Path], Awaitable[WorkflowHandle]]] = {
    "agent_continue_as_new": _continue_as_new,
    "fork_join": _fork_join,
    "agent_demo": _demo,
    # After Read, Glob and Grep became local activities on the host (patched local-read-tools).
    "agent_demo_v2": _demo,
    "agent_killed": _killed,
    "agent_tool_errors": _tool_errors,
    "subagents_sync_async": _subagents_sync_async,
    # The same scenario after output files, late-mail handling and liveness checks came in.
    "subagents_sync_async_v2": _subagents_sync_async,
    # After prompt rendering, the handoff check and the transcript export became local
    # activities on the host (patched local-host-steps).
    "subagents_sync_async_v3": _subagents_sync_async,
    # After a sync sub-agent that completes stopped signalling its parent, which reads the
    # same end from the result (patched sync-end-by-result).
    "subagents_sync_async_v4": _subagents_sync_async,
    "subagents_taskstop": _subagents_taskstop,
    "subagents_resume": _subagents_resume,
    "coordinator": _coordinator,
    # After a queued worker that is starting counted as outstanding (patched
    # queued-start-outstanding).
    "coordinator_v2": _coordinator,
    "pipeline": _pipeline,
    "team": _team,
    "team_shutdown": _team_shutdown,
    # After members sent a final report and a refused request became a failed update.
    "team_shutdown_v2": _team_shutdown,
    "plan_approved": _plan_approved,
    "plan_rejected": _plan_rejected,
    "verified_task": _verified_task,
    # After the implementer's liveness checks and explicit cancellation came in.
    "verified_task_v2": _verified_task,
    "verified_late_mail": _verified_late_mail,
    # The model called as a local activity (config model.local_activity).
    "agent_model_local": _model_local,
    # Three parallel spawns against a limit of two (patched spawn-limit-in-batch).
    "subagents_spawn_limit": _spawn_limit,
    # Mail reaching a sub-agent as it writes its output file: it goes on as generation 2 and
    # says so with its end, and its parent waits for that end too (patched
    # late-mail-continues); sync, and background.
    "subagents_late_mail": _late_mail(False, "subagents_late_mail"),
    "subagents_late_mail_bg": _late_mail(True, "subagents_late_mail_bg"),
    # The scenarios below run with a worker interceptor holding a command (tests/interceptors.py);
    # their histories replay with the same one (INTERCEPTED).
    # A sync child completing as its parent backgrounds it (patched closed-child-stays-sync).
    "subagents_closed_child": _closed_child,
    # Mail during a background child's end notification: a second notice (late-mail-continues).
    "subagents_late_mail_notice": _late_mail_notice,
    # The parent at its end waits for the helper to close (patched settles-children).
    "subagents_late_mail_settles": _late_mail_settles,
    # A stop after the end said another generation follows: that one ends at once.
    "subagents_late_mail_stopped": _late_mail_stopped,
    # TaskStop of a queued worker that is starting (patched stop-starting-worker).
    "coordinator_stop_starting": _stop_starting,
    # Every change up to the baseline taken through one patch marker (workflows/versions.py).
    "agent_demo_v3": _demo,
    "subagents_sync_async_v5": _subagents_sync_async,
    "coordinator_v3": _coordinator,
    "team_shutdown_v3": _team_shutdown,
    "verified_task_v3": _verified_task,
    "fork_join_v2": _fork_join,
    # Three sync children of one response share one hint timer (patched shared-child-timers,
    # after the baseline).
    "subagents_shared_timers": _shared_timers,
    # The same three children, recorded on bd1e6b4, before the patch baseline and the shared
    # timers: a timer each, the quick child's cancelled by its own end.
    "subagents_parallel_sync": _parallel_sync,
}


# Children whose histories are worth keeping too (a killed child, a resumed run), saved as
# `<parent>__<child>.json`: the file name encodes the workflow id, which replay needs.
CHILDREN = {
    "subagents_late_mail_stopped": ["helper"],
    "subagents_taskstop": ["sleeper"],
    "subagents_resume": ["helper"],
    "fork_join": ["fork-1"],
    "subagents_sync_async_v2": ["bg2", "fg"],
    "subagents_sync_async_v3": ["bg2", "fg"],
    "subagents_sync_async_v4": ["bg2", "fg"],
    "coordinator": ["impl-b"],
    "coordinator_v2": ["impl-b"],
    "pipeline": ["verify"],
    "team": ["b", "c"],
    "team_shutdown": ["b", "c"],
    "team_shutdown_v2": ["b"],
    "verified_task": ["implementer", "verify-1", "verify-2"],
    "subagents_sync_async_v5": ["bg2", "fg"],
    "coordinator_v3": ["impl-b"],
    "team_shutdown_v3": ["b"],
    "verified_task_v3": ["implementer", "verify-1", "verify-2"],
    "fork_join_v2": ["fork-1"],
}
# Chains whose every run is kept, as `<id>@run<N>.json` (a continued run replays from its
# carried state, a different path from a first run).
CHAINS = {"agent_continue_as_new"}
# Children whose every run is kept, as `<parent>__<child>@run<N>.json`.
CHILD_CHAINS = {
    "subagents_late_mail": ["helper"],
    "subagents_late_mail_bg": ["helper"],
    "subagents_late_mail_notice": ["helper"],
    "subagents_late_mail_settles": ["helper"],
    "verified_late_mail": ["implementer"],
}


def intercepted(name: str) -> list:
    """The interceptors scenario `name` ran with: its histories replay with them too."""
    from tests.workflows.test_late_mail import (
        HOLD_CONTINUING_END,
        HOLD_CONTINUING_END_LONG,
        HOLD_PLAIN_END,
    )
    from tests.workflows.test_stop_starting_worker import SLOW_START
    from tests.workflows.test_sync_end import LATE_BACKGROUNDING

    return {
        "subagents_closed_child": [LATE_BACKGROUNDING],
        "subagents_late_mail_notice": [HOLD_PLAIN_END],
        "subagents_late_mail_settles": [HOLD_PLAIN_END, HOLD_CONTINUING_END_LONG],
        "subagents_late_mail_stopped": [HOLD_CONTINUING_END],
        "coordinator_stop_starting": [SLOW_START],
    }.get(name, [])


async def _save_runs(client: Client, workflow_id: str, stem: str) -> None:
    """Every run of a chain, found from the latest back through each run's predecessor
    (visibility may not list the last runs yet)."""
    histories, run_id = [], None
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.append(history)
        started = history.events[0].workflow_execution_started_event_attributes
        run_id = started.continued_execution_run_id
        if not run_id:
            break
    for n, history in enumerate(reversed(histories), start=1):
        (HISTORIES / f"{stem}@run{n}.json").write_text(history.to_json())


async def record(name: str) -> Path:
    out = HISTORIES / f"{name}.json"
    if out.exists():
        raise SystemExit(f"{out} exists; histories are never re-recorded")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        os.environ["OUTLAST_STORE_DIR"] = str(tmp / "store")
        os.environ["OUTLAST_RECORDING"] = name
        server = DevServer(state_dir=tmp / "t", port=free_port(), headless=True, persist=False)
        proc = server.start(detach=False)
        try:
            client = await connect(server.address)
            handle = await SCENARIOS[name](client, tmp)
            out.write_text((await handle.fetch_history()).to_json())
            if name in CHAINS:
                out.unlink()
                await _save_runs(client, name, name)
            for child in CHILD_CHAINS.get(name, []):
                await _save_runs(client, f"{name}/{child}", f"{name}__{child}")
            for child in CHILDREN.get(name, []):
                child_handle = client.get_workflow_handle(f"{name}/{child}")
                path = HISTORIES / f"{name}__{child}.json"
                path.write_text((await child_handle.fetch_history()).to_json())
        finally:
            proc.terminate()
    return out


if __name__ == "__main__":
    for scenario in sys.argv[1:] or list(SCENARIOS):
        print(asyncio.run(record(scenario)))
