"""The teammate system prompt block (spec R69, R73, R74)."""

from agents.builtin.teammate import COMMUNICATION, teammate_system_prompt

R74 = (
    "Just writing a response in text is not visible to others on your team - "
    "you MUST use the SendMessage tool."
)


def _prompt(members=("lead", "alice", "bob")):
    return teammate_system_prompt("BASE", team_name="auth", name="alice", members=members)


def test_communication_sentence_is_exact_and_present():
    assert COMMUNICATION == R74
    assert R74 in _prompt()


def test_identity_and_roster():
    prompt = _prompt()
    assert prompt.startswith("BASE\n\n")
    assert '"alice"' in prompt and '"auth"' in prompt
    assert "- lead\n- bob" in prompt
    assert "- alice" not in prompt


def test_addressing_and_broadcast():
    prompt = _prompt()
    assert 'to: "<name>"' in prompt
    assert 'to: "*"' in prompt


def test_task_list_tools_and_claiming():
    prompt = _prompt()
    for tool in ("TaskCreate", "TaskGet", "TaskList", "TaskUpdate"):
        assert tool in prompt
    assert 'owner set to your name ("alice")' in prompt
    assert '"in_progress"' in prompt and '"completed"' in prompt
    assert "refused" in prompt


def test_turn_ending_and_sync_only_subagents():
    prompt = _prompt()
    assert "end your turn" in prompt and "woken by the next message" in prompt
    assert "run_in_background and name are not available" in prompt


def test_alone_in_the_team():
    assert "- (none yet)" in _prompt(members=["alice"])
