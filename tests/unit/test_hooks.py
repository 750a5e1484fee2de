"""agents/hooks.py: which hooks run, and what their exit status and output mean (R100)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agents import hooks
from agents.config import OutlastConfig
from agents.hooks import HookMatcher, HookRun


def table(**events: list[tuple[str, str]]) -> hooks.HookTable:
    return {
        event: [HookMatcher(matcher=m, hooks=[{"command": c}]) for m, c in groups]
        for event, groups in events.items()
    }


def test_matchers_name_agent_types_as_claude_codes_do():
    t = table(SubagentStart=[("", "all"), ("*", "star"), ("Explore|Plan", "ro"), ("^Pl", "pl")])
    names = lambda agent_type: [  # noqa: E731
        c.command for c in hooks.commands_for(t, "SubagentStart", agent_type)
    ]
    assert names("Plan") == ["all", "star", "ro", "pl"]
    assert names("Planner") == ["all", "star", "pl"]  # a name list is exact names
    assert names("general-purpose") == ["all", "star"]
    assert hooks.commands_for(t, "SubagentStop", "Plan") == []
    assert hooks.matches("general-.*", "general-purpose")
    assert not hooks.matches("my(agent", "my(agent")  # no regex: matches nothing
    # ... and is refused where the hooks are given, rather than never firing unseen.
    with pytest.raises(ValidationError, match="matcher 'my\\(agent' is not a regular"):
        HookMatcher(matcher="my(agent", hooks=[{"command": "x"}])


def test_the_config_refuses_events_outlast_does_not_run():
    with pytest.raises(ValidationError, match="not PreToolUse"):
        OutlastConfig(hooks={"PreToolUse": [{"hooks": [{"command": "x"}]}]})
    with pytest.raises(ValidationError):
        OutlastConfig(hooks={"SubagentStop": [{"hooks": [{"command": ""}]}]})
    with pytest.raises(ValidationError):
        OutlastConfig(hooks={"SubagentStop": [{"hooks": [{"command": "x", "timeout": 0}]}]})
    cfg = OutlastConfig(hooks={"SubagentStop": [{"hooks": [{"command": "x"}]}]})
    assert cfg.hooks["SubagentStop"][0].hooks[0].timeout == hooks.DEFAULT_TIMEOUT_S
    assert OutlastConfig.model_validate_json(cfg.model_dump_json()) == cfg


def test_a_definitions_stop_is_its_subagent_stop_and_the_rest_is_reported():
    raw = {
        "Stop": [{"matcher": "ignored", "hooks": [{"type": "command", "command": "a"}]}],
        "SubagentStart": [{"hooks": [{"type": "command", "command": "b"}]}],
        "PreToolUse": [{"hooks": [{"type": "command", "command": "c"}]}],
        "SubagentStop": [
            {"hooks": [{"type": "prompt", "prompt": "?"}]},
            {"hooks": [{"command": "d"}]},
        ],
    }
    own, skipped = hooks.definition_hooks(raw)
    assert [c.command for c in hooks.commands_for(own, "SubagentStop", "any")] == ["a", "d"]
    assert [c.command for c in hooks.commands_for(own, "SubagentStart", "any")] == ["b"]
    assert [s.split(":")[0] for s in skipped] == ["PreToolUse", "SubagentStop[0]"]
    assert hooks.definition_hooks({"Stop": "x"})[1] == [
        "Stop: a list of {matcher, hooks} entries was expected"
    ]


def test_merged_keeps_every_tables_groups_in_order_and_a_command_runs_once():
    a = table(SubagentStop=[("", "1"), ("", "same")])
    b = table(SubagentStop=[("", "2"), ("", "same")])
    merged = hooks.merged(a, b)
    found = hooks.commands_for(merged, "SubagentStop", "x")
    assert [c.command for c in found] == ["1", "same", "2"]


def output(**fields) -> str:
    return json.dumps(fields)


def test_start_context_is_the_json_additional_context_of_a_successful_hook():
    ctx = output(hookSpecificOutput={"hookEventName": "SubagentStart", "additionalContext": "C"})
    assert hooks.start_context(HookRun(exit_code=0, stdout=ctx)) == "C"
    assert hooks.start_context(HookRun(exit_code=1, stdout=ctx)) is None
    assert hooks.start_context(HookRun(exit_code=0, stdout="plain text")) is None
    assert hooks.start_context(HookRun(exit_code=0, stdout="{broken")) is None
    assert hooks.start_context(HookRun(exit_code=0, stdout=output(hookSpecificOutput=3))) is None


def test_a_stop_is_blocked_by_exit_2_or_a_block_decision_only():
    assert hooks.stop_block(HookRun(exit_code=2, stderr=" why \n")) == "why"
    assert "exit status 2" in hooks.stop_block(HookRun(exit_code=2))
    blocking = output(decision="block", reason="R")
    assert hooks.stop_block(HookRun(exit_code=0, stdout=blocking)) == "R"
    assert hooks.stop_block(HookRun(exit_code=0, stdout=output(decision="block"))) is None
    blocked_but_done = output(decision="block", reason="R", **{"continue": False})
    assert hooks.stop_block(HookRun(exit_code=0, stdout=blocked_but_done)) is None
    assert hooks.stop_block(HookRun(exit_code=1, stderr="crash")) is None
    assert hooks.stop_block(HookRun(timed_out=True)) is None


def test_problems_are_named_for_the_log():
    assert hooks.problem(HookRun(exit_code=0)) is None
    assert hooks.problem(HookRun(exit_code=2)) is None
    assert hooks.problem(HookRun(timed_out=True)) == "timed out and was killed"
    assert hooks.problem(HookRun(exit_code=3, stderr="bad")) == "exit status 3: bad"
    assert hooks.problem(HookRun(error="gone")) == "gone"


def test_the_feedback_and_reminder_texts():
    assert hooks.stop_feedback(["a", "b"]) == "SubagentStop hook feedback:\n- a\n- b"
    assert hooks.start_reminder(["x"]) == "SubagentStart hook additional context: x"


def test_a_definitions_hooks_run_only_where_the_config_trusts_them():
    from agents.config import Features
    from agents.definition import AgentDefinition
    from workflows.subagent_hooks import hook_table

    own = {"Stop": [{"hooks": [{"type": "command", "command": "planted"}]}]}
    definition = AgentDefinition(agent_type="x", when_to_use="x", hooks=own)
    config = OutlastConfig(hooks={"SubagentStop": [{"hooks": [{"command": "mine"}]}]})
    untrusted = hooks.commands_for(hook_table(config, definition), "SubagentStop", "x")
    assert [c.command for c in untrusted] == ["mine"]
    trusting = config.model_copy(update={"features": Features(definition_hooks=True)})
    trusted = hooks.commands_for(hook_table(trusting, definition), "SubagentStop", "x")
    assert [c.command for c in trusted] == ["mine", "planted"]


def test_outlast_hooks_takes_json_or_a_file_of_it_and_refuses_what_it_cannot_run(tmp_path):
    from agents.config import ConfigError
    from outlast.runner import with_env_hooks

    settings = {"hooks": {"SubagentStop": [{"hooks": [{"command": "x"}]}]}, "model": "opus"}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    for value in (json.dumps(settings), str(path), json.dumps(settings["hooks"])):
        cfg = with_env_hooks(OutlastConfig(), value)
        assert [c.command for c in hooks.commands_for(cfg.hooks, "SubagentStop", "a")] == ["x"]
    assert with_env_hooks(OutlastConfig(), " ") == OutlastConfig()
    for bad, said in (
        ('{"PreToolUse": []}', "not PreToolUse"),
        ("{oops", "not JSON"),
        (str(tmp_path / "missing.json"), "cannot read it"),
        ('{"SubagentStop": [{"hooks": [{"command": ""}]}]}', "SubagentStop.0.hooks.0.command"),
        ("[]", "an object of events was expected"),
    ):
        with pytest.raises(ConfigError, match=said):
            with_env_hooks(OutlastConfig(), bad)
