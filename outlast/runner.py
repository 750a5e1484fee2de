"""Starting an agent from the CLI (or any Python code): validate, then start by name."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from pydantic import ValidationError
from temporalio.client import Client, WorkflowHandle

from activities.definitions import scan
from agents.builtin import builtin_definitions
from agents.config import ConfigError, OutlastConfig, from_env, parse_model_call
from agents.definition import AgentDefinition, DefinitionSet
from agents.plan_mode import EXIT_PLAN_MODE_TOOL
from agents.spawn import not_found_message
from agents.tool_filter import resolve_agent_tools
from outlast.start_metadata import start_metadata
from workflows.contracts import TASK_QUEUE, AgentInput, AgentResult, Workspace, host_task_queue
from workflows.tool_pool import BASE_TOOLS


class StartError(ValueError):
    """An argument that would start an agent doomed to fail; the message says what to fix."""


def env_config(model_call: str | None = None) -> OutlastConfig:
    """The config the environment asks for (`from_env`), with `model_call` (`outlast run
    --model-call`) over `OUTLAST_MODEL_CALL`; a value it cannot read is refused as the
    StartError every starter already reports."""
    try:
        config = with_env_hooks(from_env(os.environ), os.environ.get("OUTLAST_HOOKS", ""))
        if model_call is None:
            return config
        mode = parse_model_call(model_call, f"--model-call {model_call}")
    except ConfigError as e:
        raise StartError(str(e)) from None
    return config.model_copy(
        update={"model": config.model.model_copy(update={"local_activity": mode})}
    )


def with_env_hooks(config: OutlastConfig, value: str) -> OutlastConfig:
    """`config` with the sub-agent hooks `OUTLAST_HOOKS` gives: their JSON, or the path of a
    JSON file; either the hooks table or Claude Code settings holding one under `hooks`
    (whose other keys are not Outlast's, and are left alone). ConfigError for anything else."""
    value = value.strip()
    if not value:
        return config
    where = "OUTLAST_HOOKS"
    if not value.startswith(("{", "[")):
        where = f"OUTLAST_HOOKS={value}"
        try:
            value = Path(value).expanduser().read_text()
        except OSError as e:
            raise ConfigError(f"{where}: cannot read it ({e.strerror}).") from None
    try:
        table = json.loads(value)
    except ValueError as e:
        raise ConfigError(f"{where}: not JSON ({e}).") from None
    if isinstance(table, dict) and isinstance(table.get("hooks"), dict):
        table = table["hooks"]
    if not isinstance(table, dict):
        raise ConfigError(f'{where}: an object of events was expected ({{"SubagentStop": [...]}}).')
    try:
        return config.model_copy(update={"hooks": OutlastConfig(hooks=table).hooks})
    except ValidationError as e:
        err = e.errors()[0]
        path = ".".join(str(p) for p in err["loc"][1:])
        raise ConfigError(f"{where}: {path + ': ' if path else ''}{err['msg']}") from None


def local_definitions(repo: Path, config: OutlastConfig) -> DefinitionSet:
    """The definitions the workflow will see, read here to refuse a bad `--agent` at once."""
    user, user_errors = scan(Path.home() / ".claude" / "agents", "userSettings")
    project, project_errors = scan(repo / ".claude" / "agents", "projectSettings")
    return DefinitionSet(
        definitions=[*builtin_definitions(config), *user, *project],
        errors=user_errors + project_errors,
    )


def repo_root(repo: str | os.PathLike[str]) -> Path:
    """`--repo` as an absolute directory, or StartError saying what it is instead."""
    root = Path(repo).expanduser()
    if not root.is_dir():
        what = "not a directory" if root.exists() else "no such directory"
        raise StartError(f"--repo {repo}: {what}.")
    return root.resolve()


def build_input(
    task: str,
    repo: str | os.PathLike[str],
    *,
    agent_type: str = "general-purpose",
    model: str | None = None,
    host_id: str,
    config: OutlastConfig | None = None,
    max_turns: int | None = None,
    plan_first: bool = False,
) -> AgentInput:
    """The workflow input for one top-level agent, or StartError naming the problem."""
    if not task.strip():
        raise StartError("The task is empty: say what the agent should do.")
    root = repo_root(repo)
    config = config or env_config()
    definitions = local_definitions(root, config)
    definition = definitions.get(agent_type)
    if definition is None:
        raise StartError(
            not_found_message(agent_type, definitions.names(), definitions.errors, guess=True)
        )
    if plan_first and (why := cannot_plan(definition, config)) is not None:
        raise StartError(f"--plan: the {agent_type} agent cannot plan for approval: {why}.")
    if definition.permission_mode == "plan" and (missing := plan_tools_missing(definition, config)):
        # Its definition starts it in plan mode: told to write a plan and ask with
        # ExitPlanMode, it could do neither, and ran out of turns (a user test, 2026-12-07).
        where = definition.path or "its definition"
        raise StartError(
            f"the {agent_type} agent starts in plan mode (permissionMode: plan in {where}) "
            f"but cannot plan for approval: it has no {' or '.join(missing)}; add them to its "
            "tools, or drop permissionMode: plan"
        )
    return AgentInput(
        prompt=task,
        workspace=Workspace(root=str(root), host_queue=host_task_queue(host_id)),
        agent_type=agent_type,
        model=model,
        config=config,
        description=task.strip().splitlines()[0][:80],
        max_turns=max_turns,
        permission_mode="plan" if plan_first else None,
    )


def plan_tools_missing(definition: AgentDefinition, config: OutlastConfig) -> list[str]:
    """What an agent of `definition` lacks to plan for approval (R75): its plan file is
    written with Write, and asked about with ExitPlanMode."""
    tools = set(resolve_agent_tools(definition, BASE_TOOLS).tools) - set(config.tools.disabled)
    return [t for t in (EXIT_PLAN_MODE_TOOL, "Write") if t not in tools]


def cannot_plan(definition: AgentDefinition, config: OutlastConfig) -> str | None:
    """Why an agent of `definition` could not plan for approval (R75): it writes its plan to
    its plan file and asks with ExitPlanMode. Started in plan mode without them, it was told
    to do both, could do neither, and ended with nothing asked."""
    missing = plan_tools_missing(definition, config)
    if not missing:
        return None
    return (
        f"it has no {' or '.join(missing)}; run it without --plan, or plan with an agent "
        "that has them (general-purpose)"
    )


def new_workflow_id(agent_type: str) -> str:
    return f"outlast-{agent_type.lower()}-{uuid.uuid4().hex[:12]}"


async def start_agent(
    client: Client, inp: AgentInput, *, workflow_id: str | None = None, task_queue: str = TASK_QUEUE
) -> WorkflowHandle:
    summary, details = start_metadata("single", inp.prompt, inp.workspace.root)
    return await client.start_workflow(
        "AgentWorkflow",
        inp,
        id=workflow_id or new_workflow_id(inp.agent_type),
        task_queue=task_queue,
        result_type=AgentResult,
        # No task text in the memo (it is listed and stored unencrypted by visibility).
        memo={"pattern": "single", "workspace": inp.workspace.root},
        static_summary=summary,
        static_details=details,
    )
