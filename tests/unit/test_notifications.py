"""Golden strings of what a parent reads about its sub-agents (R19a, R20, R35, R36, R39)."""

from agents.notifications import (
    NOTIFICATION_RESULT_CAP_CHARS,
    TaskNotification,
    UsageFigures,
    async_launch_text,
    cap_result,
    format_task_notification,
    summary_for,
    sync_result_text,
)

USAGE = UsageFigures(total_tokens=71330, tool_uses=21, duration_ms=81748)


def test_completed_notification_golden():
    text = format_task_notification(
        TaskNotification(
            task_id="ae9a65ee22594487c",
            tool_use_id="toolu_1",
            status="completed",
            summary=summary_for("completed", "research query engine"),
            result="Found it in <src/q.py> & tests",
            usage=USAGE,
        )
    )
    assert text == (
        "<task-notification>\n"
        "<task-id>ae9a65ee22594487c</task-id>\n"
        "<tool-use-id>toolu_1</tool-use-id>\n"
        "<status>completed</status>\n"
        '<summary>Agent "research query engine" completed</summary>\n'
        "<result>Found it in &lt;src/q.py&gt; &amp; tests</result>\n"
        "<usage><total_tokens>71330</total_tokens><tool_uses>21</tool_uses>"
        "<duration_ms>81748</duration_ms></usage>\n"
        "</task-notification>"
    )


def test_failed_and_killed_and_worktree():
    failed = format_task_notification(
        TaskNotification(task_id="a1", status="failed", summary=summary_for("failed", "x", None))
    )
    assert "<status>failed</status>" in failed
    assert '<summary>Agent "x" failed: unknown error</summary>' in failed
    assert "<result>" not in failed and "<usage>" not in failed
    killed = format_task_notification(
        TaskNotification(
            task_id="a1",
            status="killed",
            summary=summary_for("killed", "x"),
            worktree_path="/r/.claude/worktrees/agent-a1",
            worktree_branch="worktree-agent-a1",
        )
    )
    assert '<summary>Agent "x" was stopped</summary>' in killed
    assert killed.endswith(
        "<worktree><worktreePath>/r/.claude/worktrees/agent-a1</worktreePath>"
        "<worktreeBranch>worktree-agent-a1</worktreeBranch></worktree>\n</task-notification>"
    )
    assert summary_for("failed", "x", "boom") == 'Agent "x" failed: boom'


def test_result_cap_keeps_head_and_tail():
    text = "h" * 40_000 + "t" * 10_000
    capped = cap_result(text)
    assert capped.startswith("h" * 12_800) and capped.endswith("t" * 3_200)
    assert "[... 34000 characters omitted" in capped
    assert len(capped) < NOTIFICATION_RESULT_CAP_CHARS + 200
    assert cap_result("short") == "short"


def test_sync_trailer_only_for_continuable_types():
    general = sync_result_text("done", "a0123456789abcdef", "general-purpose", USAGE)
    assert general.startswith("done\n\nagentId: a0123456789abcdef")
    assert general.endswith("<usage>total_tokens: 71330\ntool_uses: 21\nduration_ms: 81748</usage>")
    named = sync_result_text("done", "a0123456789abcdef", "general-purpose", USAGE, name="scout")
    assert "use SendMessage with to: 'scout' or 'a0123456789abcdef' to continue it" in named
    explore = sync_result_text("found", "a0123456789abcdef", "Explore", USAGE)
    assert "agentId" not in explore and "<usage>" in explore


def test_launch_text_promises_a_notification_and_forbids_guessing():
    text = async_launch_text("a0123456789abcdef", "scan repo", "scanner")
    assert "notified automatically" in text and "do not guess" in text
    assert "'scanner' or 'a0123456789abcdef'" in text
    assert "output file" not in text.lower()


def test_a_queued_worker_s_launch_text_does_not_say_it_is_working():
    """It read "is working in the background", then "Queued" (a user test, 2026-12-07)."""
    text = async_launch_text("a0123456789abcdef", "edit app", "doc", queued=True)
    assert "is working" not in text and "works in the background once it starts" in text
    assert "notified automatically" in text and "do not guess" in text
