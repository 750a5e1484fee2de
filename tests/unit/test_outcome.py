"""How an agent's run ended, as `ls`, the Web UI and the `status` query say it."""

from __future__ import annotations

import pytest

from workflows.agent_end import outcome_of
from workflows.contracts import AgentResult, AgentUsage


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"status": "completed"}, "completed"),
        # Its run completed, its task did not.
        ({"status": "completed", "stopped": True}, "stopped"),
        ({"status": "completed", "max_turns_reached": True}, "max_turns"),
        # A stop that came with the last turn's end: the person's word is what it says.
        ({"status": "completed", "stopped": True, "max_turns_reached": True}, "stopped"),
        ({"status": "killed", "stopped": True}, "killed"),
        ({"status": "failed", "max_turns_reached": True}, "failed"),
    ],
)
def test_an_end_reads_as_its_run_and_its_task_ended(fields, expected):
    result = AgentResult(
        agent_id="a1",
        agent_type="general-purpose",
        final_text="",
        usage=AgentUsage(),
        turns=1,
        **fields,
    )
    assert outcome_of(result) == expected
