"""Sub-agent hooks as an agent's workflow runs them (spec R100, agents/hooks.py).

`SubagentStart` runs once, before a sub-agent's first turn (spawned, forked or resumed), and
what its hooks add goes into that turn. `SubagentStop` runs each time the sub-agent's turn
ends with an answer; a hook that blocks sends it back to work with the reason. Each command
is a `hooks.run_command` activity on the workspace's host; the commands of one event run
side by side. A hook that fails, times out or is lost is logged and does not change the
agent's course (Claude Code's "non-blocking error").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

from agents import hooks
from agents.config import OutlastConfig
from agents.definition import AgentDefinition
from agents.hooks import HookCommand, HookRun, HookTable
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.hooks import HookRunInput

from workflows.contracts import AgentInput

SUBAGENT_HOOKS = "subagent-hooks"
"""Patch id: a sub-agent runs its hooks (R100). Asked only where a hook applies, so no other
run records it. No recorded run can have one (they come with new config fields), but an older
worker must not take over a run that ran them: the marker fails its replay instead."""
HOOK_RETRY = RetryPolicy(maximum_attempts=2)
"""A second attempt only for a lost worker: a hook's own failure or timeout is a result."""
HOOK_MARGIN = timedelta(seconds=30)


def applies(inp: AgentInput) -> bool:
    """Sub-agents run these hooks; a teammate's turn ending is no stop, and a top-level agent
    is no sub-agent."""
    return inp.lineage.depth > 0 and inp.team is None


def hook_table(config: OutlastConfig, definition: AgentDefinition) -> HookTable:
    """The config's hooks, and the agent's own (its definition's frontmatter) where the
    config trusts definitions with commands (`features.definition_hooks`)."""
    if not config.features.definition_hooks or not definition.hooks:
        return config.hooks
    own, skipped = hooks.definition_hooks(definition.hooks)
    for problem in skipped:
        workflow.logger.warning("agent %s: hook not run: %s", definition.agent_type, problem)
    return hooks.merged(config.hooks, own)


def common_input(inp: AgentInput, cwd: str, permission_mode: str | None) -> dict[str, Any]:
    return {
        "session_id": inp.lineage.session_id,
        "cwd": cwd,
        "permission_mode": permission_mode or "default",
    }


async def run_hooks(
    commands: list[HookCommand],
    stdin: dict[str, Any],
    cwd: str,
    inp: AgentInput,
    stopped: Callable[[], bool],
) -> list[HookRun]:
    """Run `commands` side by side; how each went, in their order. A stop that comes
    meanwhile cancels them (their process groups are killed) and nothing they said counts:
    []. Asks the patch, so call it only with commands to run."""
    if not commands or not versions.patched(SUBAGENT_HOOKS):
        return []
    tasks = [asyncio.ensure_future(_run(c, stdin, cwd, inp)) for c in commands]
    finished = False
    try:
        await workflow.wait_condition(lambda: all(t.done() for t in tasks) or stopped())
        finished = all(t.done() for t in tasks)
    finally:
        # A stop, or this workflow's own cancellation (a kill): no hook goes on running.
        if not finished:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    if not finished:
        return []
    runs = [t.result() for t in tasks]
    event = stdin.get("hook_event_name", "hook")
    for command, run in zip(commands, runs, strict=True):
        if (problem := hooks.problem(run)) is not None:
            workflow.logger.warning("%s hook `%s`: %s", event, command.command, problem)
    return runs


async def _run(command: HookCommand, stdin: dict[str, Any], cwd: str, inp: AgentInput) -> HookRun:
    try:
        return await workflow.execute_activity(
            "hooks.run_command",
            HookRunInput(
                command=command.command,
                cwd=cwd,
                stdin=stdin,
                timeout_s=command.timeout,
                project_dir=inp.worktree.repo_root if inp.worktree else inp.workspace.root,
            ),
            task_queue=inp.workspace.host_queue,
            result_type=HookRun,
            start_to_close_timeout=timedelta(seconds=command.timeout) + HOOK_MARGIN,
            heartbeat_timeout=HOOK_MARGIN,
            retry_policy=HOOK_RETRY,
            summary=f"hook: {command.command[:60]}",
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise  # a kill during a hook is still a kill
        return HookRun(error=f"did not run: {e.cause or e}")


async def start_context(
    inp: AgentInput,
    definition: AgentDefinition,
    agent_id: str,
    cwd: str,
    mode: str | None,
    stopped: Callable[[], bool],
) -> str | None:
    """What the SubagentStart hooks add to the sub-agent's first turn, as a reminder. A
    resumed sub-agent runs them again but is not given their context twice: its
    conversation has it from its first run (Claude Code keeps one copy, for the cache)."""
    table = hook_table(inp.config, definition)
    commands = hooks.commands_for(table, hooks.SUBAGENT_START, definition.agent_type)
    stdin = hooks.start_input(common_input(inp, cwd, mode), agent_id, definition.agent_type)
    runs = await run_hooks(commands, stdin, cwd, inp, stopped) if commands else []
    contexts = [c for c in map(hooks.start_context, runs) if c is not None]
    if not contexts or inp.resume_from is not None:
        return None
    return hooks.start_reminder(contexts)


async def stop_feedback(
    inp: AgentInput,
    definition: AgentDefinition,
    agent_id: str,
    cwd: str,
    mode: str | None,
    last_text: str,
    active: bool,
    stopped: Callable[[], bool],
) -> str | None:
    """The sub-agent's next instruction if a SubagentStop hook keeps it working, else None."""
    table = hook_table(inp.config, definition)
    commands = hooks.commands_for(table, hooks.SUBAGENT_STOP, definition.agent_type)
    if not commands:
        return None
    stdin = hooks.stop_input(
        common_input(inp, cwd, mode), agent_id, definition.agent_type, last_text, active
    )
    runs = await run_hooks(commands, stdin, cwd, inp, stopped)
    reasons = [r for r in map(hooks.stop_block, runs) if r is not None]
    return hooks.stop_feedback(reasons) if reasons else None
