"""The input of an ended agent's next run, and who is not the CLI's to resume."""

from __future__ import annotations

from agents.transcript import TranscriptRef
from outlast.resume import Ended, carried_line, refusal_for_input, resume_input
from outlast.stopped_with_it import stopped_note
from workflows.contracts import AgentInput, Lineage, ParentLink, TeamLink, Workspace
from workflows.coordinator import coordinator_agent_input
from workflows.pattern_contracts import CoordinatorInput
from workflows.resumed import Resumed

WS = Workspace(root="/src/p", host_queue="outlast-host-h")
REF = TranscriptRef(head="abc", length=4)


def ended(resumed: Resumed | None = None, **inp: object) -> Ended:
    started = AgentInput(prompt="Fix it.", workspace=WS, **inp)
    return Ended(
        workflow_type="AgentWorkflow",
        started=started,
        agent=started,
        task_queue="outlast",
        run_id="r1",
        resumed=resumed or Resumed(transcript=REF, agent_id="a1"),
    )


def test_the_next_run_goes_on_from_the_conversation_one_generation_on():
    nxt = resume_input(ended(carry={"state": {}}, background=True, attributes_at_start=True))
    assert nxt.prompt == "" and nxt.resume_from == REF and nxt.run_generation == 2
    # A continued run's carry is that chain's: the new run starts from the conversation.
    assert nxt.carry is None and not nxt.background and not nxt.attributes_at_start
    assert nxt.lineage.agent_id == "a1"
    assert nxt.workspace == WS and nxt.agent_type == "general-purpose"


def test_it_goes_on_in_the_mode_it_ended_in_with_its_plan_file_and_read_files():
    resumed = Resumed(
        transcript=REF,
        run_generation=2,
        permission_mode="acceptEdits",
        plan_file="/p.md",
        read_state_ref="blob1",
    )
    nxt = resume_input(ended(resumed, permission_mode="plan"))
    assert nxt.permission_mode == "acceptEdits" and nxt.plan_file == "/p.md"
    assert nxt.read_state_ref == "blob1" and nxt.read_file_state == {}
    assert nxt.run_generation == 3
    # Ended without a mode of its own (killed): the one it was started in.
    assert resume_input(ended(permission_mode="plan")).permission_mode == "plan"


def test_an_agent_id_the_input_already_has_is_kept():
    nxt = resume_input(ended(lineage=Lineage(agent_id="given", chain_id="c")))
    assert nxt.lineage.agent_id == "given" and nxt.lineage.chain_id == "c"


def test_a_coordinator_goes_on_through_its_own_input():
    """A coordinator's input makes its agent (and refuses one from a client): the new run
    gets the coordinator's input with `resumed`, and its agent is the resumed one."""
    started = CoordinatorInput(task="Fix it all.", workspace=WS)
    agent = coordinator_agent_input(started)
    continued = started.model_copy(update={"agent": agent.model_copy(update={"carry": {}})})
    e = Ended(
        workflow_type="CoordinatorWorkflow",
        started=continued,
        agent=agent,
        task_queue="outlast",
        run_id="r1",
        resumed=Resumed(transcript=REF, agent_id="c1"),
    )
    nxt = resume_input(e)
    assert isinstance(nxt, CoordinatorInput) and nxt.agent is None and nxt.task == "Fix it all."
    runs = coordinator_agent_input(nxt)
    assert runs.mode == "coordinator" and runs.agent_type == agent.agent_type
    assert runs.resume_from == REF and runs.prompt == "" and runs.run_generation == 2
    assert runs.lineage.agent_id == "c1"


def test_sub_agents_and_teammates_are_their_parents_to_resume():
    sub = AgentInput(prompt="x", workspace=WS, parent=ParentLink(workflow_id="top-1", agent_id="p"))
    assert refusal_for_input("w", sub) == (
        "w is a sub-agent of top-1: its parent resumes it with SendMessage"
    )
    child = AgentInput(prompt="x", workspace=WS, lineage=Lineage(parent_workflow_id="top-2"))
    assert "sub-agent of top-2" in refusal_for_input("w", child)
    team = TeamLink(workflow_id="t", team_name="crew", members=["lead", "b"])
    member = AgentInput(prompt="x", workspace=WS, team=team)
    assert refusal_for_input("t/b", member) == (
        "t/b is a member of team 'crew' (t), which steers it: `outlast send t --to b ...` "
        "messages it while both run; a member that has ended goes on no more (`outlast show "
        "t` has what each did, and a new `outlast run` starts the task over)"
    )
    assert refusal_for_input("w", AgentInput(prompt="x", workspace=WS)) is None
    # A fork-join has no SendMessage to resume its forks with (a user test, 2026-12-07).
    fork = AgentInput(
        prompt="x", workspace=WS, lineage=Lineage(parent_workflow_id="fj", pattern="fork-join")
    )
    said = refusal_for_input("fj/fork-2", fork)
    assert said.startswith("fj/fork-2 is a fork of fork-join fj, which goes on with none"), said


def test_the_line_about_unread_mail_is_a_whole_sentence():
    """It stopped at "it goes first in this run's" (a user test, 2026-12-07)."""
    mail = carried_line("extra message after stop")
    assert mail == (
        "the ended run had not read its message 'extra message after stop': it goes first in "
        "this run's message"
    )
    end = carried_line(
        "<task-notification><task-id>a</task-id><status>completed</status>"
        '<summary>Agent "look around" completed</summary></task-notification>'
    )
    assert end == (
        'the ended run had not read sub-agent a ("look around")\'s end: it goes first in this '
        "run's message"
    )


def test_the_note_of_stopped_sub_agents_does_not_say_the_ended_run_stopped_them():
    """A terminated run stopped none: the resume cancelled them (a user test, 2026-12-07)."""
    note = stopped_note(["helper"])
    assert "and they were stopped, so no notification of theirs will come: helper" in note
    assert "and stopped them" not in note
