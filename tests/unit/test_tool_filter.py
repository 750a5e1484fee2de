"""The four filter layers (spec R30-R33) and the read-only rule."""

from agents.definition import AgentDefinition
from agents.tool_filter import (
    ASYNC_AGENT_ALLOWED_TOOLS,
    filter_tools_for_agent,
    is_read_only,
    resolve_agent_tools,
)

POOL = [
    "Agent",
    "Bash",
    "Glob",
    "Grep",
    "Read",
    "Edit",
    "Write",
    "NotebookEdit",
    "TaskOutput",
    "ExitPlanMode",
    "EnterPlanMode",
    "AskUserQuestion",
    "TaskStop",
    "SendMessage",
    "LSP",
    "mcp__github__create_issue",
]


def definition(**kw) -> AgentDefinition:
    return AgentDefinition(agent_type="x", when_to_use="y", **kw)


def test_layer1_removes_meta_tools_for_every_subagent():
    kept = filter_tools_for_agent(POOL, is_built_in=True, is_async=False, permission_mode=None)
    for meta in (
        "Agent",
        "TaskOutput",
        "ExitPlanMode",
        "EnterPlanMode",
        "AskUserQuestion",
        "TaskStop",
    ):
        assert meta not in kept
    assert "LSP" in kept and "NotebookEdit" in kept and "mcp__github__create_issue" in kept


def test_exceptions_come_first():
    plan = filter_tools_for_agent(POOL, is_built_in=True, is_async=True, permission_mode="plan")
    assert "ExitPlanMode" in plan
    nested = filter_tools_for_agent(
        POOL, is_built_in=True, is_async=False, permission_mode=None, allow_nested_agents=True
    )
    assert "Agent" in nested
    teammate = filter_tools_for_agent(
        POOL, is_built_in=False, is_async=True, permission_mode=None, is_in_process_teammate=True
    )
    assert "Agent" in teammate and "SendMessage" in teammate


def test_async_custom_agent_keeps_only_whitelist_and_mcp():
    kept = filter_tools_for_agent(POOL, is_built_in=False, is_async=True, permission_mode=None)
    assert all(t in ASYNC_AGENT_ALLOWED_TOOLS or t.startswith("mcp__") for t in kept)
    assert "LSP" not in kept and "SendMessage" not in kept and "Read" in kept


def test_layer4_allow_then_deny():
    d = definition(tools=["Read", "Edit"], disallowed_tools=["Edit"])
    assert resolve_agent_tools(d, POOL).tools == ["Read"]
    assert resolve_agent_tools(definition(), ["Read", "Bash"]).tools == ["Read", "Bash"]
    spawn = resolve_agent_tools(definition(tools=["Read", "Agent(Explore, Plan)"]), POOL)
    assert spawn.tools == ["Agent", "Read"] and spawn.allowed_agent_types == ["Explore", "Plan"]
    assert "Agent" not in resolve_agent_tools(definition(disallowed_tools=["Task"]), POOL).tools


def test_read_only():
    assert is_read_only(["Read", "Grep", "Bash"])
    assert not is_read_only(["Read", "Edit", "Bash"])
    assert is_read_only(["Read", "Edit", "Bash"], permission_mode="plan")
