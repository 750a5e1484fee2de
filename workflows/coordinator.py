"""`CoordinatorWorkflow`: coordinator mode (R55-R63) as a workflow type of its own.

The coordinator is an agent like any other, run by the same loop; what makes it one is its
input's `mode`: its prompt and three tools, workers that always run in the background, and
the phase rules its `Agent` tool enforces (workflows/phases.py). This type exists so a
client can start a coordinated task by name with a small JSON input.
"""

from __future__ import annotations

from temporalio import workflow

from agents.builtin.coordinator import DEFINITION as COORDINATOR
from workflows import versions
from workflows.agent import AgentWorkflow
from workflows.client_input import given_input, refuse_unknown_fields
from workflows.contracts import AgentInput, AgentResult, Workspace
from workflows.pattern_contracts import CoordinatorInput

with workflow.unsafe.imports_passed_through():
    from activities.errors import InvalidAgentInput


CLIENT_AGENT = "coordinator-client-agent-refused"
"""Patch: a client's start with `agent` set is refused; it ran that agent, whatever it was
(not a coordinator), and past the checks of a client's start."""
CLIENT_AGENT_REFUSED = (
    "CoordinatorWorkflow input refused: `agent` is set only by a coordinator's own "
    "continue-as-new; give the coordinator's task in `task` (to start any other agent, "
    "start an AgentWorkflow)"
)


NO_INPUT = CoordinatorInput(task="(none)", workspace=Workspace(root="/", host_queue="(none)"))
"""What a run started without an input holds until `run` refuses it."""


def coordinator_agent_input(inp: CoordinatorInput) -> AgentInput:
    if inp.agent is not None:
        return inp.agent
    features = inp.config.features.model_copy(
        update={"coordinator_mode": True, "fork_subagent": False}
    )
    agent = AgentInput(
        prompt=inp.task,
        workspace=inp.workspace,
        agent_type=COORDINATOR.agent_type,
        mode="coordinator",
        model=inp.model,
        config=inp.config.model_copy(update={"features": features}),
        max_turns=inp.max_turns,
        mcp_servers=inp.mcp_servers,
        session_definitions=inp.session_definitions,
        description=inp.description,
    )
    return agent if inp.resumed is None else inp.resumed.applied_to(agent)


def _not_its_own(agent: AgentInput) -> bool:
    """Whether `agent` came from a client, not the coordinator's own continue-as-new: a run no
    continue-as-new made, or an agent without the carry every continue-as-new hands on. A
    cron's later runs have a `continued_run_id` too, with the client's input: the first
    refused, they ran its agent (a review, 2026-12-05)."""
    return workflow.info().continued_run_id is None or not agent.carry


@workflow.defn(name="CoordinatorWorkflow")
class CoordinatorWorkflow(AgentWorkflow):
    @workflow.init
    def __init__(self, inp: CoordinatorInput | None = None) -> None:
        inp = NO_INPUT if inp is None else inp  # `run` refuses a start without one
        self._coordinator_input = inp.model_copy(update={"agent": None})
        super().__init__(coordinator_agent_input(inp))

    @workflow.run
    async def run(self, inp: CoordinatorInput | None = None) -> AgentResult:  # type: ignore[override]
        inp = given_input("CoordinatorWorkflow", inp, CoordinatorInput)
        if inp.agent is None:  # a client's start, not the coordinator's continue-as-new
            refuse_unknown_fields("CoordinatorWorkflow", inp)
        elif _not_its_own(inp.agent) and versions.patched(CLIENT_AGENT):
            # Asked only for such a start, so no other run records the marker.
            raise InvalidAgentInput(CLIENT_AGENT_REFUSED)
        return await super().run(coordinator_agent_input(inp))

    def _next_run_input(self, inp: AgentInput) -> object:
        return self._coordinator_input.model_copy(update={"agent": inp})
