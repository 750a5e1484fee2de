"""Exactly-once notifications whatever races with them (R37, R43, R66)."""

from agents.transcript import TranscriptRef
from workflows.contracts import AgentInput, AgentNotification, Workspace
from workflows.registry import ChildRegistry, ChildTask


def task(mode: str = "background", **kw) -> ChildTask:
    spawn = AgentInput(prompt="p", workspace=Workspace(root="/r", host_queue="h"))
    return ChildTask(
        agent_id="a1",
        agent_type="general-purpose",
        description="job",
        workflow_id="w/a1",
        mode=mode,
        spawn=spawn,
        **kw,
    )


def end(status: str = "completed", generation: int = 1, text: str = "result") -> AgentNotification:
    return AgentNotification(
        agent_id="a1",
        run_generation=generation,
        status=status,
        final_text=text,
        transcript=TranscriptRef(head="h" * 64, length=2),
    )


def test_duplicate_signal_gives_one_notification():
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end()) is True
    assert reg.record_end(end()) is False
    assert len(reg.drain()) == 1 and reg.drain() == []
    assert not reg.outstanding()


def test_stop_then_natural_end_is_reported_killed_once():
    reg = ChildRegistry()
    reg.add(task(stop_requested=True))
    assert reg.record_end(end("completed"))
    assert reg.record_end(end("killed")) is False
    (note,) = reg.drain()
    assert "<status>killed</status>" in note and "was stopped" in note
    assert reg.tasks["a1"].status == "killed"


def test_sync_end_waits_for_the_waiter_and_is_never_notified():
    reg = ChildRegistry()
    reg.add(task(mode="sync"))
    assert reg.record_end(end()) is False
    assert reg.tasks["a1"].end is not None and reg.queue == []
    reg.mark_delivered(reg.tasks["a1"])
    assert reg.record_end(end()) is False and reg.queue == []


def test_generations_are_notified_separately_and_stale_ones_once():
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end(text="first"))
    t = reg.tasks["a1"]
    t.run_generation, t.status, t.end = 2, "running", None
    assert reg.record_end(end(generation=1)) is False  # already told
    assert reg.outstanding()
    assert reg.record_end(end(generation=2, text="second"))
    notes = reg.drain()
    assert len(notes) == 2 and "second" in notes[1]


def test_an_older_run_ending_after_a_resume_is_still_told_once():
    reg = ChildRegistry()
    reg.add(task())
    t = reg.tasks["a1"]
    t.run_generation = 2  # resumed before generation 1's end arrived
    assert reg.record_end(end(generation=1, text="late first"))
    assert reg.record_end(end(generation=1, text="late first")) is False
    assert "late first" in reg.drain()[0]


def test_find_by_name_latest_wins():
    reg = ChildRegistry()
    reg.add(task(name="helper"))
    second = task(name="helper").model_copy(update={"agent_id": "a2"})
    reg.add(second)
    assert reg.find("helper").agent_id == "a2"
    assert reg.find("a1").agent_id == "a1"
    assert reg.find("nobody") is None


def test_delivered_answers_are_not_carried():
    reg = ChildRegistry()
    reg.add(task())
    reg.record_end(end(text="a long answer"))
    assert "a long answer" in reg.drain()[0]
    assert reg.tasks["a1"].end.final_text == ""  # the table keeps status and usage only
    sync = ChildRegistry()
    sync.add(task(mode="sync"))
    sync.record_end(end(text="sync answer"))
    sync.mark_delivered(sync.tasks["a1"])
    assert sync.tasks["a1"].end.final_text == ""


def test_a_background_end_that_continues_is_followed_by_the_next_generation():
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end()) is True  # generation 1's own end, as it ended
    assert not reg.outstanding()
    assert reg.record_end(end().model_copy(update={"continues": True})) is False
    t = reg.tasks["a1"]
    assert (t.run_generation, t.mode, t.status, t.end) == (2, "background", "running", None)
    assert reg.outstanding() and len(reg.drain()) == 1
    assert reg.record_end(end(generation=2, text="answered the mail")) is True
    assert "answered the mail" in reg.drain()[0] and not reg.outstanding()


def test_a_continuing_end_that_arrives_first_is_still_notified_once():
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end().model_copy(update={"continues": True})) is True
    assert reg.tasks["a1"].run_generation == 2 and reg.outstanding()
    assert reg.record_end(end()) is False  # the plain one, behind it
    assert len(reg.drain()) == 1 and reg.outstanding()


def test_a_sync_end_that_continues_waits_for_its_delivery_first():
    reg = ChildRegistry()
    reg.add(task(mode="sync"))
    assert reg.record_end(end().model_copy(update={"continues": True})) is False
    t = reg.tasks["a1"]
    assert t.end is not None and t.run_generation == 1  # the sync wait reads generation 1
    reg.mark_delivered(t)
    assert (t.run_generation, t.mode, t.status) == (2, "background", "running")
    assert reg.outstanding() and reg.queue == []


def test_a_person_s_graceful_stop_reads_stopped_with_what_it_had_said():
    """`outlast stop` of a background child: it read `completed`, with nothing of the stop."""
    reg = ChildRegistry()
    reg.add(task())
    stopped = end("completed", text="half of it").model_copy(
        update={"stopped": True, "stop_reason": "wrong file"}
    )
    assert reg.record_end(stopped)
    (note,) = reg.drain()
    assert "<status>killed</status>" in note and 'Agent "job" was stopped' in note, note
    assert (
        "<result>It was stopped by the user before it finished (reason: wrong file); its task "
        "is not done.\n\nhalf of it</result>"
    ) in note, note
    assert reg.tasks["a1"].status == "killed"


def test_a_person_s_kill_is_not_taken_for_the_parent_s_own_task_stop():
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end("killed", text=""))
    (note,) = reg.drain()
    assert "not by a TaskStop of yours" in note and "<status>killed</status>" in note, note
    assert "reason" not in note, note  # a kill given none
    own = ChildRegistry()
    own.add(task(stop_requested=True))
    assert own.record_end(end("killed", text=""))
    (note,) = own.drain()
    assert "<result>" not in note and "TaskStop" not in note, note


def test_a_child_out_of_turns_says_so_and_stays_completed():
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end(text="so far").model_copy(update={"max_turns_reached": True}))
    (note,) = reg.drain()
    assert "<status>completed</status>" in note and "reached its turn limit" in note, note
    assert note.index("turn limit") < note.index("so far")


def test_a_finished_child_s_notification_has_no_note():
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end(text="done"))
    (note,) = reg.drain()
    assert "<result>done</result>" in note, note


def test_an_older_generation_s_stopped_end_reads_stopped_too():
    reg = ChildRegistry()
    reg.add(task(run_generation=2))
    old = end("completed", generation=1, text="").model_copy(
        update={"stopped": True, "stop_reason": ""}
    )
    assert reg.record_end(old)
    (note,) = reg.drain()
    assert "<status>killed</status>" in note and "was stopped" in note, note
    # No text of its own: the note alone.
    assert (
        "<result>It was stopped by the user before it finished; its task is not done.</result>"
        in (note)
    ), note


def test_a_stop_sent_on_by_a_stopped_caller_says_so():
    from agents.notifications import CALLER_STOPPED, stop_note

    assert stop_note(CALLER_STOPPED).startswith("It was stopped before it finished, because you")
    assert "by the user" not in stop_note(CALLER_STOPPED)


def test_a_next_generation_a_stop_kept_from_running_reads_stopped_not_killed_from_outside():
    from workflows.agent_end import stopped_before_mail
    from workflows.contracts import AgentResult, AgentUsage

    ran = AgentResult(
        status="completed",
        agent_id="a1",
        agent_type="t",
        final_text="x",
        usage=AgentUsage(),
        turns=1,
        unread_messages=2,
    )
    ended = stopped_before_mail(ran, "enough")
    assert ended.status == "killed" and ended.stopped and ended.stop_reason == "enough"
    reg = ChildRegistry()
    reg.add(task())
    assert reg.record_end(end("killed", text="").model_copy(update={"stopped": True}))
    (note,) = reg.drain()
    assert "not by a TaskStop" not in note and "stopped by the user" in note, note
