"""The team task list's rules (R69, T19) and the team's quiet test."""

import pytest

from agents.team_tasks import (
    TaskCreateInput,
    TaskRuleError,
    TaskUpdateInput,
    create_task,
    list_text,
    update_task,
)
from workflows.pattern_contracts import MemberReport
from workflows.team import quiet


def tasks_with(*subjects: str) -> dict:
    tasks: dict = {}
    for s in subjects:
        t = create_task(tasks, TaskCreateInput(subject=s, description=""), "lead")
        tasks[t.id] = t
    return tasks


def apply(tasks: dict, caller: str, **fields):
    task = update_task(tasks, TaskUpdateInput(**fields), caller)
    tasks[task.id] = task
    return task


def test_ids_count_up_and_the_list_reads_well():
    tasks = tasks_with("one", "two")
    assert list(tasks) == ["1", "2"]
    apply(tasks, "c", taskId="2", status="in_progress")
    assert list_text(tasks) == "#1 [pending] one\n#2 [in_progress] two (owner: c)"


def test_starting_work_claims_and_the_claim_is_locked():
    tasks = tasks_with("one")
    assert apply(tasks, "b", taskId="1", status="in_progress").owner == "b"
    with pytest.raises(TaskRuleError, match="owned by b"):
        apply(tasks, "c", taskId="1", owner="c", status="in_progress")
    with pytest.raises(TaskRuleError, match="owned by b"):
        apply(tasks, "c", taskId="1", status="completed")
    # Others may still edit the text; the owner may finish or let go.
    assert apply(tasks, "c", taskId="1", description="more detail").owner == "b"
    assert apply(tasks, "b", taskId="1", status="completed").status == "completed"


def test_letting_go_reopens_the_task_for_others():
    tasks = tasks_with("one")
    apply(tasks, "b", taskId="1", status="in_progress")
    apply(tasks, "b", taskId="1", owner="", status="pending")
    assert apply(tasks, "c", taskId="1", status="in_progress").owner == "c"


def test_blocked_tasks_cannot_start_until_their_blockers_are_done():
    tasks = tasks_with("first", "second")
    apply(tasks, "lead", taskId="2", addBlockedBy=["1"])
    with pytest.raises(TaskRuleError, match="blocked by unfinished tasks 1"):
        apply(tasks, "c", taskId="2", status="in_progress")
    apply(tasks, "b", taskId="1", status="completed")
    assert apply(tasks, "c", taskId="2", status="in_progress").owner == "c"
    with pytest.raises(TaskRuleError, match="cannot be blocked by 9"):
        apply(tasks, "lead", taskId="1", addBlockedBy=["9"])


def test_unknown_task_lists_the_ids():
    with pytest.raises(TaskRuleError, match="No task with ID 7. Existing IDs: 1"):
        update_task(tasks_with("one"), TaskUpdateInput(taskId="7"), "b")


def report(name: str, idle: bool = True, received: int = 0, **sent_to: int) -> MemberReport:
    return MemberReport(name=name, idle=idle, received=received, sent_to=sent_to)


def test_quiet_only_when_all_idle_and_every_message_received():
    live = ["a", "b"]
    assert not quiet({"a": report("a")}, live, {})  # b never reported
    assert quiet({"a": report("a"), "b": report("b")}, live, {})
    # a sent b a message b has not handled yet: not quiet, though both look idle.
    assert not quiet({"a": report("a", b=1), "b": report("b")}, live, {})
    assert quiet({"a": report("a", b=1), "b": report("b", received=1)}, live, {})
    assert not quiet({"a": report("a"), "b": report("b", idle=False)}, live, {})
    # Mail forwarded by the team counts too; ended members do not hold the team up.
    assert not quiet({"a": report("a"), "b": report("b")}, live, {"a": 1})
    assert quiet({"a": report("a", b=3)}, ["a"], {})


def held_by(owner: str) -> tuple[dict, TaskUpdateInput]:
    """Task #1 in progress, claimed by `owner`, and c's claim of it."""
    tasks = tasks_with("one")
    apply(tasks, owner, taskId="1", status="in_progress")
    return tasks, TaskUpdateInput(taskId="1", owner="c", status="in_progress")


def test_a_claim_locks_only_while_its_owner_runs():
    # b was killed (or shut down, or spent its turns) with #1 in progress: the claim locked
    # it for good, from the lead and the user too.
    tasks, fields = held_by("b")
    with pytest.raises(TaskRuleError, match="owned by b"):
        update_task(tasks, fields, "c", released={"d"})
    assert update_task(tasks, fields, "c", released={"b"}).owner == "c"


def test_the_user_s_claim_locks_too():
    # The user (the CLI's caller) is no member: its claim must not be free for all.
    tasks, fields = held_by("user")
    with pytest.raises(TaskRuleError, match="owned by user"):
        update_task(tasks, fields, "c", released={"b"})
