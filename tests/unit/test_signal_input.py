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
