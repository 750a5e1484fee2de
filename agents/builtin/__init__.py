"""Built-in agent definitions, one module each."""

from agents.builtin import explore, fork, general_purpose, plan
from agents.config import OutlastConfig
from agents.definition import AgentDefinition


def builtin_definitions(config: OutlastConfig) -> list[AgentDefinition]:
    """The built-ins as this configuration sees them (Explore's model is configurable, R8)."""
    found = [
        general_purpose.DEFINITION,
        explore.DEFINITION.model_copy(update={"model": config.agents.explore_model}),
        plan.DEFINITION,
    ]
    if config.features.fork_subagent and not config.features.coordinator_mode:
        found.append(fork.DEFINITION)  # R45: forking and coordinator mode exclude each other
    return found
