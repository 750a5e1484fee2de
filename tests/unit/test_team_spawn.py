"""The lead's named Agent call as a new teammate (R69): what is refused, and why."""

from agents.agent_tool import AgentToolInput
from workflows.contracts import TeamLink
from workflows.pattern_contracts import AddMemberRequest, TeammateSpec
from workflows.team_spawn import (
    add_member_problem,
    leads,
    merged_names,
    spawn_problem,
    spawned_text,
    teammate_spec,
)

TEAM = TeamLink(workflow_id="team-t", team_name="t", members=["lead", "b"], lead="lead")


def call(**fields) -> AgentToolInput:
    return AgentToolInput(description="tester", prompt="Run the tests.", name="d", **fields)


def test_only_the_lead_leads():
    assert leads(TEAM, "lead")
    assert not leads(TEAM, "b") and not leads(TEAM, None) and not leads(None, "lead")
    assert not leads(TEAM.model_copy(update={"lead": ""}), "")


def test_the_call_must_fit_the_team_it_joins():
    assert spawn_problem(call(), TEAM) is None
    assert spawn_problem(call(team_name="t"), TEAM) is None
    assert spawn_problem(call(team_name="other"), TEAM) == (
        "You lead team 't', and a session has one team: leave out team_name (or give 't')."
    )
    assert "share the team's checkout" in (spawn_problem(call(isolation="worktree"), TEAM) or "")


def test_the_new_member_takes_the_call_s_fields():
    spec = teammate_spec(call(model="haiku", mode="plan"), "Explore")
    assert spec == TeammateSpec(
        name="d", prompt="Run the tests.", agent_type="Explore", model="haiku",
        plan_mode_required=True,
    )  # fmt: skip
    # A name an agent may have but a member may not: refused with the reason, not raised.
    refused = teammate_spec(call().model_copy(update={"name": "team"}), "general-purpose")
    assert isinstance(refused, str) and "must start with a letter or digit" in refused
    assert "plans first" in spawned_text(spec, "t", "team-t/d")
    assert "plans first" not in spawned_text(
        spec.model_copy(update={"plan_mode_required": False}), "t", "team-t/d"
    )


def test_the_team_refuses_what_it_cannot_add():
    def problem(caller="lead", name="d", names=("lead", "b"), live=2, limit=3, ending=False):
        spec = TeammateSpec(name=name, prompt="p")
        return add_member_problem(
            AddMemberRequest(spec=spec, caller=caller),
            lead="lead", names=list(names), live=live, limit=limit, ending=ending,
        )  # fmt: skip

    assert problem() is None
    assert problem(caller="b") == "Only the lead (lead) adds teammates; ask it with SendMessage."
    assert problem(ending=True) == "The team is ending: nobody new joins it."
    assert "reads as the user's own words" in (problem(name="user") or "")
    assert "reads as the user's own words" in (problem(name="parent") or "")
    # A member that has ended keeps its name: its workflow id is taken.
    assert "already has a member named 'b'" in (problem(name="b", live=1) or "")
    assert problem(live=3) == (
        "The team has 3 members running, the most it runs at once (agents.max_concurrent = 3): "
        "wait for one to end, or give the work to a teammate you have."
    )


def test_a_member_told_of_a_newcomer_keeps_every_name_it_knew():
    # Two adds' lists may arrive in either order: the later one must not drop a name.
    assert merged_names(["a", "b", "d"], ["a", "b", "e"]) == ["a", "b", "d", "e"]
    assert merged_names(["a", "b", "d", "e"], ["a", "b", "d"]) == ["a", "b", "d", "e"]
