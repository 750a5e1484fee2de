"""The parent side of sub-agents: the `Agent` tool, the sync wait and backgrounding, and
the notifications that come back (spec R16-R22, R26, R35-R38).

Every sub-agent is a child `AgentWorkflow` started with ParentClosePolicy.ABANDON: its life
is governed by explicit rules, not by the parent run's: a sync child is cancelled when the
parent is (R26), a background child only by TaskStop, and either survives the parent's
continue-as-new. A background child, and a killed or failed one, reports its end by
signalling its parent's workflow id; the handle watcher is the fallback for a child that could
not (terminated, crashed code). A sync child that completes reports only through its result
(patched `sync-end-by-result`), which the sync wait and the watcher read from the handle.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import (
    WorkflowAlreadyStartedError,
)
from temporalio.workflow import ParentClosePolicy

from agents.agent_tool import AgentToolInput
from agents.builtin.fork import DEFINITION as FORK_DEFINITION
from agents.builtin.fork import FORK_QUERY_SOURCE, is_in_fork_child
from agents.config import OutlastConfig
from agents.definition import AgentDefinition
from agents.file_claims import queued_text
from agents.messages import ToolResultBlock
from agents.notifications import (
    PERSON_SENDERS,
    async_launch_text,
    person_name_text,
)
from agents.spawn import (
    FORK,
    child_permission_mode,
    depth_error,
    new_agent_id,
    resolve_agent_type,
    should_run_async,
)
from agents.worktree_slug import agent_worktree_slug
from workflows import search_attributes as sa
from workflows import versions
from workflows.child_endings import check_liveness, end_from_handle, watch_child
from workflows.child_input import ParentContext, child_input, fork_input
from workflows.child_timers import ChildTimers
from workflows.contracts import (
    AgentNotification,
    AgentResult,
    BackgroundRequest,
    Workspace,
)
from workflows.phases import PhaseGate
from workflows.registry import ChildRegistry, ChildTask
from workflows.starting_children import StartingChildren
from workflows.subagent_sync import SyncChildren
from workflows.team_spawn import (
    PERSON_NAMES,
    TEAM_NAME_NEEDS_TEAM,
    TEAM_SPAWN,
    leads,
    no_team_text,
    spawn_teammate,
)
from workflows.turns import ValidCall, error_result
from workflows.worktrees import create_worktree

SPAWN_LIMIT_IN_BATCH = "spawn-limit-in-batch"
"""Patch id: the concurrency limit also counts spawns of the same response still starting."""
DEFINITION_PLAN_ASYNC = "definition-plan-async"
"""Patch id: a child whose definition makes it plan first runs in the background, as one
launched with `mode: plan` does; run sync, its approval request and its parent waited on
each other for good."""
PLAN_NEEDS_BACKGROUND = "plan-needs-background"
"""Patch id: with background tasks disabled, a child that plans first is refused with a
sentence, as a teammate's is; it ran in the background all the same."""
ONE_AGENT_PER_NAME = "one-agent-per-name"
"""Patch id: a launch with the name of an agent still starting or running is refused at
launch time too (the same batch, a coordinator's queued worker)."""
NAME_REUSE_OWN_ID = "name-reuse-own-id"
"""Patch id: a child named like an ended one gets a workflow id of its own."""
RESUMED_NAMES_OWN_ID = "resumed-names-own-id"
"""Patch id: a resumed agent's named children get workflow ids of their own: the name may be
an earlier run's child's, which its registry does not know, and the new child became that
workflow id's next run (`show` then had only the new one; a user test, 2026-12-06)."""
FORK_SYNC_WHEN_DISABLED = "fork-sync-when-disabled"
"""Patch id: with background tasks disabled a fork runs sync, as every other child does
(R18: the seed's `&& !isBackgroundTasksDisabled` covers the fork experiment's force-async
too); it ran in the background regardless."""
DEFINITION_ISOLATION = "definition-isolation"
"""Patch id: an agent definition's `isolation: worktree` applies when the call names none
(R5); it had been read and ignored, so such an agent edited the main checkout."""


def _isolation(inp: AgentToolInput, resolved: AgentDefinition) -> str | None:
    """The call's isolation, else its definition's (`worktree`: the only one this runtime
    has; R54's `remote` is not offered)."""
    if inp.isolation is not None or resolved.isolation != "worktree":
        return inp.isolation
    # Asked only where the answer changes what runs, so no other spawn records a marker.
    return "worktree" if versions.patched(DEFINITION_ISOLATION) else None


class SubAgents(SyncChildren):
    """The spawning agent's sub-agent machinery; state lives in `registry` (carried)."""

    def __init__(self, registry: ChildRegistry, on_change: Callable[[], None] = lambda: None):
        self.registry = registry
        self.on_change = on_change
        """Called when a child is added (the parent redraws its current details)."""
        self._launching: set[str] = set()
        self._names_starting: set[str] = set()
        """Agent ids between the limit check and the registry: parallel Agent calls of one
        response all pass the check before any of them is running."""
        self.ctx: ParentContext | None = None
        self._handles: dict[str, workflow.ChildWorkflowHandle] = {}
        """This run's children (not carried: a continued run holds no handles)."""
        self.phases = PhaseGate(registry)
        self._timers = ChildTimers()
        self.stopping = lambda: False
        self._held_for_start = StartingChildren()
        self.refused: Callable[[str], None] = lambda text: None
        """Keeps a refusal where `show` lists it (the agent's `refused_signals`)."""

    def starting(self) -> set[str]:
        """Sub-agents whose child workflow is being started: not in the registry yet, so out
        of reach of a stop until they are."""
        return self._launching | self.phases.starting

    def open_children(self) -> bool:
        """A child this run started whose workflow (its whole chain of runs) has not closed,
        though it may have told its end."""
        return any(not handle.done() for handle in self._handles.values())

    # --- signals ---------------------------------------------------------------------

    def on_notification(self, end: AgentNotification) -> None:
        if end.agent_id not in self.registry.tasks and self._held_for_start.hold_end(
            end, self.starting()
        ):
            return
        if not self.registry.record_end(end):
            workflow.logger.debug(
                "notification from %s not queued (sync or duplicate)", end.agent_id
            )

    def on_background(self, request: BackgroundRequest) -> bool:
        """Mark the sync sub-agents `request` names to be backgrounded; False if none is."""
        found = False
        for task in self.registry.running():
            if task.mode == "sync" and request.agent_id in (None, task.agent_id, task.name):
                task.background_requested = True
                found = True
        return self._held_for_start.hold_background(request) or found

    # --- the Agent tool ----------------------------------------------------------------

    async def agent_tool(self, call: ValidCall) -> ToolResultBlock:
        ctx = self.ctx
        assert ctx is not None, "SubAgents used before the agent was set up"
        inp: AgentToolInput = call.input  # type: ignore[assignment]
        # Asked only for such a name, so no other spawn records a marker.
        if inp.name in PERSON_SENDERS and versions.patched(PERSON_NAMES):
            return error_result(call.block, person_name_text(inp.name))
        if inp.name and leads(ctx.team, ctx.name) and versions.patched(TEAM_SPAWN):
            return await self._spawn_teammate(ctx, call, inp)
        # Asked only for such a call, so no other spawn records a marker.
        if inp.team_name and ctx.team is None and versions.patched(TEAM_NAME_NEEDS_TEAM):
            return error_result(call.block, no_team_text(inp.team_name))
        resolved = resolve_agent_type(
            inp.subagent_type, ctx.definitions, ctx.config, ctx.allowed_agent_types
        )
        forking = resolved == FORK
        if forking and (ctx.query_source == FORK_QUERY_SOURCE or is_in_fork_child(ctx.messages())):
            # R49: the query source survives compaction; the boilerplate scan is the fallback.
            return error_result(
                call.block, "Fork children cannot fork: carry out your directive yourself."
            )
        if forking:
            resolved = FORK_DEFINITION
        if isinstance(resolved, str):
            return error_result(call.block, resolved)
        refusal = self._refusal(inp)
        if refusal:
            return error_result(call.block, refusal)
        if ctx.coordinator and (problem := self.phases.problem(inp, ctx.workspace.root)):
            return error_result(call.block, problem)
        plans = inp.mode == "plan" or self._plans_by_definition(resolved)
        if plans and (ctx.team is not None or self._only_sync(ctx.config)):
            why = (
                "A teammate's sub-agents run synchronously"
                if ctx.team is not None
                else "Background tasks are disabled, so sub-agents run synchronously"
            )
            return error_result(
                call.block,
                f"{why}, so one that plans first would wait for your approval while you wait "
                "for it: "
                + (
                    "leave out mode"
                    + (
                        " (or give a name: the teammate it spawns may plan first)."
                        if leads(ctx.team, ctx.name)
                        else "."
                    )
                    if inp.mode == "plan"
                    else f"{resolved.agent_type} plans first (permissionMode: plan); choose "
                    "another subagent_type."
                ),
            )
        if ctx.team is not None and (inp.run_in_background or inp.name):
            # R73: a teammate's sub-agents are its own sync helpers, not new team members.
            return error_result(
                call.block,
                "Teammates can only run synchronous sub-agents: leave out run_in_background "
                "and name (use SendMessage to talk to your team).",
            )
        agent_id = new_agent_id(workflow.random().getrandbits(64))
        is_async = ctx.team is None and (
            (forking and self._forks_run_async(ctx.config))
            # A child that plans first asks this agent to approve: it cannot wait for it.
            or plans
            or should_run_async(inp.run_in_background, resolved, ctx.config)
        )
        if ctx.coordinator:
            self.phases.max_running = ctx.config.agents.max_concurrent
            claim = self.phases.claim(agent_id, inp, ctx.workspace.root, resolved.agent_type)
            waits = self.phases.waits(claim)
            if waits:
                self.phases.enqueue(
                    claim, lambda: self._launch_named(call, inp, resolved, agent_id, True)
                )
                text = async_launch_text(agent_id, inp.description, inp.name, queued=True)
                return ToolResultBlock(
                    tool_use_id=call.block.id, content=text + queued_text(claim, waits)
                )
            self.phases.hold(claim)
        self._launching.add(agent_id)
        if not is_async:
            self._held_for_start.begin(agent_id, inp.name)
        try:
            result = await self._launch_named(call, inp, resolved, agent_id, is_async, forking)
        finally:
            self._launching.discard(agent_id)
        if result.is_error:
            self.phases.release(agent_id)  # nothing started: its files are not in use
        return result

    async def _spawn_teammate(
        self, ctx: ParentContext, call: ValidCall, inp: AgentToolInput
    ) -> ToolResultBlock:
        """The lead's named call: a new member of its team (R69), not a sub-agent of its own.
        A teammate is a general-purpose agent unless the call names a type."""
        assert ctx.team is not None and ctx.name
        resolved = resolve_agent_type(
            inp.subagent_type or "general-purpose",
            ctx.definitions,
            ctx.config,
            ctx.allowed_agent_types,
        )
        if isinstance(resolved, str):
            return error_result(call.block, resolved)
        return await spawn_teammate(ctx.team, ctx.name, call, resolved.agent_type)

    async def _launch_named(
        self,
        call: ValidCall,
        inp: AgentToolInput,
        resolved: AgentDefinition,
        agent_id: str,
        is_async: bool,
        forking: bool = False,
    ) -> ToolResultBlock:
        """`_launch`, one agent per name at a time: a second call with the name of an agent
        still starting (the same batch, or a coordinator's queued worker) is refused, as one
        with a running agent's name is. Each had taken its own workflow id once a reused name
        got one (`_child_workflow_id`), so two agents ran under one name."""
        name = inp.name
        if name and self._name_busy(name) and versions.patched(ONE_AGENT_PER_NAME):
            self._start_over(agent_id, name)
            return error_result(
                call.block,
                f"An agent named '{name}' is already running or starting; use SendMessage to "
                "talk to it, or choose another name.",
            )
        if name:
            self._names_starting.add(name)
        try:
            return await self._launch(call, inp, resolved, agent_id, is_async, forking)
        finally:
            if name:
                self._names_starting.discard(name)
            self._start_over(agent_id, name)

    def _start_over(self, agent_id: str, name: str | None) -> None:
        """Nothing more is kept for a start that is over (here, not in `agent_tool`: a
        coordinator's queued worker starts from its queue); a `background` kept for one that
        failed is refused after all."""
        if self._held_for_start.forget(agent_id):
            self.refused(
                f"signal `background` refused: the sub-agent {name or agent_id} it named could "
                "not start"
            )

    def _name_busy(self, name: str) -> bool:
        existing = self.registry.find(name)
        return name in self._names_starting or (
            existing is not None and existing.status == "running"
        )

    def _child_workflow_id(self, name: str | None, agent_id: str) -> str:
        """`<parent>/<name>`, or `<parent>/<agent id>` for an unnamed child. A name an ended
        agent had (R20: the latest wins) gives `<parent>/<name>.<agent id>`: under the same id
        this child's start became the earlier agent's next run, and a SendMessage to the
        earlier agent's id reached this one. So does any name in a resumed run, which does not
        know the names its earlier runs gave."""
        ctx = self.ctx
        assert ctx is not None
        base = f"{ctx.workflow_id}/{name or agent_id}"
        # Asked only for a reused name, so no other spawn records a marker.
        if name and self.registry.find(name) is not None and versions.patched(NAME_REUSE_OWN_ID):
            return f"{base}.{agent_id}"
        # Asked only by a resumed run's named spawn, so no other records a marker.
        if name and ctx.resumed and versions.patched(RESUMED_NAMES_OWN_ID):
            return f"{base}.{agent_id}"
        return base

    @staticmethod
    def _forks_run_async(config: OutlastConfig) -> bool:
        """R18: a fork runs in the background unless background tasks are disabled."""
        # Asked only where the answer changes what runs, so no other fork records a marker.
        disabled = config.agents.background_tasks_disabled
        return not (disabled and versions.patched(FORK_SYNC_WHEN_DISABLED))

    @staticmethod
    def _only_sync(config: OutlastConfig) -> bool:
        """Background tasks are disabled (R16): a child that plans first cannot run. Its
        plan needed a background run, which it got regardless until this was patched."""
        return config.agents.background_tasks_disabled and versions.patched(PLAN_NEEDS_BACKGROUND)

    def _plans_by_definition(self, resolved: AgentDefinition) -> bool:
        """Whether the child starts in plan mode by its definition (R23: `permissionMode:
        plan` where this agent's mode does not override it). Such a child asks this agent to
        approve its plan, so it runs in the background: run sync, both waited on each other."""
        ctx = self.ctx
        assert ctx is not None
        if child_permission_mode(ctx.permission_mode, resolved) != "plan":
            return False
        # Asked only where the answer changes what runs, so no other spawn records a marker.
        return versions.patched(DEFINITION_PLAN_ASYNC)

    async def _launch(
        self,
        call: ValidCall,
        inp: AgentToolInput,
        resolved: AgentDefinition,
        agent_id: str,
        is_async: bool,
        forking: bool = False,
    ) -> ToolResultBlock:
        ctx = self.ctx
        assert ctx is not None
        workspace, worktree = ctx.workspace, None
        workflow_id = self._child_workflow_id(inp.name, agent_id)
        if _isolation(inp, resolved) == "worktree":
            slug = agent_worktree_slug(agent_id)
            worktree = await create_worktree(ctx.workspace, slug, owner=workflow_id)
            if isinstance(worktree, str):
                return error_result(call.block, worktree)
            workspace = Workspace(root=worktree.worktree_path, host_queue=ctx.workspace.host_queue)
        claim = self.phases.claim_of(agent_id) if ctx.coordinator else None
        child = child_input(
            ctx, inp, resolved, agent_id, is_async, workspace, worktree, call, claim
        )
        if forking:
            child = fork_input(ctx, child, inp, worktree is not None)
        start_input, attributes = sa.child_start(child)
        try:
            handle = await workflow.start_child_workflow(
                "AgentWorkflow",
                start_input,
                id=workflow_id,
                result_type=AgentResult,
                parent_close_policy=ParentClosePolicy.ABANDON,
                # The short description only: no prompt text in the memo (visibility lists it).
                memo={"description": inp.description},
                static_summary=f"{resolved.agent_type}: {inp.description}",
                search_attributes=attributes,
            )
        except WorkflowAlreadyStartedError:
            return error_result(
                call.block,
                f"An agent with workflow id {workflow_id} is already running; "
                "use SendMessage to talk to it or choose another name.",
            )
        task = ChildTask(
            agent_id=agent_id,
            name=inp.name,
            agent_type=resolved.agent_type,
            description=inp.description,
            workflow_id=workflow_id,
            run_id=handle.first_execution_run_id,
            tool_use_id=call.block.id,
            mode="background" if is_async else "sync",
            # Without the definition set (refilled on resume): the table is carried by every
            # continue-as-new and must not grow by kilobytes per child.
            spawn=child.model_copy(update={"definitions": None}),
        )
        self.registry.add(task)
        self._launching.discard(agent_id)  # counted as running from here
        self._held_for_start.apply(task, self.registry)
        self.on_change()
        self._handles[agent_id] = handle
        if is_async:
            self._watch(task, handle)
            return ToolResultBlock(
                tool_use_id=call.block.id,
                content=async_launch_text(agent_id, inp.description, inp.name),
            )
        return await self._wait_sync(call, task, handle)

    def _refusal(self, inp: AgentToolInput) -> str | None:
        ctx = self.ctx
        assert ctx is not None
        if err := depth_error(ctx.lineage.depth, ctx.config):
            return err
        running, limit = len(self.registry.running()), ctx.config.agents.max_concurrent
        starting = len(self._launching)
        over = running >= limit
        if not over and not ctx.coordinator and running + starting >= limit:
            # Agents of the first releases let a batch of parallel spawns past the limit.
            over = versions.patched(SPAWN_LIMIT_IN_BATCH)
            running += starting
        if over:
            return (
                f"Too many sub-agents running ({running}, max {limit}); wait for one to "
                "finish or stop one."
            )
        existing = self.registry.find(inp.name) if inp.name else None
        if existing is not None and existing.status == "running":
            return (
                f"An agent named '{inp.name}' is already running ({existing.agent_id}); "
                "use SendMessage to talk to it."
            )
        return None

    async def _end_from_handle(self, task: ChildTask, generation: int, handle):
        return await end_from_handle(task, generation, handle)

    def _watch(self, task: ChildTask, handle) -> None:
        watch_child(self.registry, task, handle)

    async def check_liveness(self) -> None:
        await check_liveness(self.registry)
