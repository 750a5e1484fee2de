"""A workflow input's unknown fields are kept by name, never sent on, and refused in one
sentence (workflows/client_input.py)."""

import pytest

from workflows.client_input import check_update_fields, refusal, wait_for_a_newer_worker
from workflows.contracts import AgentInput
from workflows.pattern_contracts import PipelineInput, StageDecision, TeamInput

WORKSPACE = {"root": "/repo", "host_queue": "host-1"}


def test_unknown_fields_are_kept_by_name_and_not_sent_on():
    inp = AgentInput.model_validate(
        {"prompt": "go", "workspace": WORKSPACE, "max_turn": 5, "backgruond": True}
    )
    assert inp.unknown_input_fields == ["backgruond", "max_turn"]
    assert inp.max_turns is None and inp.background is False
    dumped = inp.model_dump()
    assert "unknown_input_fields" not in dumped and "max_turn" not in dumped
    # What is sent on (a child's input, continue-as-new) decodes without them.
    assert AgentInput.model_validate(dumped).unknown_input_fields == []


def test_the_refusal_names_the_unknown_and_the_known_fields():
    inp = PipelineInput.model_validate({"task": "t", "workspace": WORKSPACE, "stagse": ["x"]})
    text = refusal("PipelineWorkflow input", inp)
    assert text is not None
    assert text.startswith(
        "PipelineWorkflow input refused: unknown field stagse (did you mean stages?) (misspelt"
    )
    assert "its fields are task, workspace," in text and "stages" in text
    assert "unknown_input_fields" not in text
    two = AgentInput.model_validate({"prompt": "", "workspace": WORKSPACE, "zq": 1, "max_turn": 2})
    text = refusal("AgentWorkflow input", two) or ""
    assert "unknown fields max_turn (did you mean max_turns?), zq (misspelt" in text


def test_an_input_without_unknown_fields_has_nothing_to_refuse():
    built = AgentInput(prompt="go", workspace=WORKSPACE)  # type: ignore[arg-type]
    assert refusal("AgentWorkflow input", built) is None
    assert built.unknown_input_fields == []


def test_an_unknown_field_left_empty_is_dropped_as_before():
    """What a client of a later release sends for a field it added and left at its default
    (null, false, [], ...) asks for nothing, and is no typo worth refusing a run for."""
    given = {"prompt": "go", "workspace": WORKSPACE, "new_flag": False, "new_list": []}
    inp = AgentInput.model_validate({**given, "new_ref": None, "new_text": "", "n": 0})
    assert inp.unknown_input_fields == ["n"]  # 0 is a value
    assert AgentInput.model_validate(given).unknown_input_fields == []


def test_the_field_that_keeps_the_names_is_no_input_of_its_own():
    inp = AgentInput.model_validate(
        {"prompt": "go", "workspace": WORKSPACE, "unknown_input_fields": ["x"]}
    )
    assert inp.unknown_input_fields == ["unknown_input_fields"]


def test_an_update_with_an_unknown_field_is_refused_in_its_validator():
    """`"atempt": 1` dropped, a decision would land on whichever attempt waited."""
    decision = StageDecision.model_validate({"stage": "look", "approve": True, "atempt": 1})
    with pytest.raises(ValueError) as refused:
        check_update_fields("decide_stage", decision)
    assert str(refused.value).startswith(
        "update `decide_stage` refused: unknown field atempt (did you mean attempt?)"
    )
    check_update_fields("decide_stage", StageDecision(stage="look", approve=True))


def test_a_nested_input_s_unknown_field_is_named_by_its_path():
    """`plan_mode_requird` dropped, a teammate that must ask before changing anything would
    have changed things at once."""
    team = TeamInput.model_validate(
        {
            "team_name": "t",
            "workspace": WORKSPACE,
            "lead": {"name": "a", "prompt": "lead"},
            "teammates": [{"name": "b", "prompt": "help", "plan_mode_requird": True}],
        }
    )
    text = refusal("TeamWorkflow input", team) or ""
    assert text.startswith(
        "TeamWorkflow input refused: unknown field teammates[0].plan_mode_requird "
        "(did you mean plan_mode_required?) (misspelt"
    ), text
    # The member's fields, not the team's (a user test, 2026-12-07).
    assert text.endswith(
        "; teammates[0]'s fields are name, prompt, agent_type, model, plan_mode_required"
    ), text


def test_an_unknown_field_inside_the_workspace_is_refused_at_a_client_s_start():
    """The workspace is lenient: pydantic dropped `read_only` and the run had write access."""
    given = {"prompt": "go", "workspace": {**WORKSPACE, "read_only": True, "hostqueue": "h"}}
    inp = AgentInput.model_validate(given)
    assert inp.unknown_lenient_fields == [
        "workspace.read_only",
        "workspace.hostqueue (did you mean host_queue?)",
    ]
    text = refusal("AgentWorkflow input", inp) or ""
    assert text.startswith(
        "AgentWorkflow input refused: unknown fields workspace.read_only, "
        "workspace.hostqueue (did you mean host_queue?) (misspelt"
    ), text
    # One of Outlast's own inputs goes on without it: a newer release's, in a deploy.
    wait_for_a_newer_worker(inp)
    assert "read_only" not in str(inp.model_dump())
    team = TeamInput.model_validate(
        {
            "team_name": "t",
            "workspace": {**WORKSPACE, "rooot": "/x"},
            "lead": {"name": "a", "prompt": "lead"},
        }
    )
    assert "unknown field workspace.rooot (did you mean root?)" in (
        refusal("TeamWorkflow input", team) or ""
    )


def test_every_update_has_a_validator_that_refuses_one_sent_without_its_input():
    """An update handler called without its argument raises TypeError, which fails the
    workflow task (not the update): the workflow stands still. So every update of every
    workflow type has a validator, and its argument is optional for the validator to refuse
    it with a sentence (`require_update_input`)."""
    import inspect

    import pytest
    from temporalio.workflow import _Definition

    from worker import WORKFLOWS

    seen = []
    for cls in WORKFLOWS:
        for name, update in _Definition.from_class(cls).updates.items():
            seen.append(name)
            assert update.validator is not None, f"{cls.__name__}.{name} has no validator"
            params = list(inspect.signature(update.validator).parameters.values())[1:]
            assert all(p.default is None for p in params), f"{cls.__name__}.{name}: {params}"
            with pytest.raises(ValueError, match=rf"update `{name}` refused: it needs an input"):
                update.validator(object.__new__(cls))
    assert {"answer_question", "decide_stage", "task_create", "message_member"} <= set(seen)


def test_a_team_s_own_input_waits_for_a_newer_worker_only_for_its_strict_models():
    """A team's continue-as-new from a newer worker, in a deploy: a member's strict model
    with a field this worker does not know waits for a newer worker; a lenient one's (the
    workspace) goes on without it, as pydantic would have had it (a review, 2026-12-07)."""
    lenient = TeamInput.model_validate(
        {
            "team_name": "t",
            "workspace": {**WORKSPACE, "newer": "x"},
            "lead": {"name": "a", "prompt": "lead"},
        }
    )
    assert refusal("", lenient) is not None
    wait_for_a_newer_worker(lenient)
    strict = TeamInput.model_validate(
        {
            "team_name": "t",
            "workspace": WORKSPACE,
            "lead": {"name": "a", "prompt": "lead"},
            "tasks": [{"subject": "s", "description": "d", "newer": 1}],
        }
    )
    with pytest.raises(RuntimeError, match=r"tasks\[0\]\.newer"):
        wait_for_a_newer_worker(strict)
