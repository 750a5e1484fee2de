"""What `outlast show` adds to a workflow task that fails on every attempt."""

from __future__ import annotations

import pytest

from outlast.patterns import WORKFLOW_TYPES
from outlast.retries import task_failure_hint
from worker import WORKFLOWS


def _too_many_inputs(cls: type, inputs: int) -> str:
    """The TypeError the SDK's task fails with when a start gives `cls` more inputs than one:
    its init's, or, for a workflow without one, its run's."""
    args = [{"prompt": "go"}] * inputs
    # As the SDK tells them apart (temporalio.worker._workflow_instance).
    if hasattr(cls.__init__, "__temporal_workflow_init"):
        with pytest.raises(TypeError) as raised:
            cls(*args)
    else:
        workflow = cls()
        with pytest.raises(TypeError) as raised:
            workflow.run(*args)
    return str(raised.value)


@pytest.mark.parametrize("cls", WORKFLOWS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("inputs", [2, 3])
def test_a_start_with_more_than_one_input_is_named_with_what_to_do(cls, inputs):
    message = _too_many_inputs(cls, inputs)
    hint = task_failure_hint(
        "WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE", message
    )
    assert hint == (
        f"it was started with {inputs} inputs, and takes one JSON object: terminate it and "
        "start it again with one --input"
    ), message


def test_other_failures_get_no_hint_but_the_namespace_one():
    cause = "WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE"
    assert task_failure_hint(cause, "Nondeterminism error: ...") is None
    assert task_failure_hint(cause, "") is None
    assert "outlast setup" in task_failure_hint(
        "WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES", "BadSearchAttributes"
    )


def test_a_type_no_worker_has_is_named_with_the_one_meant_and_outlast_s():
    cause = "WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE"
    message = "Workflow class FooWorkflow is not registered on this worker, available ..."
    hint = task_failure_hint(cause, message)
    # Nothing close enough: no guess (ForkJoinWorkflow is not what FooWorkflow meant).
    assert hint is not None and hint.startswith("no worker has a workflow type FooWorkflow: "), hint
    assert "did you mean" not in hint, hint
    assert all(kind in hint for kind in WORKFLOW_TYPES.values()), hint
    message = message.replace("FooWorkflow", "teamWorkflow")
    assert "did you mean TeamWorkflow? " in task_failure_hint(cause, message)
