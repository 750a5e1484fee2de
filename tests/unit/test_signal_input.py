"""A signal's input as its handler checks it: refused with the reason, the latest kept."""

from workflows.contracts import MailMessage, StopRequest
from workflows.signal_input import KEPT, Refusals, check


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


def test_only_the_latest_refusals_are_kept():
    refusals = Refusals()
    for n in range(KEPT + 3):
        refusals.keep(f"s{n}")
    assert refusals.texts == [f"s{n}" for n in range(3, KEPT + 3)]


def test_a_missing_input_is_the_default_and_more_than_one_is_refused():
    logged: list[str] = []
    refusals = Refusals(log=logged.append)
    assert refusals.checked("stop", StopRequest, None, default={}) == StopRequest()
    assert refusals.checked("stop", StopRequest, False, default={}) is None
    assert refusals.checked("send_message", MailMessage, None) is None
    assert refusals.checked("stop", StopRequest, {}, ({}, {})) is None
    assert refusals.texts[-1] == "signal `stop` refused: it takes one input, 3 were given"
    assert logged == refusals.texts and len(logged) == 3
