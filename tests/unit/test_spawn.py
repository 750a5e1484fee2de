"""Spawn decisions (R4, R13, R14, R18, R23) and transcript repair (R66)."""

import itertools

import pytest

from agents.agent_tool import agent_tool_description
from agents.builtin import builtin_definitions
from agents.config import AgentSettings, Features, OutlastConfig
from agents.definition import AgentDefinition, DefinitionSet
from agents.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agents.spawn import (
    FORK,
    child_permission_mode,
    definitions_for_child,
    depth_error,
    fork_enabled,
    new_agent_id,
    resolve_agent_type,
    resolve_child_model,
    should_run_async,
)
from agents.transcript_repair import for_the_api, repair_transcript
from workflows.agent_setup import agent_fields_hidden
from workflows.contracts import AgentInput, TeamLink, Workspace

DEFS = DefinitionSet(definitions=builtin_definitions(OutlastConfig()))


def d(**kw) -> AgentDefinition:
    return AgentDefinition(agent_type="x", when_to_use="y", **kw)


def test_type_resolution():
    assert resolve_agent_type(None, DEFS, OutlastConfig()).agent_type == "general-purpose"
    fork = OutlastConfig(features=Features(fork_subagent=True))
    assert resolve_agent_type(None, DEFS, fork) == FORK
    both = OutlastConfig(features=Features(fork_subagent=True, coordinator_mode=True))
    assert resolve_agent_type(None, DEFS, both) != FORK  # R45: exclusive with coordinator
    assert resolve_agent_type("Nope", DEFS, OutlastConfig()).startswith(
        "Agent type 'Nope' not found"
    )
    # A definition file that failed to load may be the one asked for: the error says so.
    skipped = DEFS.model_copy(update={"errors": [".claude/agents/nope.md: not valid YAML"]})
    assert resolve_agent_type("Nope", skipped, OutlastConfig()) == (
        "Agent type 'Nope' not found. Available agents: general-purpose, Explore, Plan. "
        "Agent definitions that could not be loaded: .claude/agents/nope.md: not valid YAML"
    )
    deny = OutlastConfig(agents=AgentSettings(deny_rules=["Agent(Explore)"]))
    assert "denied by permission rule 'Agent(Explore)'" in resolve_agent_type("Explore", DEFS, deny)
    assert "denied" in resolve_agent_type("Plan", DEFS, OutlastConfig(), allowed_types=["Explore"])


@pytest.mark.parametrize("bits", list(itertools.product([False, True], repeat=5)))
def test_async_decision_table(bits):
    run_bg, definition_bg, coordinator, fork, force = bits
    config = OutlastConfig(
        features=Features(coordinator_mode=coordinator, fork_subagent=fork),
        agents=AgentSettings(assistant_force_async=force),
    )
    expected = any(bits)
    assert should_run_async(run_bg, d(background=definition_bg), config) is expected
    disabled = config.model_copy(
        update={"agents": config.agents.model_copy(update={"background_tasks_disabled": True})}
    )
    assert should_run_async(run_bg, d(background=definition_bg), disabled) is False


def test_model_precedence():
    cfg = OutlastConfig()
    assert resolve_child_model("haiku", d(model="sonnet"), cfg, "parent-m") == "claude-haiku-5-5"
    assert resolve_child_model(None, d(model="sonnet"), cfg, "parent-m") == "claude-sonnet-5-5"
    assert resolve_child_model(None, d(model="inherit"), cfg, "parent-m") == "parent-m"
    assert resolve_child_model(None, d(), cfg, "parent-m") == "parent-m"
    sub = OutlastConfig(agents=AgentSettings(subagent_model="opus"))
    assert resolve_child_model(None, d(), sub, "parent-m") == "claude-opus-5-5"


def test_permission_mode_and_depth():
    assert child_permission_mode("acceptEdits", d(permission_mode="plan")) == "acceptEdits"
    assert child_permission_mode("default", d(permission_mode="plan")) == "plan"
    assert child_permission_mode("default", d()) == "acceptEdits"
    assert depth_error(0, OutlastConfig()) is None
    assert depth_error(1, OutlastConfig()) == "Agent nesting depth limit reached (max_depth=1)"
    nested = OutlastConfig(agents=AgentSettings(allow_nested_agents=True))
    assert depth_error(2, nested) is None and depth_error(3, nested) is not None


def test_agent_ids():
    assert new_agent_id(0xE9A65EE22594487C) == "ae9a65ee22594487c"
    assert new_agent_id(1) == "a0000000000000001"


def test_repair_drops_unresolved_tool_uses_and_empty_messages():
    use = ToolUseBlock(id="t1", name="Read", input={"file_path": "/a"})
    done = ToolUseBlock(id="t0", name="Glob", input={"pattern": "*"})
    messages = [
        Message.user_text("task"),
        Message(role="assistant", content=[TextBlock(text="look"), done]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t0", content="a.py")]),
        Message(role="assistant", content=[ThinkingBlock(thinking="hmm", signature="s")]),
        Message(role="assistant", content=[TextBlock(text="reading"), use]),
    ]
    fixed = repair_transcript(messages)
    assert [m.role for m in fixed] == ["user", "assistant", "user", "assistant"]
    assert fixed[-1].content == [TextBlock(text="reading")]
    assert fixed[1].content[1] == done
    only_tool = [Message.user_text("task"), Message(role="assistant", content=[use])]
    assert repair_transcript(only_tool) == [Message.user_text("task")]


def test_a_request_carries_no_empty_assistant_message_or_blank_text_block():
    use = ToolUseBlock(id="t1", name="Read", input={})
    messages = [
        Message.user_text("task"),
        Message(role="assistant", content=[]),
        Message.user_text("mail"),
        Message(role="assistant", content=[TextBlock(text=" "), use]),
        Message(role="assistant", content=[ThinkingBlock(thinking="hmm", signature="s")]),
        Message(role="assistant", content=[TextBlock(text="kept")]),
    ]
    sent = for_the_api(messages)
    assert [m.content for m in sent] == [
        messages[0].content,
        messages[2].content,
        [use],
        [TextBlock(text="kept")],
    ]
    assert sent[-1] is messages[-1]  # unchanged messages are not copied


def test_only_a_child_that_may_spawn_carries_the_definitions():
    assert definitions_for_child(["Agent", "Read"], DEFS) is DEFS
    assert definitions_for_child(None, DEFS) is DEFS  # all tools: Agent among them
    empty = definitions_for_child(["Read", "Bash"], DEFS)
    assert empty.definitions == [] and empty is not None  # None would load them again


def test_the_agent_fields_an_agent_is_not_offered():
    base = AgentInput(prompt="p", workspace=Workspace(root="/r", host_queue="h"))
    assert agent_fields_hidden(base) == []
    off = base.model_copy(
        update={"config": OutlastConfig(agents=AgentSettings(background_tasks_disabled=True))}
    )
    assert agent_fields_hidden(off) == ["run_in_background", "mode"]
    team = TeamLink(workflow_id="team-t", team_name="t", members=["a", "b"], lead="a")
    assert agent_fields_hidden(base.model_copy(update={"team": team, "name": "b"})) == [
        "run_in_background",
        "name",
        "mode",
    ]
    # The lead spawns teammates by name, and they may plan first (R69).
    lead = base.model_copy(update={"team": team, "name": "a"})
    assert agent_fields_hidden(lead) == ["run_in_background"]


def test_the_agent_tool_says_what_omitting_the_type_does():
    """R13: with forking on, omitting subagent_type forks, and the description says so (it
    said general-purpose is used, beside a fork entry saying the opposite)."""
    definitions = builtin_definitions(OutlastConfig(features=Features(fork_subagent=True)))
    forking = agent_tool_description(definitions, forking=True)
    assert "general-purpose is used" not in forking and "a fork of yourself" in forking
    assert "(a fork excepted)" in forking
    plain = agent_tool_description(definitions)
    assert "general-purpose is used" in plain and "a fork of yourself" not in plain
    assert "run_in_background" in plain
    assert "run_in_background" not in agent_tool_description(definitions, background=False)
    assert fork_enabled(OutlastConfig(features=Features(fork_subagent=True)))
    both = Features(fork_subagent=True, coordinator_mode=True)
    assert not fork_enabled(OutlastConfig(features=both))
