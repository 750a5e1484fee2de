"""`AgentWorkflow`: one agent, from its task to its final answer, as a durable workflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from agents.definition import AgentDefinition, DefinitionSet
from agents.messages import Message
from agents.tool_filter import is_read_only, resolve_agent_tools

with workflow.unsafe.imports_passed_through():
    from activities.context import RenderContextInput, RenderedContext, render_context
    from activities.definitions import LoadDefinitionsInput, load_definitions
    from activities.errors import NON_RETRYABLE, AgentTypeNotFound, InvalidAgentInput
    from activities.llm import AgentTag, ModelRequest
    from activities.tools import TOOLS

from workflows.agent_loop import LoopHooks, LoopSetup, LoopState, run_agent_loop
from workflows.contracts import (
    AgentInput,
    AgentResult,
    AgentStatus,
    StopRequest,
    TranscriptView,
)

SETUP_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=60),
    "retry_policy": RetryPolicy(maximum_attempts=5, non_retryable_error_types=NON_RETRYABLE),
}


def not_found_message(agent_type: str, available: list[str]) -> str:
    return f"Agent type '{agent_type}' not found. Available agents: {', '.join(available)}"


@workflow.defn(name="AgentWorkflow")
class AgentWorkflow:
    def __init__(self) -> None:
        self._state = LoopState()
        self._messages: list[Message] = []
        self._base = self._state.transcript
        self._phase = "starting"
        self._current_tools: list[str] = []
        self._stop: StopRequest | None = None
        self._agent_type = ""
        self._model = ""
        self._agent_id = ""

    @workflow.run
    async def run(self, inp: AgentInput) -> AgentResult:
        started = workflow.now()
        self._agent_id = inp.lineage.agent_id or workflow.info().workflow_id
        definition = await self._definition(inp)
        setup = await self._setup(inp, definition)
        self._state = LoopState(cwd=inp.workspace.root, pending=[Message.user_text(inp.prompt)])
        hooks = LoopHooks(
            stop_requested=lambda: self._stop is not None,
            on_phase=self._on_phase,
            record=self._messages.extend,
            started_at=lambda: int((workflow.now() - started).total_seconds() * 1000),
        )
        end = await run_agent_loop(setup, self._state, hooks)
        self._phase = "finished"
        return AgentResult(
            status="completed",
            agent_id=self._agent_id,
            agent_type=definition.agent_type,
            final_text=self._state.last_text,
            usage=self._state.usage.model_copy(update={"duration_ms": hooks.started_at()}),
            turns=self._state.turns,
            max_turns_reached=end == "max_turns",
            stopped=end == "stopped",
            transcript=self._state.transcript,
        )

    async def _definition(self, inp: AgentInput) -> AgentDefinition:
        if inp.definition is not None:
            return inp.definition
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
        for error in loaded.errors:
            workflow.logger.warning("agent definition skipped: %s", error)
        found = loaded.get(inp.agent_type)
        if found is None:
            raise AgentTypeNotFound(not_found_message(inp.agent_type, loaded.names()))
        return found

    async def _setup(self, inp: AgentInput, definition: AgentDefinition) -> LoopSetup:
        tools = (
            inp.tools
            if inp.tools is not None
            else resolve_agent_tools(definition, list(TOOLS)).tools
        )
        unknown = [t for t in tools if t not in TOOLS]
        if unknown:
            raise InvalidAgentInput(f"Unknown tools requested: {', '.join(unknown)}")
        self._agent_type = definition.agent_type
        self._model = inp.config.resolve_model(inp.model or definition.model)
        rendered: RenderedContext = await workflow.execute_activity(
            render_context,
            RenderContextInput(
                system_prompt=definition.system_prompt,
                tool_names=tools,
                workspace_root=inp.workspace.root,
                cwd=inp.workspace.root,
                include_claude_md=not definition.omit_claude_md,
                include_git_status=not definition.omit_claude_md,
                critical_system_reminder=definition.critical_system_reminder,
            ),
            task_queue=inp.workspace.host_queue,
            **SETUP_OPTIONS,
        )
        return LoopSetup(
            request=ModelRequest(
                model=self._model,
                max_tokens=inp.config.model.max_tokens,
                system_ref=rendered.system_ref,
                tools_ref=rendered.tools_ref,
                agent=AgentTag(
                    agent_id=self._agent_id, agent_type=definition.agent_type, name=inp.name or ""
                ),
            ),
            tools=tools,
            workspace=inp.workspace,
            agent_id=self._agent_id,
            sandbox="read_only" if is_read_only(tools, definition.permission_mode) else "none",
            max_turns=min(
                inp.max_turns or definition.max_turns or inp.config.agents.hard_max_turns,
                inp.config.agents.hard_max_turns,
            ),
            config=inp.config,
        )

    def _on_phase(self, phase: str, tools: list[str]) -> None:
        self._phase = phase
        self._current_tools = tools
        doing = f"running {', '.join(tools)}" if tools else phase.replace("_", " ")
        workflow.set_current_details(
            f"**{self._agent_type}** `{self._agent_id}` - turn {self._state.turns + 1}: {doing}"
        )

    @workflow.signal(name="stop")
    def stop(self, request: StopRequest | None = None) -> None:
        """End after the current turn: the model is not called again."""
        self._stop = request or StopRequest()

    @workflow.query(name="status")
    def status(self) -> AgentStatus:
        return AgentStatus(
            agent_id=self._agent_id,
            agent_type=self._agent_type,
            model=self._model,
            state=self._phase,  # type: ignore[arg-type]
            turn=self._state.turns,
            usage=self._state.usage,
            current_tools=self._current_tools,
            stop_requested=self._stop is not None,
            last_text=self._state.last_text,
        )

    @workflow.query(name="transcript")
    def transcript(self) -> TranscriptView:
        return TranscriptView(
            transcript=self._state.transcript, base=self._base, messages=self._messages
        )
