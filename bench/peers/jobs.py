"""The configurations ("jobs") the driver runs, each in a fresh worker process per round.

family: outlast (Outlast's `python -m worker`, Outlast's venv), minimal (Outlast's venv),
pyd / oai (their own venvs). scenario: seq (one agent, N turns) or fan (F agents x T turns).
`args(n_or_f, t, path)` builds the workflow arguments of the peer workflows; Outlast's
inputs come from outlast_cfg. Names and labels follow shared/bench-peers where the job
exists there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from common import user_prompt


@dataclass(frozen=True)
class Job:
    label: str
    family: str
    scenario: str
    workflow: str = "AgentWorkflow"
    args: Any = None
    local_model: bool | Literal["auto"] = False
    """Outlast's `model.local_activity`; for a peer, its model as a local activity."""
    children: bool = False
    """Fan-out through child workflows: their histories are summed as well."""
    http_model: bool = False
    """The model is a real HTTP call to the scripted server (as Outlast's always is); the
    other rows answer from an in-process function, which costs them nothing."""


def _seq(local: bool, model: str):
    return lambda n, _t, path: [user_prompt(n, path), local, model]


def _fan_children(local: bool, model: str):
    """MinimalFanout's arguments: F child workflows of T turns each."""
    return lambda f, t, path: [f, t, path, local, model, "child"]


JOBS: dict[str, Job] = {
    # ---- one agent, N turns ----
    "o_outlast": Job(
        "Outlast AgentWorkflow (HTTP model, real Read)", "outlast", "seq", http_model=True
    ),
    "o2_outlast_local": Job(
        "(o2) Outlast AgentWorkflow, model.local_activity (HTTP model, real Read)",
        "outlast",
        "seq",
        local_model=True,
        http_model=True,
    ),
    "o3_outlast_auto": Job(
        "(o3) Outlast AgentWorkflow, model.local_activity auto (HTTP model, real Read)",
        "outlast",
        "seq",
        local_model="auto",
        http_model=True,
    ),
    "b_act": Job(
        "(b) minimal WF, regular activities",
        "minimal",
        "seq",
        "MinimalAgent",
        _seq(False, "scripted"),
    ),
    "b2_local": Job(
        "(b2) minimal WF, local activities",
        "minimal",
        "seq",
        "MinimalAgent",
        _seq(True, "scripted"),
    ),
    "b_http": Job(
        "(b-http) minimal WF, regular activities, HTTP model",
        "minimal",
        "seq",
        "MinimalAgent",
        _seq(False, "http"),
        http_model=True,
    ),
    "c_pyd": Job(
        "(c) pydantic-ai TemporalDurability",
        "pyd",
        "seq",
        "PydAgent",
        lambda n, _t, path: [user_prompt(n, path)],
    ),
    "c_pyd_http": Job(
        "(c-http) pydantic-ai TemporalDurability, AnthropicModel over HTTP",
        "pyd",
        "seq",
        "PydAgentHttp",
        lambda n, _t, path: [user_prompt(n, path)],
        http_model=True,
    ),
    "d_oai": Job(
        "(d) temporalio openai_agents plugin",
        "oai",
        "seq",
        "OAIAgent",
        lambda n, _t, path: [user_prompt(n, path)],
    ),
    "d2_oai_local": Job(
        "(d2) openai_agents plugin, model as local activity",
        "oai",
        "seq",
        "OAIAgent",
        lambda n, _t, path: [user_prompt(n, path)],
        local_model=True,
    ),
    "d_oai_http": Job(
        "(d-http) openai_agents plugin, Anthropic SDK model over HTTP",
        "oai",
        "seq",
        "OAIAgent",
        lambda n, _t, path: [user_prompt(n, path), "http"],
        http_model=True,
    ),
    # ---- fan-out: F agents x T turns from one parent ----
    "o_fan": Job(
        "Outlast parent, F parallel Agent calls (child AgentWorkflows)",
        "outlast",
        "fan",
        children=True,
    ),
    "o2_fan_local": Job(
        "(o2) Outlast parent, F parallel Agent calls, model.local_activity",
        "outlast",
        "fan",
        local_model=True,
        children=True,
    ),
    "o3_fan_auto": Job(
        "(o3) Outlast parent, F parallel Agent calls, model.local_activity auto",
        "outlast",
        "fan",
        local_model="auto",
        children=True,
    ),
    "b_fan_child": Job(
        "(b) child WFs, regular activities",
        "minimal",
        "fan",
        "MinimalFanout",
        _fan_children(False, "scripted"),
        children=True,
    ),
    "b2_fan_child": Job(
        "(b2) child WFs, local activities",
        "minimal",
        "fan",
        "MinimalFanout",
        _fan_children(True, "scripted"),
        children=True,
    ),
    "b_fan_http": Job(
        "(b-http) child WFs, regular activities, HTTP model",
        "minimal",
        "fan",
        "MinimalFanout",
        _fan_children(False, "http"),
        children=True,
        http_model=True,
    ),
    "c_fan_child": Job(
        "(c) child WFs (PydAgent)",
        "pyd",
        "fan",
        "PydFanout",
        lambda f, t, path: [f, t, path, "child"],
        children=True,
    ),
    "d_fan_child": Job(
        "(d) child WFs (OAIAgent)",
        "oai",
        "fan",
        "OAIFanout",
        lambda f, t, path: [f, t, path, "child"],
        children=True,
    ),
    "d_fan_tool": Job(
        "(d) one WF, orchestrator + agent.as_tool() x F",
        "oai",
        "fan",
        "OAIFanout",
        lambda f, t, path: [f, t, path, "tool"],
    ),
    "d_fan_tool_http": Job(
        "(d-http) one WF, orchestrator + agent.as_tool() x F, Anthropic SDK model over HTTP",
        "oai",
        "fan",
        "OAIFanout",
        lambda f, t, path: [f, t, path, "tool", "http"],
        http_model=True,
    ),
}
