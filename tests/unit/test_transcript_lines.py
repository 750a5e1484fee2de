"""How `outlast transcript` prints a conversation."""

from agents.messages import Message, ToolResultBlock, ToolUseBlock
from outlast.cli_transcript import NOT_YET, UNANSWERED, message_lines


def test_a_call_with_no_result_says_so():
    """A Bash call a kill cut off was printed like any other, its missing result unsaid."""
    read = ToolUseBlock(id="t1", name="Read", input={"file_path": "a.py"})
    bash = ToolUseBlock(id="t2", name="Bash", input={"command": "sleep 600"})
    calls = Message(role="assistant", content=[read, bash])
    results = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="x = 1")])
    lines = message_lines(calls, answered={"t1"})
    assert lines[1].startswith("  [yellow]→ Read[/]") and UNANSWERED not in lines[2]
    assert lines[2].startswith("  [yellow]→ Bash[/]") and lines[3] == f"    {UNANSWERED}"
    assert UNANSWERED not in "\n".join(message_lines(results, answered={"t1"}))
    assert UNANSWERED not in "\n".join(message_lines(calls))  # not asked: nothing said
    # A running agent's: not yet (a finished call read as cut off: a user test, 2026-12-06).
    assert message_lines(calls, answered={"t1"}, running=True)[3] == f"    {NOT_YET}"
