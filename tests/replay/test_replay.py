"""Every committed history replays on today's workflow code without nondeterminism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from outlast.client import data_converter
from tests.replay.record import intercepted
from worker import WORKFLOWS, sandbox_runner

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))
# Each workflow type needs at least one committed history (design.md).
REQUIRED = {
    "AgentWorkflow",
    "ForkJoinWorkflow",
    "CoordinatorWorkflow",
    "PipelineWorkflow",
    "TeamWorkflow",
    "VerifiedTaskWorkflow",
    "ShellTaskWorkflow",
}


def workflow_type(path: Path) -> str:
    events = json.loads(path.read_text())["events"]
    return events[0]["workflowExecutionStartedEventAttributes"]["workflowType"]["name"]


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays(path: Path):
    # See record.py: the name encodes the id (`__` for `/`, `@runN` for a run of a chain).
    workflow_id = path.stem.split("@")[0].replace("__", "/")
    converter = await data_converter()
    replayer = Replayer(
        workflows=WORKFLOWS,
        data_converter=converter,
        workflow_runner=sandbox_runner(converter),
        interceptors=intercepted(workflow_id.split("/")[0]),
    )
    history = WorkflowHistory.from_json(workflow_id, path.read_text())
    result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


def test_every_workflow_type_has_a_history():
    recorded = {workflow_type(p) for p in HISTORIES}
    registered = {w.__temporal_workflow_definition.name for w in WORKFLOWS}
    assert REQUIRED <= registered
    assert registered <= recorded
