"""Replay-corpus scenarios of an agent and its sub-agents: sync and background children,
TaskStop, resume, the spawn limit, shared timers, late mail (tests/replay/record.py runs them)."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client, WorkflowHandle

from tests.conftest import make_git_repo
from tests.replay.scenarios_agent import scripted
from tests.support import fast_config


def spawn(name: str, background: bool) -> dict:
    return {
        "name": "Agent",
        "input": {
            "description": f"task {name}",
            "prompt": "work",
            "name": name,
            "run_in_background": background,
        },
    }


def kid(name: str, *turns: dict) -> dict:
    return {"name": name, "match": {"agent_name": name}, "turns": list(turns)}


async def shared_timers(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_child_timers import script

    return await scripted(client, tmp, script({"quick": 0, "slow1": 3000, "slow2": 3000}))


async def parallel_sync(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_child_timers import script

    return await scripted(client, tmp, script({"quick": 0, "slow1": 3000, "slow2": 3000}))


async def subagents_sync_async(client: Client, tmp: Path) -> WorkflowHandle:
    return await scripted(
        client,
        tmp,
        {
            "agents": [
                kid("bg1", {"text": "bg1 done"}),
                kid(
                    "bg2",
                    {"tool_use": {"name": "Glob", "input": {"pattern": "*"}}},
                    {"text": "bg2 done"},
                ),
                kid("fg", {"text": "fg done"}),
                {
                    "name": "parent",
                    "after_last": "repeat_last",
                    "turns": [
                        {
                            "tool_use": [
                                spawn("bg1", True),
                                spawn("bg2", True),
                                spawn("fg", False),
                            ]
                        },
                        {"text": "waiting"},
                    ],
                },
            ]
        },
    )


async def subagents_taskstop(client: Client, tmp: Path) -> WorkflowHandle:
    return await scripted(
        client,
        tmp,
        {
            "agents": [
                kid(
                    "sleeper",
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 1201"}}},
                    {"text": "never"},
                ),
                {
                    "name": "parent",
                    "after_last": "repeat_last",
                    "turns": [
                        {"tool_use": spawn("sleeper", True)},
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


def resuming_parent(message: str) -> dict:
    """A parent that starts `helper` sync, then resumes it with `message`."""
    return {
        "name": "parent",
        "after_last": "repeat_last",
        "turns": [
            {"tool_use": spawn("helper", False)},
            {"tool_use": {"name": "SendMessage", "input": {"to": "helper", "message": message}}},
            {"text": "waiting"},
        ],
    }


async def subagents_resume(client: Client, tmp: Path) -> WorkflowHandle:
    return await scripted(
        client,
        tmp,
        {
            "agents": [
                kid("helper", {"text": "first"}, {"text": "second"}),
                resuming_parent("more"),
            ]
        },
    )


async def resume_read_state(client: Client, tmp: Path) -> WorkflowHandle:
    """The helper reads a.txt, ends, and edits it when resumed: its second run starts by
    loading the first run's read stamps."""
    edit = {"file_path": "{{cwd}}/a.txt", "old_string": "a", "new_string": "b"}
    return await scripted(
        client,
        tmp,
        {
            "agents": [
                kid(
                    "helper",
                    {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}},
                    {"text": "first"},
                    {"tool_use": {"name": "Edit", "input": edit}},
                    {"text": "second"},
                ),
                resuming_parent("edit it"),
            ]
        },
    )


async def spawn_limit(client: Client, tmp: Path) -> WorkflowHandle:
    from agents.config import AgentSettings
    from tests.workflows.test_bad_output import RUNAWAY

    config = fast_config(agents=AgentSettings(max_concurrent=2))
    return await scripted(client, tmp, RUNAWAY, config)


def late_mail(background: bool, wf_id: str):
    async def scenario(client: Client, tmp: Path) -> WorkflowHandle:
        from tests.workflows.test_late_mail import mail_while_exporting

        repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
        parent, _, _ = await mail_while_exporting(client, repo, background, wf_id)
        return parent

    return scenario


async def closed_child(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_sync_end import backgrounded_as_it_completes

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    parent, _ = await backgrounded_as_it_completes(client, repo, "subagents_closed_child")
    return parent


async def late_mail_notice(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_late_mail import mail_during_the_notice

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    parent, _, _ = await mail_during_the_notice(client, repo, "subagents_late_mail_notice")
    return parent


async def late_mail_settles(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_late_mail import mail_during_the_notice

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    wf_id = "subagents_late_mail_settles"
    parent, _, _ = await mail_during_the_notice(client, repo, wf_id, second_late=True)
    return parent


async def late_mail_stopped(client: Client, tmp: Path) -> WorkflowHandle:
    from tests.workflows.test_late_mail import stop_after_the_notice

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    parent, _, _ = await stop_after_the_notice(client, repo, "subagents_late_mail_stopped")
    return parent


async def mail_after_stop(client: Client, tmp: Path) -> WorkflowHandle:
    """TaskStop and SendMessage to the same background agent in one response: the message
    waits for the stopped agent's end and resumes it (patched mail-after-stop-resumes)."""
    from tests.workflows.test_agent_control import STOP_THEN_MAIL

    return await scripted(client, tmp, STOP_THEN_MAIL)


async def person_name(client: Client, tmp: Path) -> WorkflowHandle:
    """A sub-agent named `user`: refused (patched person-names-refused); on the code before,
    it ran, and its mail would have read as the person's own words."""
    main = {"name": "main", "turns": [{"tool_use": spawn("user", False)}, {"text": "done"}]}
    return await scripted(client, tmp, {"agents": [kid("user", {"text": "CHILD"}), main]})


async def subagent_hooks(client: Client, tmp: Path) -> WorkflowHandle:
    """A sub-agent whose definition has its own hooks (R100), trusted by the config:
    SubagentStart adds context, `Stop` (its SubagentStop) blocks its first stop. `_v0` ran on
    the code before hooks (5da79cb) with the same definition and no such config, which now
    runs none either."""
    import json

    from agents.config import Features

    flag = tmp / "blocked"
    context = {"hookSpecificOutput": {"additionalContext": "HOOK-CONTEXT"}}
    start = f"printf '%s' '{json.dumps(context)}'"
    stop = f"if [ ! -e {flag} ]; then touch {flag}; echo 'check again' >&2; exit 2; fi"
    item = "    - hooks:\n        - type: command\n          command: {}\n"
    definition = (
        "---\nname: checker\ndescription: checks\nhooks:\n"
        f"  SubagentStart:\n{item.format(json.dumps(start))}"
        f"  Stop:\n{item.format(json.dumps(stop))}"
        "---\nCheck things.\n"
    )
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n", ".claude/agents/checker.md": definition})
    call = spawn("helper", False)
    call["input"]["subagent_type"] = "checker"
    turns = [{"tool_use": call}, {"text": "done"}]
    main = {"name": "main", "after_last": "repeat_last", "turns": turns}
    helper = kid("helper", {"text": "FIRST"}, {"text": "SECOND"})
    config = fast_config()
    if "definition_hooks" in Features.model_fields:  # not on the code `_v0` recorded
        config = config.model_copy(update={"features": Features(definition_hooks=True)})
    return await scripted(client, tmp, {"agents": [helper, main]}, config, repo=repo)


async def background_starting_child(client: Client, tmp: Path) -> WorkflowHandle:
    """A `background` signal while a sync sub-agent's start is held: it moves the sub-agent
    once it runs (patched background-reaches-starting-child). `_v0` recorded on 78ffa27,
    where it was refused."""
    import os

    from tests.workflows.test_agent_control import background_as_a_child_starts

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    wf_id = os.environ["OUTLAST_RECORDING"]
    handle, _, _ = await background_as_a_child_starts(client, repo, tmp, wf_id)
    return handle


async def notice_before_start(client: Client, tmp: Path) -> WorkflowHandle:
    """A sub-agent's notification that comes while its start is held: kept for it (patched
    notice-before-start-kept). `_v0` recorded on 78ffa27, where it was dropped."""
    import os

    from tests.workflows.test_agent_control import notice_before_the_start

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _ = await notice_before_the_start(client, repo, tmp, os.environ["OUTLAST_RECORDING"])
    return handle


async def stop_reaches_starting_child(client: Client, tmp: Path) -> WorkflowHandle:
    """A stop while the model writes a sync Agent call: the sub-agent is stopped at its start
    (patched stop-reaches-starting-child). `_v0` recorded on da0daf3, where it ran its whole
    course first."""
    import os

    from tests.workflows.test_agent_control import stop_as_the_model_spawns

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _ = await stop_as_the_model_spawns(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def stop_reaches_sync(client: Client, tmp: Path) -> WorkflowHandle:
    """A stop while the agent waits on a sync sub-agent (patched stop-reaches-sync-children:
    sent on to it). `_v0` recorded on 38b69ce, where the stop waited for the child's own end."""
    import asyncio
    import os

    from tests.support import agent_input, running_workers, scripted_model, start
    from tests.workflows.test_agent_control import STOP_WHILE_WAITING
    from workflows.contracts import AgentStatus, StopRequest

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(STOP_WHILE_WAITING):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            child = client.get_workflow_handle(f"{handle.id}/slow")
            for _ in range(150):
                try:
                    if (await child.query("status", result_type=AgentStatus)).state == (
                        "running_tools"
                    ):
                        break
                except Exception:  # noqa: BLE001 - not started yet
                    pass
                await asyncio.sleep(0.1)
            await handle.signal("stop", StopRequest(reason="enough"))
            await handle.result()
    return handle


async def message_after_spawn(client: Client, tmp: Path) -> WorkflowHandle:
    """A helper spawned and messaged in one response: the message waits for the spawn
    (patched messages-after-spawns); `subagents_message_after_spawn_v0` recorded on 9897664,
    where it ran beside the spawn and found no helper."""
    from tests.workflows.test_agent_control import SPAWN_AND_MESSAGE

    return await scripted(client, tmp, SPAWN_AND_MESSAGE)
