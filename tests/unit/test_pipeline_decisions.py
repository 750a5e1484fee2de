"""What a stage decision that ends a pipeline as rejected answers."""

from __future__ import annotations

from agents.pipeline import PipelineStage
from workflows.contracts import Workspace
from workflows.pattern_contracts import PipelineInput
from workflows.pipeline import MAX_ATTEMPTS, PipelineWorkflow, rejection


def test_a_plain_rejection_says_rejected() -> None:
    assert rejection(False, 1) == "rejected"


def test_a_rerun_past_the_limit_says_it_was_not_rerun_and_why() -> None:
    assert rejection(True, MAX_ATTEMPTS) == (
        f"rejected: not re-run, it ran {MAX_ATTEMPTS} times already (at most {MAX_ATTEMPTS})"
    )


def test_a_decision_is_refused_at_once_unless_its_stage_can_be_the_next_decided() -> None:
    """a, c wait for approval; b does not. A decision is held only for the stage that runs or
    waits, or one that only stages without approval come before."""
    stages = [
        PipelineStage(name=n, agent_type="Explore", instructions="x", approval=n in "ac")
        for n in "abcd"
    ]
    inp = PipelineInput(task="t", workspace=Workspace(root="/r", host_queue="q"), stages=stages)
    pipeline = PipelineWorkflow(inp)
    assert [pipeline._not_next(s) for s in "abcd"] == [None] * 4  # nothing runs yet
    pipeline._current = "a"
    assert pipeline._not_next("b") is not None and pipeline._not_next("c") is not None
    pipeline._current = "b"
    assert pipeline._not_next("a") == "stage a has run and been decided: the pipeline is at stage b"
    assert pipeline._not_next("c") is None  # b needs no approval: c is the next to wait
    assert pipeline._not_next("d") == (
        "stage d is not the next to decide: stage c waits for approval first"
    )
    pipeline._current, pipeline._awaiting = None, "c"
    assert pipeline._not_next("c") is None and pipeline._not_next("d") is not None


def test_a_rerun_prompt_carries_every_earlier_attempt_and_its_feedback():
    from agents.pipeline import DEFAULT_STAGES, stage_prompt

    stage = DEFAULT_STAGES[2]
    text = stage_prompt(stage, "the task", None, earlier=[("OUT-1", "fix a"), ("OUT-2", "")])
    assert '<attempt n="1">\n<output>\nOUT-1\n</output>\n<feedback>\nfix a\n</feedback>' in text
    assert '<attempt n="2">\n<output>\nOUT-2\n</output>\n<feedback>\n(none given)' in text
    assert "This stage ran 2 time(s) before" in text and "go on from it" in text
    # Without `earlier`: the feedback alone, as recorded runs had it.
    old = stage_prompt(stage, "the task", None, "fix a")
    assert old.endswith("Feedback from the reviewer on an earlier attempt:\nfix a")


def test_a_decision_on_a_stage_without_approval_waits_until_its_attempt_has_an_outcome() -> None:
    """Held while the stage's last attempt runs or its PASS is spot-checked (no outcome yet);
    refused once it has one and does not wait; never for an approval stage."""
    from workflows.pattern_contracts import StageOutcome

    stages = [
        PipelineStage(name=n, agent_type="Explore", instructions="x", approval=n == "a")
        for n in "ab"
    ]
    inp = PipelineInput(task="t", workspace=Workspace(root="/r", host_queue="q"), stages=stages)
    pipeline = PipelineWorkflow(inp)
    assert not pipeline._unfinished("b") and not pipeline._ran_without_waiting("b")
    pipeline._attempts_started["b"] = 1  # its agent runs, then its outcome is spot-checked
    assert pipeline._unfinished("b") and not pipeline._ran_without_waiting("b")
    done = StageOutcome(name="b", agent_type="Explore", workflow_id="w/b", status="completed")
    pipeline._stages.append(done)
    assert not pipeline._unfinished("b") and pipeline._ran_without_waiting("b")
    pipeline._awaiting = "b"  # a person stopped it: it waits
    assert not pipeline._ran_without_waiting("b")
    pipeline._awaiting, pipeline._attempts_started["b"] = None, 2  # re-run
    assert pipeline._unfinished("b") and not pipeline._ran_without_waiting("b")
    pipeline._attempts_started["a"] = 1
    pipeline._stages.append(done.model_copy(update={"name": "a"}))
    assert not pipeline._ran_without_waiting("a")
