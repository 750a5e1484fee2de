"""The input of an ended agent's next run, and who is not the CLI's to resume."""

from __future__ import annotations

from dataclasses import replace

from agents.transcript import TranscriptRef
from outlast.resume import Ended, refusal_for_input, resume_input
from workflows.contracts import AgentInput, Lineage, ParentLink, TeamLink, Workspace

WS = Workspace(root="/src/p", host_queue="outlast-host-h")
REF = TranscriptRef(head="abc", length=4)


def ended(**inp: object) -> Ended:
    started = AgentInput(prompt="Fix it.", workspace=WS, **inp)
    return Ended(inp=started, task_queue="outlast", transcript=REF, agent_id="a1", run_generation=1)


def test_the_next_run_goes_on_from_the_conversation_one_generation_on():
    nxt = resume_input(ended(carry={"state": {}}, background=True, attributes_at_start=True))
    assert nxt.prompt == "" and nxt.resume_from == REF and nxt.run_generation == 2
    # A continued run's carry is that chain's: the new run starts from the conversation.
    assert nxt.carry is None and not nxt.background and not nxt.attributes_at_start
    assert nxt.lineage.agent_id == "a1"
    assert nxt.workspace == WS and nxt.agent_type == "general-purpose"


def test_it_goes_on_in_the_mode_it_ended_in_with_its_plan_file_and_read_files():
    e = replace(
        ended(permission_mode="plan"),
        permission_mode="acceptEdits",
        plan_file="/p.md",
        read_state_ref="blob1",
    )
    nxt = resume_input(e)
    assert nxt.permission_mode == "acceptEdits" and nxt.plan_file == "/p.md"
    assert nxt.read_state_ref == "blob1" and nxt.read_file_state == {}
    # Ended without a mode of its own (killed): the one it was started in.
    assert resume_input(ended(permission_mode="plan")).permission_mode == "plan"


def test_an_agent_id_the_input_already_has_is_kept():
    nxt = resume_input(ended(lineage=Lineage(agent_id="given", chain_id="c")))
    assert nxt.lineage.agent_id == "given" and nxt.lineage.chain_id == "c"


def test_sub_agents_and_teammates_are_their_parents_to_resume():
    sub = AgentInput(prompt="x", workspace=WS, parent=ParentLink(workflow_id="top-1", agent_id="p"))
    assert refusal_for_input("w", sub) == (
        "w is a sub-agent of top-1: its parent resumes it with SendMessage"
    )
    child = AgentInput(prompt="x", workspace=WS, lineage=Lineage(parent_workflow_id="top-2"))
    assert "sub-agent of top-2" in refusal_for_input("w", child)
    team = TeamLink(workflow_id="t", team_name="crew", members=["lead", "b"])
    member = AgentInput(prompt="x", workspace=WS, team=team)
    assert refusal_for_input("t/b", member).startswith("t/b is a member of the team crew")
    assert refusal_for_input("w", AgentInput(prompt="x", workspace=WS)) is None
