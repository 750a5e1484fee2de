"""A signal's input as its handler checks it: refused with the reason, the latest kept."""

import pytest
from temporalio import workflow

from workflows.agent import AgentWorkflow
from workflows.agent_handlers import AGENT_SIGNALS, backgrounded_problem
from workflows.contracts import MailMessage, StopRequest
from workflows.coordinator import CoordinatorWorkflow
from workflows.fork_join import ForkJoinWorkflow
from workflows.pipeline import PIPELINE_SIGNALS, PipelineWorkflow
from workflows.signal_input import KEPT, Refusals, check, unknown_signal
from workflows.team import TeamWorkflow
from workflows.team_handlers import TEAM_SIGNALS
from workflows.verified_task import VerifiedTaskWorkflow


def test_a_fitting_input_passes_and_a_bad_one_is_refused_with_why():
    assert check("stop", StopRequest, {"reason": "done"}) == StopRequest(reason="done")
    assert check("send_message", MailMessage, {"text": 1, "sender": None}) == (
        "signal `send_message` refused: text: Input should be a valid string; "
        "sender: Input should be a valid string"
    )
    assert check("send_message", MailMessage, "hi") == (
        "signal `send_message` refused: input: Input should be a valid dictionary or instance "
        "of MailMessage"
    )


def test_only_the_latest_refusals_are_kept_and_each_is_logged():
    logged: list[str] = []
    refusals = Refusals(log=logged.append)
    for n in range(KEPT + 3):
        refusals.keep(f"s{n}")
    assert refusals.texts == [f"s{n}" for n in range(3, KEPT + 3)]
    # Each one, also those the team's and an agent's handlers keep themselves (a user test,
    # 2026-12-06: `kill_member` of no member was in no log once pushed out).
    assert logged == [f"s{n}" for n in range(KEPT + 3)]


def test_a_missing_input_is_the_default_and_more_than_one_is_refused():
    logged: list[str] = []
    refusals = Refusals(log=logged.append)
    assert refusals.checked("stop", StopRequest, None, default={}) == StopRequest()
    assert refusals.checked("stop", StopRequest, False, default={}) is None
    assert refusals.checked("send_message", MailMessage, None) is None
    assert refusals.checked("stop", StopRequest, {}, ({}, {})) is None
    assert refusals.texts[-1] == "signal `stop` refused: it takes one input, 3 were given"
    assert logged == refusals.texts and len(logged) == 3


def test_a_fork_is_named_by_number_agent_id_or_workflow_id():
    from workflows.fork_join import fork_named

    children = {0: ("a1", "fj/fork-1"), 1: ("a2", "fj/fork-2")}
    assert [fork_named(children, t) for t in ("2", "fork-2", "a2", "fj/fork-2")] == [1] * 4
    assert fork_named(children, "3") is None and fork_named(children, "fork-02") is None


def test_a_stop_for_a_fork_not_started_yet_says_to_try_again():
    from workflows.fork_join import no_fork_text

    assert no_fork_text("fork-3", 3, 1) == (
        "signal `task_stop` refused: no started fork is `fork-3`; "
        "1 of 3 forks have started, try again when yours has"
    )
    assert "no fork is `fork-4`" in no_fork_text("fork-4", 3, 3)


def test_a_field_the_input_does_not_have_is_refused_unless_lenient_or_unpatched():
    from workflows.contracts import BackgroundRequest

    refusals = Refusals(log=lambda _: None, patched=lambda _: True)
    assert refusals.checked("background", BackgroundRequest, {"agentid": "a1"}) is None
    assert refusals.texts == [
        "signal `background` refused: unknown field agentid (did you mean agent_id?); its "
        "fields are agent_id"
    ]
    # Inputs Outlast's own workflows send as well take a field from a later release.
    mail = refusals.checked("send_message", MailMessage, {"text": "hi", "x": 1}, strict=False)
    assert mail == MailMessage(text="hi")
    # One that does not fit names the field typed too: it said `text: Field required` only.
    assert refusals.checked("send_message", MailMessage, {"txt": "hi"}, strict=False) is None
    assert refusals.texts[-1] == (
        "signal `send_message` refused: text: Field required; unknown field txt (did you "
        "mean text?)"
    )
    # A history recorded before the patch replays as it ran: the field is dropped.
    before = Refusals(log=lambda _: None, patched=lambda _: False)
    assert before.checked("background", BackgroundRequest, {"agentid": "a1"}) == (
        BackgroundRequest()
    )


@pytest.mark.parametrize(
    ("workflow_class", "listed"),
    [
        (AgentWorkflow, AGENT_SIGNALS),
        (CoordinatorWorkflow, AGENT_SIGNALS),
        (TeamWorkflow, TEAM_SIGNALS),
        (PipelineWorkflow, PIPELINE_SIGNALS),
        (ForkJoinWorkflow, ("task_stop",)),
        (VerifiedTaskWorkflow, ("agent_notification",)),
    ],
)
def test_each_workflow_refuses_a_signal_it_has_no_handler_for_and_names_those_it_has(
    workflow_class, listed
):
    """A dynamic handler takes any other name (it was kept unread), and the refusal lists
    exactly the workflow's signals."""
    signals = workflow._Definition.must_from_class(workflow_class).signals
    assert None in signals
    assert sorted(listed) == sorted(name for name in signals if name is not None)


def test_an_unknown_signal_is_named_with_the_one_probably_meant():
    assert unknown_signal("PipelineWorkflow", "sotp", ("stop",), "decide by update") == (
        "signal `sotp` refused: PipelineWorkflow has no such signal (did you mean stop?); "
        "the signals it takes: stop; decide by update"
    )
    assert unknown_signal("X", "zzz", ("stop", "send_message")) == (
        "signal `zzz` refused: X has no such signal; the signals it takes: stop, send_message"
    )


def test_a_set_backgrounded_no_parent_sent_is_refused():
    """Its parent sends it with no input; a raw client's marked any agent `IsBackground`."""
    assert backgrounded_problem((), has_parent=True) is None
    assert backgrounded_problem((None,), has_parent=True) is None  # `--input null`
    assert "it takes no input" in (backgrounded_problem(({"x": 1},), has_parent=True) or "")
    assert "this agent has no parent" in (backgrounded_problem((), has_parent=False) or "")


def test_a_refusal_lists_only_the_fields_a_sender_gives():
    """`stage_decision` with a misspelt field listed `unknown_input_fields`,
    `unknown_nested_fields` and `unknown_lenient_fields` among its fields (a user test,
    2026-12-07): the model keeps those for itself."""
    from workflows.pattern_contracts import StageDecision
    from workflows.signal_input import unknown_fields

    said = unknown_fields("stage_decision", StageDecision, {"stage": "x", "aprove": True})
    assert said == (
        "signal `stage_decision` refused: unknown field aprove (did you mean approve?); its "
        "fields are stage, approve, feedback, rerun, attempt"
    ), said
