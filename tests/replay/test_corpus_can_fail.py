"""The replay corpus is a real guard: a workflow change that moves commands makes the committed
histories fail to replay, and the same change behind `workflow.patched()` replays them cleanly.
Without this, a corpus that never exercised the changed path would pass whatever we did."""

from __future__ import annotations

import inspect
import json
import typing
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner

from outlast.client import data_converter
from tests.replay.record import intercepted
from worker import WORKFLOWS
from workflows.agent import AgentWorkflow
from workflows.contracts import AgentInput, AgentResult

HISTORY_DIR = Path(__file__).parent / "histories"
AGENT_HISTORIES = sorted(
    p
    for p in HISTORY_DIR.glob("*.json")
    if json.loads(p.read_text())["events"][0]["workflowExecutionStartedEventAttributes"][
        "workflowType"
    ]["name"]
    == "AgentWorkflow"
)


@workflow.defn(name="AgentWorkflow")
class UnpatchedChange(AgentWorkflow):
    """Today's agent with one timer put ahead of everything it used to do first: to replay,
    that is what any reordering of its commands looks like."""

    @workflow.run
    async def run(self, inp: AgentInput | None = None) -> AgentResult:
        await workflow.sleep(0.01)
        return await super().run(inp)


@workflow.defn(name="AgentWorkflow")
class PatchedChange(AgentWorkflow):
    """The same change, as it must be shipped: new runs take it, recorded runs do not."""

    @workflow.run
    async def run(self, inp: AgentInput | None = None) -> AgentResult:
        if workflow.patched("test-timer-first"):
            await workflow.sleep(0.01)
        return await super().run(inp)


def workflow_type(path: Path) -> str:
    first = json.loads(path.read_text())["events"][0]
    return first["workflowExecutionStartedEventAttributes"]["workflowType"]["name"]


BY_NAME = {w.__temporal_workflow_definition.name: w for w in WORKFLOWS}
OTHER_HISTORIES = sorted(
    p for p in HISTORY_DIR.glob("*.json") if workflow_type(p) != "AgentWorkflow"
)


def variant(name: str, patched: bool) -> type:
    """`name`'s workflow with the same timer first, unpatched or behind `workflow.patched()`;
    built for each type, since each run method takes its own input type."""
    base = BY_NAME[name]
    base_run = base.__temporal_workflow_definition.run_fn

    async def run(self, inp):
        if not patched or workflow.patched("test-timer-first"):
            await workflow.sleep(0.01)
        return await base_run(self, inp)

    # The converter decodes the input by the run method's hints: give it the real classes.
    run.__annotations__ = typing.get_type_hints(base_run)
    run.__signature__ = inspect.signature(base_run)  # @workflow.init's must match it by name
    cls_name = f"{base.__name__}Changed{'Patched' if patched else ''}"
    run.__qualname__ = f"{cls_name}.run"  # the SDK refuses what looks like a local class
    cls = type(cls_name, (base,), {"run": workflow.run(run)})
    return workflow.defn(name=name)(cls)


async def replay(variant: type, path: Path):
    name = variant.__temporal_workflow_definition.name
    others = [w for w in WORKFLOWS if w.__temporal_workflow_definition.name != name]
    workflow_id = path.stem.split("@")[0].replace("__", "/")
    replayer = Replayer(
        workflows=[variant, *others],
        data_converter=await data_converter(),
        workflow_runner=UnsandboxedWorkflowRunner(),
        interceptors=intercepted(workflow_id.split("/")[0]),
    )
    history = WorkflowHistory.from_json(workflow_id, path.read_text())
    return await replayer.replay_workflow(history, raise_on_replay_failure=False)


def test_the_corpus_has_agent_histories():
    assert len(AGENT_HISTORIES) >= 10


@pytest.mark.parametrize("path", AGENT_HISTORIES, ids=[p.stem for p in AGENT_HISTORIES])
async def test_an_unpatched_change_fails_and_the_patched_one_replays(path: Path):
    failed = await replay(UnpatchedChange, path)
    assert failed.replay_failure is not None, f"{path.name} replayed a reordered workflow"
    assert "nondetermin" in str(failed.replay_failure).lower(), failed.replay_failure
    patched = await replay(PatchedChange, path)
    assert patched.replay_failure is None, patched.replay_failure


def test_every_workflow_type_is_in_the_proof():
    assert {workflow_type(p) for p in OTHER_HISTORIES} | {"AgentWorkflow"} == set(BY_NAME)


@pytest.mark.parametrize("path", OTHER_HISTORIES, ids=[p.stem for p in OTHER_HISTORIES])
async def test_the_same_proof_for_every_other_workflow_type(path: Path):
    name = workflow_type(path)
    failed = await replay(variant(name, patched=False), path)
    assert failed.replay_failure is not None, f"{path.name} replayed a reordered {name}"
    assert "nondetermin" in str(failed.replay_failure).lower(), failed.replay_failure
    patched = await replay(variant(name, patched=True), path)
    assert patched.replay_failure is None, patched.replay_failure
