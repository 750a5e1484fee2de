"""What a killed agent says of its kill, and which of its mail counts as unread."""

from types import SimpleNamespace

from workflows.agent_end import kill_reason
from workflows.agent_handlers import AgentHandlers
from workflows.contracts import MailMessage
from workflows.team_losses import LOSS_SENDER


def test_a_cancel_a_workflow_requested_gives_only_the_reason_it_gave():
    """A team's kill told its lead "Teammate alpha was killed (Cancel requested by workflow
    with run id ... with reason: )" (a user test, 2026-12-07)."""
    server = "Cancel requested by workflow with run id 01a2500f-9c1e-4c2a with reason: "
    assert kill_reason(server) == ""
    assert kill_reason(server + "stop the helper") == "stop the helper"
    assert kill_reason("script loop") == "script loop"  # a person's, as given
    assert kill_reason("") == ""


def test_the_team_s_notes_of_lost_members_are_not_unread_mail():
    """A killed team's lead read as having unread messages: the team's notes of its other
    members' kills, sent as it was being cancelled (a user test, 2026-12-07)."""
    mailbox = [
        MailMessage(text="Teammate alpha was killed and has left the team.", sender=LOSS_SENDER),
        MailMessage(text="please also check the docs", sender="user"),
        MailMessage(text='{"type": "shutdown_request", "request_id": "r1"}', sender="team"),
    ]
    assert AgentHandlers._unread_words(SimpleNamespace(_mailbox=mailbox, _team=None)) == 1
    # A member may be named `system` too: then its mail counts (a review).
    team = SimpleNamespace(members=["lead", LOSS_SENDER])
    assert AgentHandlers._unread_words(SimpleNamespace(_mailbox=mailbox, _team=team)) == 2
