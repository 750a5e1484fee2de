"""Sub-agent hooks end to end (R100): real hook commands on the host, their JSON on stdin,
SubagentStart's context in the child's first request, SubagentStop keeping it working."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agents.config import Features
from agents.hooks import HookMatcher
from tests.support import (
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    spawn,
    start,
    taken_changes,
    tool_results,
    wait_for,
)
from workflows.contracts import StopRequest
from workflows.subagent_hooks import SUBAGENT_HOOKS


def hook(command: str, matcher: str = "") -> list[HookMatcher]:
    return [HookMatcher(matcher=matcher, hooks=[{"command": command}])]


def start_hook(log: Path, context: str) -> str:
    specific = {"hookEventName": "SubagentStart", "additionalContext": context}
    output = {"hookSpecificOutput": specific}
    return f"cat >> {log}; echo >> {log}; printf '%s' '{json.dumps(output)}'"


def block_once_hook(log: Path, flag: Path, reason: str) -> str:
    """Blocks the first stop it sees (exit 2, the reason on stderr), lets the next one by."""
    return (
        f"cat >> {log}; echo >> {log}; "
        f"if [ ! -e {flag} ]; then touch {flag}; echo '{reason}' >&2; exit 2; fi"
    )


def lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def requests_of(model, agent: str) -> list[str]:
    return [str(r["body"]["messages"]) for r in model.log if r.get("agent") == agent]


HELPER_THEN_PARENT = {
    "agents": [
        {
            "name": "helper",
            "match": {"agent_name": "helper"},
            "turns": [{"text": "FIRST-ANSWER"}, {"text": "TESTS-PASS-ANSWER"}],
        },
        {
            "name": "parent",
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": spawn("helper", "fix the bug", False)},
                {"text": "parent done"},
            ],
        },
    ]
}


async def test_start_hook_context_reaches_the_child_and_a_stop_hook_keeps_it_working(
    client, git_repo, tmp_path
):
    starts, stops, flag = tmp_path / "starts", tmp_path / "stops", tmp_path / "blocked"
    config = fast_config(
        hooks={
            "SubagentStart": hook(start_hook(starts, "HOOK-CONTEXT-42"), "general-purpose"),
            "SubagentStop": hook(block_once_hook(stops, flag, "RUN-THE-TESTS-FIRST")),
        }
    )
    with scripted_model(HELPER_THEN_PARENT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            result = await handle.result()
    # The top-level agent is no sub-agent: one start and two stops, all the helper's.
    (started,) = lines(starts)
    assert started["hook_event_name"] == "SubagentStart"
    assert started["agent_type"] == "general-purpose"
    assert started["cwd"] == str(git_repo)
    first, second = lines(stops)
    assert first["agent_id"] == second["agent_id"] == started["agent_id"]
    assert (first["stop_hook_active"], second["stop_hook_active"]) == (False, True)
    assert first["last_assistant_message"] == "FIRST-ANSWER"
    assert second["last_assistant_message"] == "TESTS-PASS-ANSWER"
    helper = requests_of(model, "helper")
    assert len(helper) == 2
    assert "SubagentStart hook additional context: HOOK-CONTEXT-42" in helper[0]
    assert "fix the bug" in helper[0]
    assert "SubagentStop hook feedback" in helper[1] and "RUN-THE-TESTS-FIRST" in helper[1]
    assert all("HOOK-CONTEXT" not in r for r in requests_of(model, "parent"))
    (answer,) = tool_results(result)
    assert "TESTS-PASS-ANSWER" in str(answer.content)
    assert "FIRST-ANSWER" not in str(answer.content)
    assert SUBAGENT_HOOKS not in await taken_changes(handle)  # the parent ran none


async def test_a_definitions_own_stop_hook_is_its_subagent_stop(client, git_repo, tmp_path):
    """R100: `Stop` in an agent's frontmatter runs when that agent (a sub-agent) stops, where
    the config trusts definitions' hooks; a hook that fails or prints no JSON changes
    nothing."""
    stops, flag = tmp_path / "stops", tmp_path / "blocked"
    agents_dir = git_repo / ".claude" / "agents"
    agents_dir.mkdir(parents=True)
    command = block_once_hook(stops, flag, "CHECK-AGAIN")
    (agents_dir / "checker.md").write_text(
        "---\nname: checker\ndescription: checks\nhooks:\n  Stop:\n    - hooks:\n"
        f"        - type: command\n          command: {json.dumps(command)}\n"
        "        - type: command\n          command: 'echo broken >&2; exit 1'\n"
        "---\nCheck things.\n"
    )
    script = {
        "agents": [
            {
                "name": "checker",
                "match": {"agent_type": "checker"},
                "turns": [{"text": "CHECKED-ONCE"}, {"text": "CHECKED-TWICE"}],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("c", "check", False, subagent_type="checker")},
                    {"text": "parent done"},
                ],
            },
        ]
    }
    config = fast_config(features=Features(definition_hooks=True))
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert [s["agent_type"] for s in lines(stops)] == ["checker", "checker"]
    checker = [str(r["body"]["messages"]) for r in model.log if r.get("agent") == "checker"]
    assert len(checker) == 2 and "CHECK-AGAIN" in checker[1]
    (answer,) = tool_results(result)
    assert "CHECKED-TWICE" in str(answer.content)


async def test_a_hook_that_times_out_is_killed_and_ignored(client, git_repo, tmp_path):
    """A SubagentStart hook past its timeout is killed (what it started too) and the
    sub-agent starts without its context."""
    pid_file = tmp_path / "pid"
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    config = fast_config(
        hooks={"SubagentStart": [HookMatcher(hooks=[{"command": command, "timeout": 1}])]}
    )
    with scripted_model(HELPER_THEN_PARENT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            result = await (await start(client, inp, queues)).result()
    assert "FIRST-ANSWER" in str(tool_results(result)[0].content)
    assert all("hook additional context" not in r for r in requests_of(model, "helper"))
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


async def test_a_stop_during_a_stop_hook_ends_the_sub_agent_without_waiting_for_it(
    client, git_repo, tmp_path
):
    """A stop that comes while a SubagentStop hook runs cancels the hook (its processes are
    killed) and is obeyed at once, not after the hook's timeout."""
    pid_file = tmp_path / "pid"
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    config = fast_config(
        hooks={"SubagentStop": [HookMatcher(hooks=[{"command": command, "timeout": 600}])]}
    )
    script = {
        "agents": [
            {"name": "helper", "match": {"agent_name": "helper"}, "turns": [{"text": "DONE"}]},
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [{"tool_use": spawn("helper", "work", True)}, {"text": "waiting"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            await wait_for(pid_file.exists, timeout=60)
            child = client.get_workflow_handle(f"{handle.id}/helper")
            stopped_at = asyncio.get_running_loop().time()
            await child.signal("stop", StopRequest(reason="enough"))
            await asyncio.wait_for(child.result(), timeout=60)
            took = asyncio.get_running_loop().time() - stopped_at
            await handle.result()
    assert took < 30, took
    pid = int(pid_file.read_text())
    await wait_for(lambda: not alive(pid), timeout=10)


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and " Z " not in stat.read_text()


async def test_a_stop_hook_that_always_blocks_ends_at_the_sub_agents_last_turn(
    client, git_repo, tmp_path
):
    """A hook that never lets go cannot keep a sub-agent past its turns: at its last one the
    block is logged and the answer stands."""
    agents_dir = git_repo / ".claude" / "agents"
    agents_dir.mkdir(parents=True)
    (agents_dir / "brief.md").write_text(
        "---\nname: brief\ndescription: short\nmaxTurns: 2\n---\nBe brief.\n"
    )
    config = fast_config(hooks={"SubagentStop": hook("echo never >&2; exit 2", "brief")})
    script = {
        "agents": [
            {
                "name": "brief",
                "match": {"agent_type": "brief"},
                "turns": [{"text": "ONE"}, {"text": "TWO"}, {"text": "THREE"}],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("b", "go", False, subagent_type="brief")},
                    {"text": "parent done"},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            result = await (await start(client, inp, queues)).result()
    assert len([r for r in model.log if r.get("agent") == "brief"]) == 2
    (answer,) = tool_results(result)
    assert "TWO" in str(answer.content) and "THREE" not in str(answer.content)
