"""How an agent that ended goes on in a new run of its id: from the conversation it ended
with, one generation on (R66). A parent's SendMessage builds the next run's input from its
own record of the sub-agent (`workflows/agent_control.py`); a person's `outlast resume` reads
it from the ended run's history (`outlast/resume.py`) and hands it to the run as this."""

from __future__ import annotations

from temporalio import workflow

from agents.transcript import TranscriptRef
from workflows import versions
from workflows.contracts import AgentInput, AgentResult, Contract
from workflows.search_attributes import WAITS_MARKED

# The activity's type, one copy outside the sandbox (as every activity reference here).
with workflow.unsafe.imports_passed_through():
    from activities.run_history import RunEnd


class Resumed(Contract):
    """The ended run's end, as the next run starts from it."""

    transcript: TranscriptRef
    run_generation: int = 1
    """The ended run's generation."""
    agent_id: str = ""
    """The agent's id, kept by the next run (one started by a client had it made up)."""
    permission_mode: str | None = None
    """The mode it ended in (after an approved plan, the one it went on in); None: the one
    it was started in."""
    plan_file: str | None = None
    read_state_ref: str | None = None
    """The files it had read (a blob of stamps): it may edit them without reading again."""

    def applied_to(self, inp: AgentInput) -> AgentInput:
        """`inp`, the agent as it was started, going on from here. The message that resumes
        it comes as mail (the start's signal)."""
        lineage = inp.lineage
        if not lineage.agent_id and self.agent_id:
            lineage = lineage.model_copy(update={"agent_id": self.agent_id})
        return inp.model_copy(
            update={
                "prompt": "",
                "resume_from": self.transcript,
                "run_generation": self.run_generation + 1,
                "lineage": lineage,
                "carry": None,
                "background": False,
                "attributes_at_start": False,
                "permission_mode": self.permission_mode or inp.permission_mode,
                "plan_file": self.plan_file or inp.plan_file,
                "read_file_state": {},
                "read_state_ref": self.read_state_ref,
            }
        )


def resumed_from(end: RunEnd, agent: AgentInput) -> Resumed:
    """Where the closed run of `agent` (its start input) that left `end` ended, as the next
    run starts from it: a completed run's result says; a killed, terminated, failed or
    timed-out run's conversation is as its last model call left it, its plan file the one
    it prepared, and its mode its `PermissionMode` attribute where the run kept it (patched
    `waits-marked`: plan mode, an approved plan's mode), else the mode a continue-as-new
    carried, else the one it was started (or resumed) in. A conversation with no head: it
    ended before its first model call answered."""
    agent_id = end.agent_id or agent.lineage.agent_id
    if end.result is not None:
        result = AgentResult.model_validate(end.result)
        return Resumed(
            transcript=result.transcript,
            run_generation=result.run_generation,
            agent_id=result.agent_id or agent_id,
            permission_mode=result.permission_mode,
            plan_file=result.plan_file,
            read_state_ref=result.read_state_ref,
        )
    # Here only: its module imports the agent loop's, which `outlast ls` need not wait for.
    from workflows.carry import AgentCarry

    carry = AgentCarry.model_validate(agent.carry) if agent.carry else None
    transcript, plan_file = end.transcript, end.plan_file
    if carry is not None:  # a run that continued as new: what the chain had till then
        transcript = transcript or carry.state.transcript
        plan_file = plan_file or carry.state.plan_file
    # A run of an earlier release kept its start value in the attribute (and a killed run
    # resumed after an approved plan went back to `default`).
    shown = end.permission_mode if versions.took(end.patches, WAITS_MARKED) else None
    carried = carry.state.mode if carry else ""
    return Resumed(
        transcript=transcript or agent.resume_from or TranscriptRef(),
        run_generation=agent.run_generation,
        agent_id=agent_id,
        permission_mode=shown or (carried or agent.permission_mode) or None,
        plan_file=plan_file or agent.plan_file,
    )
