"""Built-in agent definitions, one module each."""

from agents.builtin import coordinator, explore, fork, general_purpose, plan, verification
from agents.config import OutlastConfig
from agents.definition import AgentDefinition


def builtin_definitions(config: OutlastConfig) -> list[AgentDefinition]:
    """The built-ins as this configuration sees them (Explore's model is configurable, R8)."""
    found = [
        general_purpose.DEFINITION,
        explore.DEFINITION.model_copy(update={"model": config.agents.explore_model}),
        plan.DEFINITION,
    ]
    if config.features.verification_agent:
        found.append(verification.DEFINITION)  # R10: behind its flag
    if config.features.coordinator_mode:
        found.append(worker_definition(config))  # R12: only coordinators spawn workers
    if config.features.fork_subagent and not config.features.coordinator_mode:
        found.append(fork.DEFINITION)  # R45: forking and coordinator mode exclude each other
    return found


def worker_definition(config: OutlastConfig) -> AgentDefinition:
    """R57: in simple mode a worker has exactly Bash, Read and Edit."""
    if config.agents.simple_worker_tools:
        return coordinator.WORKER_DEFINITION.model_copy(
            update={"tools": list(coordinator.SIMPLE_WORKER_TOOLS)}
        )
    return coordinator.WORKER_DEFINITION
