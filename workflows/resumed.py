"""How an agent that ended goes on in a new run of its id: from the conversation it ended
with, one generation on (R66). A parent's SendMessage builds the next run's input from its
own record of the sub-agent (`workflows/agent_control.py`); a person's `outlast resume` reads
it from the ended run's history (`outlast/resume.py`) and hands it to the run as this."""

from __future__ import annotations

from agents.transcript import TranscriptRef
from workflows.contracts import AgentInput, Contract


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
