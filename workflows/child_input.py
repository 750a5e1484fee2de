"""What a sub-agent starts with: the spawning agent's context (`ParentContext`) and the
child's `AgentInput` built from it and the Agent call (R16-R23, R46-R47, R59, R62, R76)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from temporalio import workflow

from agents.agent_tool import AgentToolInput
from agents.builtin.coordinator import WORKER_DEFINITION, scratchpad_note, worker_system_prompt
from agents.builtin.fork import FORK_QUERY_SOURCE
from agents.config import OutlastConfig
from agents.definition import AgentDefinition, DefinitionSet
from agents.spawn import child_permission_mode, definitions_for_child, resolve_child_model
from agents.tool_filter import filter_tools_for_agent, resolve_agent_tools
from agents.transcript import TranscriptRef
from workflows.contracts import (
    AgentInput,
    ForkContext,
    Lineage,
    ParentLink,
    TeamLink,
    Workspace,
)
from workflows.phases import phase_capabilities
from workflows.tool_pool import BASE_TOOLS
from workflows.turns import ValidCall

with workflow.unsafe.imports_passed_through():
    from activities.llm import ModelRequest

WORKER_TYPE = WORKER_DEFINITION.agent_type


@dataclass
class ParentContext:
    """What the spawning agent knows about itself; fixed for its run, but for `workspace`,
    which follows it into a worktree it enters (EnterWorktree)."""

    workflow_id: str
    agent_id: str
    agent_type: str
    lineage: Lineage
    config: OutlastConfig
    definitions: DefinitionSet
    workspace: Workspace
    model: str
    permission_mode: str
    allowed_agent_types: list[str] | None
    read_state: Callable[[], dict]
    parent: ParentLink | None = None
    request: ModelRequest | None = None
    """The agent's request template: a fork sends the same prompt and tool bytes."""
    tools: list[str] = field(default_factory=list)
    transcript: Callable[[], TranscriptRef] = TranscriptRef
    round_tool_use_ids: Callable[[], list[str]] = list
    messages: Callable[[], list] = list
    query_source: str | None = None
    coordinator: bool = False
    """Workers run in the background under the phase rules (R55, R59)."""
    write_scope: list[str] | None = None
    """The spawning agent's own write scope: its sub-agents get no more (a research
    worker's helper may not write the repository either)."""
    planning: Callable[[], bool] = lambda: False
    """The spawning agent is in plan mode now: its helpers may read, nothing more (R76)."""
    scratchpad: str | None = None
    team: TeamLink | None = None
    name: str | None = None
    """The spawning agent's own name (a team's lead spawns teammates by name, R69)."""
    resumed: bool = False
    """This run resumes an agent that ended: its earlier runs' sub-agents are not in its
    registry (`workflows/earlier_children.py`)."""


def child_input(
    ctx: ParentContext,
    inp: AgentToolInput,
    definition: AgentDefinition,
    agent_id: str,
    is_async: bool,
    workspace: Workspace,
    worktree,
    call: ValidCall,
    claim,
) -> AgentInput:
    """The new sub-agent's input: its mode, tools, write scope, lineage and link back here.
    `claim`: a coordinator's worker's declared files (R59), None for others."""
    mode = child_permission_mode(ctx.permission_mode, definition)
    if inp.mode == "plan":
        mode = "plan"  # R79: it plans first, and its lead (this agent) approves
    if ctx.coordinator and definition.agent_type != WORKER_TYPE:
        # R62: every worker of a coordinator gets the worker instructions.
        definition = definition.model_copy(
            update={"system_prompt": worker_system_prompt(definition.system_prompt)}
        )
    if ctx.coordinator and ctx.scratchpad:
        definition = definition.model_copy(
            update={
                "system_prompt": f"{definition.system_prompt}\n\n{scratchpad_note(ctx.scratchpad)}"
            }
        )
    pool = filter_tools_for_agent(
        BASE_TOOLS,
        is_built_in=definition.is_built_in,
        is_async=is_async,
        permission_mode=mode,
        allow_nested_agents=ctx.config.agents.allow_nested_agents,
    )
    tools = resolve_agent_tools(definition, pool).tools
    write_scope = None if ctx.write_scope is None else list(ctx.write_scope)
    if ctx.planning():
        write_scope = []  # R76: a planning agent's helpers read (and shell read-only)
    if ctx.coordinator:
        tools, write_scope = phase_capabilities(tools, claim, ctx.scratchpad)
    return AgentInput(
        prompt=inp.prompt,
        workspace=workspace,
        agent_type=definition.agent_type,
        definition=definition,
        model=resolve_child_model(inp.model, definition, ctx.config, ctx.model),
        tools=tools,
        write_scope=write_scope,
        config=ctx.config,
        lineage=Lineage(
            agent_id=agent_id,
            chain_id=str(workflow.uuid4()),
            depth=ctx.lineage.depth + 1,
            session_id=ctx.lineage.session_id or ctx.workflow_id,
            parent_workflow_id=ctx.workflow_id,
            parent_agent_id=ctx.agent_id,
            pattern=ctx.lineage.pattern,
        ),
        name=inp.name,
        description=inp.description,
        parent=ParentLink(
            workflow_id=ctx.workflow_id,
            agent_id=ctx.agent_id,
            tool_use_id=call.block.id,
            sender=ctx.name or ctx.agent_id,
        ),
        background=is_async,
        read_file_state={} if worktree else dict(ctx.read_state()),
        permission_mode=mode,
        worktree=worktree,
        definitions=definitions_for_child(tools, ctx.definitions),
        scratchpad=ctx.scratchpad,
    )


def fork_input(
    ctx: ParentContext, child: AgentInput, inp: AgentToolInput, in_worktree: bool
) -> AgentInput:
    """R46/R47: the parent's prompt bytes, exact tools, model and conversation."""
    fork = ForkContext(
        system_ref=ctx.request.system_ref,
        tools_ref=ctx.request.tools_ref,
        tools=ctx.tools,
        model=ctx.model,
        base=ctx.transcript(),
        tool_use_ids=ctx.round_tool_use_ids(),
        directive=inp.prompt,
        parent_cwd=ctx.workspace.root if in_worktree else None,
    )
    return child.model_copy(
        update={
            "fork": fork,
            "query_source": FORK_QUERY_SOURCE,
            "tools": ctx.tools,
            # The parent's tools, so the parent's rule: its Agent tool lists these.
            "definitions": definitions_for_child(ctx.tools, ctx.definitions),
            "model": ctx.model,
            "permission_mode": "bubble",
            "read_file_state": {} if in_worktree else dict(ctx.read_state()),
        }
    )
