"""Getting an agent ready to loop: its definition, tools, model, rendered prompt (R5, R17)."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from agents.agent_tool import agent_tool_description
from agents.builtin.coordinator import DEFINITION as COORDINATOR_DEFINITION
from agents.builtin.coordinator import WORKER_DEFINITION, worker_tools, worker_tools_context
from agents.builtin.fork import DEFINITION as FORK_DEFINITION
from agents.builtin.teammate import teammate_system_prompt
from agents.config import OutlastConfig
from agents.control_tools import TASK_OUTPUT_TOOL
from agents.definition import AgentDefinition, DefinitionSet
from agents.questions import ASK_USER_QUESTION_TOOL
from agents.spawn import fork_enabled, new_agent_id, not_found_message
from agents.team_tasks import TEAM_TOOLS
from agents.tool_filter import (
    ResolvedTools,
    filter_tools_for_agent,
    is_read_only,
    resolve_agent_tools,
)

with workflow.unsafe.imports_passed_through():
    from activities.context import RenderContextInput, RenderedContext
    from activities.definitions import LoadDefinitionsInput, load_definitions
    from activities.errors import NON_RETRYABLE, AgentTypeNotFound, InvalidAgentInput
    from activities.llm import AgentTag, ModelRequest
    from activities.tools import TOOLS

from workflows.contracts import AgentInput, Lineage
from workflows.host_steps import run_host_step
from workflows.search_attributes import pattern_of
from workflows.team_spawn import leads
from workflows.tool_pool import BASE_TOOLS

SETUP_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=60),
    "retry_policy": RetryPolicy(maximum_attempts=5, non_retryable_error_types=NON_RETRYABLE),
}


class Prepared(BaseModel):
    """An agent ready to loop. Carried by continue-as-new, so a continued run sends the very
    same rendered prompt bytes (and keeps hitting the prompt cache)."""

    model_config = ConfigDict(frozen=True)

    definition: AgentDefinition
    definitions: DefinitionSet
    tools: list[str]
    allowed_agent_types: list[str] | None
    model: str
    permission_mode: str
    request: ModelRequest
    sandbox: Literal["none", "read_only", "copy"]
    max_turns: int


def lineage_of(inp: AgentInput) -> Lineage:
    """The input's lineage, completed for an agent started by a client with bare JSON."""
    lineage = inp.lineage
    info = workflow.info()
    return lineage.model_copy(
        update={
            "agent_id": lineage.agent_id or new_agent_id(workflow.random().getrandbits(64)),
            "chain_id": lineage.chain_id or str(workflow.uuid4()),
            "session_id": lineage.session_id or info.workflow_id,
            "pattern": pattern_of(inp),
        }
    )


async def load_definition_set(inp: AgentInput) -> DefinitionSet:
    if inp.definitions is not None:
        return inp.definitions
    try:
        loaded: DefinitionSet = await workflow.execute_activity(
            load_definitions,
            LoadDefinitionsInput(
                workspace_root=inp.workspace.root,
                session_definitions=inp.session_definitions,
                config=inp.config,
            ),
            task_queue=inp.workspace.host_queue,
            **SETUP_OPTIONS,
        )
    except ActivityError as e:
        cause = e.cause
        if isinstance(cause, ApplicationError) and cause.type == InvalidAgentInput.__name__:
            raise InvalidAgentInput(cause.message) from None  # the run's own failure, said so
        raise
    for error in loaded.errors:
        workflow.logger.warning("agent definition skipped: %s", error)
    return loaded


def agent_fields_hidden(inp: AgentInput) -> list[str]:
    """The `Agent` tool fields this agent is not offered: `run_in_background` when background
    tasks are disabled (R16: such a call runs sync), both it and `name` for a teammate (R73:
    its sub-agents are its own sync helpers; it was offered them and refused at the call),
    and `mode` for both (a sync child that plans first would wait for its approval while
    the parent waits for it: refused at the call). A team's lead keeps `name` and `mode`: a
    named call spawns a teammate, who may plan first (R69)."""
    if inp.team is not None:
        if leads(inp.team, inp.name):
            return ["run_in_background"]
        return ["run_in_background", "name", "mode"]
    if inp.config.agents.background_tasks_disabled:
        return ["run_in_background", "mode"]
    return []


def user_facing(inp: AgentInput) -> bool:
    """Whether a person started this agent to talk to: no parent agent or pattern workflow
    above it, not a fork, not a teammate. Only such an agent may ask them questions."""
    return (
        inp.parent is None
        and inp.fork is None
        and inp.team is None
        and inp.lineage.depth == 0
        and inp.lineage.parent_workflow_id is None
    )


def without_disabled(tools: list[str], config: OutlastConfig) -> list[str]:
    """`tools` without those the operator turned off (`tools.disabled`)."""
    disabled = config.tools.disabled
    if not disabled:
        return tools
    known = {*BASE_TOOLS, *TOOLS, *TEAM_TOOLS}
    if unknown := sorted(set(disabled) - known):
        raise InvalidAgentInput(
            f"tools.disabled names no tool: {', '.join(unknown)} "
            f"(the tools are {', '.join(sorted(known))})"
        )
    return [t for t in tools if t not in disabled]


async def prepare(inp: AgentInput, lineage: Lineage) -> Prepared:
    definitions = await load_definition_set(inp)
    if inp.mode == "coordinator":
        definition = coordinator_definition(inp, definitions)
    else:
        definition = inp.definition or definitions.get(inp.agent_type)
    if definition is None:
        raise AgentTypeNotFound(
            not_found_message(inp.agent_type, definitions.names(), definitions.errors)
        )
    if inp.team is not None:
        definition, resolved = teammate_setup(inp, definition)
    else:
        resolved = resolve_agent_tools(definition, BASE_TOOLS)
    tools = inp.tools if inp.tools is not None else resolved.tools
    if not user_facing(inp):
        # R30: only the agent a person talks to may ask them (a pattern's stage, a verified
        # task's implementer, a sub-agent started with a given tool list: none is).
        tools = [t for t in tools if t != ASK_USER_QUESTION_TOOL]
    if agent_fields_hidden(inp):
        # No background task to ask about where none can be started (R16, R73).
        tools = [t for t in tools if t != TASK_OUTPUT_TOOL]
    unknown = [t for t in tools if t not in TOOLS and t not in BASE_TOOLS and t not in TEAM_TOOLS]
    if unknown:
        raise InvalidAgentInput(f"Unknown tools requested: {', '.join(unknown)}")
    tools = without_disabled(tools, inp.config)
    mode = inp.permission_mode or definition.permission_mode or "default"
    model = inp.config.resolve_model(inp.model or definition.model)
    spawnable = [
        d
        for d in definitions.definitions
        if resolved.allowed_agent_types is None or d.agent_type in resolved.allowed_agent_types
    ]
    hidden = agent_fields_hidden(inp)
    # R15: Explore and Plan go without CLAUDE.md and git status unless slim context is off.
    slim = definition.omit_claude_md and inp.config.agents.slim_subagent_context
    rendered = await run_host_step(
        inp.config,
        "prompt.render_context",
        RenderContextInput(
            system_prompt=definition.system_prompt,
            tool_names=tools,
            workspace_root=inp.workspace.root,
            cwd=inp.workspace.root,
            include_claude_md=not slim,
            include_git_status=not slim,
            # R84: the critical reminder goes with every turn instead (LoopHooks.ephemeral).
            critical_system_reminder=None,
            agent_tool_description=(
                agent_tool_description(
                    spawnable,
                    forking=fork_enabled(inp.config),
                    background="run_in_background" not in hidden,
                    team=inp.team.team_name
                    if inp.team is not None and leads(inp.team, inp.name)
                    else None,
                )
                if "Agent" in tools
                else ""
            ),
            coordinator=inp.mode == "coordinator",
            agent_fields_hidden=hidden,
        ),
        host_queue=inp.workspace.host_queue,
        result_type=RenderedContext,
        **SETUP_OPTIONS,
    )
    hard = inp.config.agents.hard_max_turns
    return Prepared(
        definition=definition,
        definitions=definitions,
        tools=tools,
        allowed_agent_types=resolved.allowed_agent_types,
        model=model,
        permission_mode=mode,
        request=ModelRequest(
            model=model,
            max_tokens=inp.config.model.max_tokens,
            system_ref=rendered.system_ref,
            tools_ref=rendered.tools_ref,
            agent=AgentTag(
                agent_id=lineage.agent_id, agent_type=definition.agent_type, name=inp.name or ""
            ),
        ),
        # A worker that may write nothing in the workspace reads it through a read-only shell.
        # Plan mode is a state the agent enters and leaves: the loop sandboxes it per call.
        sandbox="copy"
        if inp.workspace_is_copy
        else "read_only"
        if is_read_only(tools, None if mode == "plan" else mode) or inp.write_scope == []
        else "none",
        max_turns=min(inp.max_turns or definition.max_turns or hard, hard),
    )


def teammate_setup(
    inp: AgentInput, definition: AgentDefinition
) -> tuple[AgentDefinition, ResolvedTools]:
    """R73, R74: a teammate's prompt tells it how to reach its team; its tools add the task
    list and keep `Agent` (for sync helpers) and SendMessage."""
    team = inp.team
    assert team is not None
    prompt = teammate_system_prompt(
        definition.system_prompt,
        team_name=team.team_name,
        name=inp.name or "",
        members=team.members,
    )
    pool = filter_tools_for_agent(
        [*BASE_TOOLS, *TEAM_TOOLS],
        is_built_in=definition.is_built_in,
        is_async=True,
        permission_mode=inp.permission_mode or definition.permission_mode,
        is_in_process_teammate=True,
    )
    return (
        definition.model_copy(update={"system_prompt": prompt}),
        resolve_agent_tools(definition, pool),
    )


def coordinator_definition(inp: AgentInput, definitions: DefinitionSet) -> AgentDefinition:
    """R55, R58: the coordinator's prompt, told what its workers can really do (the same
    filtering a worker spawn goes through), which MCP servers exist and where the
    scratchpad is."""
    worker = definitions.get(WORKER_DEFINITION.agent_type) or WORKER_DEFINITION
    pool = filter_tools_for_agent(
        without_disabled(BASE_TOOLS, inp.config),
        is_built_in=worker.is_built_in,
        is_async=True,
        permission_mode=worker.permission_mode or "acceptEdits",
        allow_nested_agents=inp.config.agents.allow_nested_agents,
    )
    tools = worker_tools(
        resolve_agent_tools(worker, pool).tools, simple=inp.config.agents.simple_worker_tools
    )
    context = worker_tools_context(tools, inp.mcp_servers, inp.scratchpad)
    return COORDINATOR_DEFINITION.model_copy(
        update={"system_prompt": f"{COORDINATOR_DEFINITION.system_prompt}\n\n{context}"}
    )


def prepare_fork(inp: AgentInput, lineage: Lineage) -> Prepared:
    """A fork renders nothing: it sends its parent's prompt and tool bytes (R47)."""
    fork = inp.fork
    assert fork is not None
    hard = inp.config.agents.hard_max_turns
    return Prepared(
        definition=FORK_DEFINITION,
        definitions=inp.definitions or DefinitionSet(definitions=[]),
        tools=fork.tools,
        allowed_agent_types=None,
        model=fork.model,
        permission_mode="bubble",
        request=ModelRequest(
            model=fork.model,
            max_tokens=inp.config.model.max_tokens,
            system_ref=fork.system_ref,
            tools_ref=fork.tools_ref,
            agent=AgentTag(
                agent_id=lineage.agent_id,
                agent_type=FORK_DEFINITION.agent_type,
                name=inp.name or "",
            ),
            shared_prefix_breakpoint=True,
        ),
        sandbox="read_only" if is_read_only(fork.tools, "bubble") else "none",
        max_turns=min(inp.max_turns or FORK_DEFINITION.max_turns or hard, hard),
    )
