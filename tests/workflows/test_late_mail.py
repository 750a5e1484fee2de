"""Mail that reaches a sub-agent after its final checks, while it writes its output file: the
agent has already settled its answer, so it goes on as its next generation to answer the
mail. Its parent gets the first generation's answer and must then wait for the next one's
too, or the answer to the mail is lost when the parent finishes first."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from temporalio import activity
from temporalio.api.enums.v1 import EventType

from activities.transcript_export import ExportInput, export_transcript
from tests.interceptors import Hold
from tests.support import (
    agent_input,
    heartbeat_for,
    host_activities_with,
    notifications,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from tests.workflows.test_agent_control import wait_status
from tests.workflows.test_agent_endings import helper_script
from workflows.child_endings import CLOSE_WAIT_SUMMARY
from workflows.contracts import AgentResult, MailMessage, StopRequest


@activity.defn(name="transcript.export")
async def slow_export(req: ExportInput) -> str:
    """The real export, ~3 s late: the agent sits in its last step, past its final checks."""
    await heartbeat_for(3)
    return await export_transcript(req)


SLOW_EXPORT = host_activities_with(slow_export)


async def mail_while_exporting(client, git_repo, background: bool, wf_id: str | None = None):
    """(the parent's handle, the helper's last result, the parent's result)"""
    script = helper_script([{"text": "helper done"}, {"text": "read your mail"}], background)
    with scripted_model(script):
        async with running_workers(client, host_activities=SLOW_EXPORT) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues, wf_id)
            child = client.get_workflow_handle(f"{parent.id}/helper", result_type=AgentResult)
            await wait_status(child, lambda s: s.state == "finished")  # in its last steps
            await child.signal("send_message", MailMessage(text="URGENT-MAIL also fix bug 7"))
            kid = await child.result()  # follows the chain to the generation that answered
            result = await parent.result()
    return parent, kid, result


@pytest.mark.parametrize("background", [False, True], ids=["sync", "background"])
async def test_the_parent_waits_for_the_generation_that_answers_late_mail(
    client, git_repo, background
):
    _, kid, result = await mail_while_exporting(client, git_repo, background)
    assert kid.final_text == "read your mail" and kid.run_generation == 2
    notes = notifications(result)
    if background:
        first, second = notes
        assert "helper done" in first
    else:
        (delivered,) = tool_results(result)
        assert delivered.content.startswith("helper done")
        (second,) = notes
    assert "read your mail" in second


HELD = threading.Event()


HOLD_PLAIN_END = Hold(
    3, signal="agent_notification", when=lambda args: not args[0].continues, on_hold=HELD.set
)
"""A sub-agent's plain end notification arrives 3 s late, and the test learns when it is held:
mail sent then reaches the agent after it told its parent."""


async def mail_during_the_notice(
    client, git_repo, wf_id: str | None = None, second_late: bool = False
):
    """A background helper gets mail while its end notification is on its way: (the parent's
    handle, the helper's last result, the parent's result). `second_late`: the end that says
    another follows is 10 s late, and the parent's model does not wait."""
    script = helper_script([{"text": "helper done"}, {"text": "read your mail"}])
    holds = [HOLD_PLAIN_END]
    if second_late:
        holds.append(HOLD_CONTINUING_END_LONG)
    else:
        parent_turns = script["agents"][1]["turns"]
        parent_turns[1] = {"text": "waiting", "delay_ms": 2000}  # the parent finishes no sooner
    HELD.clear()
    with scripted_model(script):
        async with running_workers(client, interceptors=holds) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues, wf_id)
            child = client.get_workflow_handle(f"{parent.id}/helper", result_type=AgentResult)
            assert await asyncio.to_thread(HELD.wait, 60)
            await child.signal("send_message", MailMessage(text="URGENT-MAIL also fix bug 7"))
            return parent, await child.result(), await parent.result()


async def test_mail_after_the_parent_was_told_sends_a_second_notice(client, git_repo):
    """The end went out without `continues`; mail comes during that signal's round trip. The
    agent tells its parent again, with `continues`, before it goes on to answer."""
    parent, kid, result = await mail_during_the_notice(client, git_repo)
    child = client.get_workflow_handle(f"{parent.id}/helper")
    second = await child.fetch_history()
    first_run = second.events[0].workflow_execution_started_event_attributes
    first = await client.get_workflow_handle(
        child.id, run_id=first_run.continued_execution_run_id
    ).fetch_history()
    assert kid.final_text == "read your mail" and kid.run_generation == 2
    signals = [
        e
        for e in first.events
        if e.event_type == EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED
    ]
    assert len(signals) == 2  # its end, then the same end saying another follows
    done, answered = notifications(result)
    assert "helper done" in done and "read your mail" in answered


async def test_an_ending_parent_waits_for_a_helper_that_is_still_closing(client, git_repo):
    """The same mail, but the parent's model answers at once and the second notice is 10 s
    late: the parent, at its end of turn, waits for the helper's workflow to close instead of
    ending, so it hears of the generation that answers the mail."""
    parent, kid, result = await mail_during_the_notice(client, git_repo, second_late=True)
    assert kid.final_text == "read your mail" and kid.run_generation == 2
    done, answered = notifications(result)
    assert "helper done" in done and "read your mail" in answered
    assert await waited_before_the_second_notice(parent)  # the race this test is about


async def waited_before_the_second_notice(parent) -> bool:
    """The parent took the settles-children path before the end saying another follows came
    (the wait's timer, then that signal, in its history)."""
    waited = None
    async for e in parent.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED and waited is None:
            if json.loads(e.user_metadata.summary.data or b'""') == CLOSE_WAIT_SUMMARY:
                waited = e.event_id
        signaled = e.workflow_execution_signaled_event_attributes
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED and (
            signaled.signal_name == "agent_notification"
            and b'"continues":true' in signaled.input.payloads[0].data
        ):
            return waited is not None
    return False


HOLD_CONTINUING_END_LONG = Hold(
    10, signal="agent_notification", when=lambda args: args[0].continues
)
"""An end that says another generation follows arrives 10 s late: time enough for the parent
to reach its end of turn first, even on a loaded machine."""


HOLD_CONTINUING_END = Hold(
    3, signal="agent_notification", when=lambda args: args[0].continues, on_hold=HELD.set
)
"""An end that says another generation follows arrives 3 s late, and the test learns when."""


async def stop_after_the_notice(client, git_repo, wf_id: str | None = None):
    """Mail waits at a background helper's end, and a stop comes while the end that says so
    is on its way: (the parent's handle, the helper's result, the parent's result)."""
    HELD.clear()
    with scripted_model(helper_script([{"text": "helper done"}, {"text": "never"}])):
        async with running_workers(
            client, host_activities=SLOW_EXPORT, interceptors=[HOLD_CONTINUING_END]
        ) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues, wf_id)
            child = client.get_workflow_handle(f"{parent.id}/helper", result_type=AgentResult)
            await wait_status(child, lambda s: s.state == "finished")  # in its last steps
            await child.signal("send_message", MailMessage(text="URGENT-MAIL also fix bug 7"))
            assert await asyncio.to_thread(HELD.wait, 60)
            await child.signal("stop", StopRequest(reason="enough"))
            kid = await child.result()
            return parent, kid, await asyncio.wait_for(parent.result(), 40)


async def test_a_stop_after_the_parent_heard_of_a_next_generation_ends_that_one(client, git_repo):
    """Mail waits at the end, so the end says another generation follows; a stop comes while
    that signal is on its way. No generation runs (a stop means no more model calls), and the
    parent hears that the promised one was stopped instead of waiting for it until its
    liveness check (120 s)."""
    _, kid, result = await stop_after_the_notice(client, git_repo)
    assert kid.run_generation == 1 and kid.unread_messages == 1
    done, stopped = notifications(result)
    assert "helper done" in done
    assert "<status>killed</status>" in stopped and "was stopped" in stopped


async def test_mail_a_stopped_sub_agent_never_read_goes_with_the_message_that_resumes_it(
    client, git_repo
):
    """A sub-agent stopped with mail waiting ends and counts it unread; its parent's
    SendMessage resumed it with the new message only, and what it had been sent was lost
    (`outlast resume` sends a top-level agent's unread mail first; now so does this)."""
    from tests.workflows.test_earlier_children import held_helper, send, spawns_helper

    then = spawns_helper(send("helper", "and then?"), {"text": "Waiting."})
    script = {"agents": [*held_helper(), then]}
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            helper = client.get_workflow_handle(f"{handle.id}/helper", result_type=AgentResult)
            await wait_status(helper, lambda s: "Bash" in s.current_tools)
            await helper.signal("stop", StopRequest(reason="enough"))
            await helper.signal("send_message", MailMessage(text="remember the blue box"))
            # Another agent's: under its name, not as the parent's words (a review).
            await helper.signal("send_message", MailMessage(text="also red", sender="w2"))
            (git_repo / "released").touch()
            stopped = await helper.result(follow_runs=False)
            result = await handle.result()
    assert stopped.stopped and stopped.unread_messages == 2, stopped
    said = [r.content for r in tool_results(result)]
    assert any("resumed it in the background" in r for r in said), said
    (again,) = [r for r in model.log if r["agent"] == "helper-again"]
    told = str(again["body"]["messages"][-1])
    assert told.index("remember the blue box") < told.index("and then?"), told
    assert "Message from w2:\\nalso red" in told, told
