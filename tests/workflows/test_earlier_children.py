"""A resumed agent reaches the sub-agents of its earlier runs by name (R66 after a resume):
a resumed coordinator is told to continue the same worker, which has the context (R61),
and its SendMessage was refused ("No agent named ...") as its new run's registry was empty."""

from __future__ import annotations

import asyncio
import contextlib

from temporalio import activity
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from activities import earlier_agents
from activities.earlier_agents import closing
from activities.transcript_export import ExportInput, export_transcript
from agents.config import AgentSettings, ToolSettings
from outlast.resume import resume_agent
from tests.support import (
    agent_input,
    fast_config,
    host_activities_with,
    listed,
    notifications,
    running_workers,
    scripted_model,
    spawn,
    start,
    taken_changes,
    tool_results,
)
from workflows.contracts import AgentResult, StopRequest
from workflows.earlier_children import EARLIER_CHILDREN


def send(to: str, message: str) -> dict:
    return {"tool_use": {"name": "SendMessage", "input": {"to": to, "message": message}}}


SCRIPT = {
    "agents": [
        {
            "name": "helper",
            "match": {"agent_name": "helper"},
            "turns": [{"text": "first answer: 42"}, {"text": "second answer, building on 42"}],
        },
        {
            # A turn's index counts the conversation's assistant messages: the first run
            # made two, so the resumed run starts at the third.
            "name": "resumed",
            "match": {"conversation_contains": ["ask the helper again"]},
            "after_last": "repeat_last",
            "turns": [
                {"text": "unused"},
                {"text": "unused"},
                send("nobody", "hello?"),
                send("helper", "and then?"),
                {"text": "Waiting for helper."},
            ],
        },
        {
            "name": "parent",
            "turns": [
                {"tool_use": spawn("helper", "what is the answer?", False)},
                {"text": "The helper says 42."},
            ],
        },
    ]
}


async def test_a_resumed_agent_resumes_a_sub_agent_of_its_earlier_run_by_name(client, git_repo):
    with scripted_model(SCRIPT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            first = await handle.result()
            assert first.final_text == "The helper says 42.", first
            resumed = await resume_agent(client, handle.id, "ask the helper again")
            result: AgentResult = await client.get_workflow_handle(
                handle.id, result_type=AgentResult
            ).result()
            helper_runs = await listed(
                client,
                f'WorkflowId = "{handle.id}/helper"',
                until=lambda rows: (
                    len(rows) == 2
                    and {r.status for r in rows} == {WorkflowExecutionStatus.COMPLETED}
                ),
            )
            patches = await taken_changes(client.get_workflow_handle(handle.id))
    assert resumed.handle.id == handle.id and len(helper_runs) == 2
    said = {r.content.split(".")[0]: r for r in tool_results(result)}
    # A name no run spawned is refused as before.
    nobody = [r for r in tool_results(result) if "'nobody'" in r.content]
    assert len(nobody) == 1 and nobody[0].is_error, said
    assert "No agent named or with ID 'nobody'" in nobody[0].content
    resumes = [r for r in tool_results(result) if "resumed it in the background" in r.content]
    assert len(resumes) == 1 and not resumes[0].is_error, said
    assert 'Agent "helper" was stopped (completed)' in resumes[0].content
    # The helper went on from its own conversation, with the message.
    helper_calls = [r for r in model.log if r["agent"] == "helper"]
    assert [r["turn"] for r in helper_calls] == [0, 1]
    again = str(helper_calls[1]["body"]["messages"])
    assert "first answer: 42" in again and "and then?" in again
    # Its end came back to the resumed run as a notification.
    notes = notifications(result)
    assert len(notes) == 1 and "second answer, building on 42" in notes[0], notes
    assert result.status == "completed" and result.final_text == "Waiting for helper."
    assert EARLIER_CHILDREN in patches


async def test_an_agent_that_was_never_resumed_does_not_look_earlier_runs_up(client, git_repo):
    script = {
        "agents": [
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [send("helper", "hello?"), {"text": "No helper."}],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
            patches = await taken_changes(handle)
    (refused,) = [r for r in tool_results(result) if "'helper'" in r.content]
    assert refused.is_error and "Known agents: none" in refused.content
    assert EARLIER_CHILDREN not in patches


GLOB = {"tool_use": {"name": "Glob", "input": {"pattern": "*.txt"}}}


async def test_a_sub_agent_that_continued_as_new_goes_on_from_its_end(client, git_repo):
    """Its last run's input holds the state it continued with: a resume from that state
    would have dropped every turn after it (a review, 2026-12-06)."""
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [GLOB, GLOB, GLOB, {"text": "first answer: 42"}, {"text": "second"}],
            },
            *SCRIPT["agents"][1:],
        ]
    }
    config = fast_config(agents=AgentSettings(turns_per_run=2))
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            assert (await handle.result()).final_text == "The helper says 42."
            helper_runs = await listed(client, f'WorkflowId = "{handle.id}/helper"', until=bool)
            assert len(helper_runs) >= 2, helper_runs  # it continued as new
            await resume_agent(client, handle.id, "ask the helper again")
            result = await client.get_workflow_handle(handle.id, result_type=AgentResult).result()
    helper_calls = [r for r in model.log if r["agent"] == "helper"]
    assert [r["turn"] for r in helper_calls] == [0, 1, 2, 3, 4]
    again = str(helper_calls[-1]["body"]["messages"])
    assert "first answer: 42" in again and "and then?" in again
    notes = notifications(result)
    assert len(notes) == 1 and "second" in notes[0], notes


HELD = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.05; done"}}


def held_helper() -> list[dict]:
    """A helper held in Bash until `released` exists, and its next run, resumed with "and
    then?", which answers at once."""
    return [
        {
            "name": "helper-again",
            "match": {"agent_name": "helper", "conversation_contains": ["and then?"]},
            "after_last": "repeat_last",
            "turns": [{"text": "second answer"}],
        },
        {"name": "helper", "match": {"agent_name": "helper"}, "turns": [{"tool_use": HELD}]},
    ]


def spawns_helper(*more: dict) -> dict:
    """A parent that starts the held helper in the background and waits; then `more`."""
    turns = [{"tool_use": spawn("helper", "what is the answer?", True)}]
    return {
        "name": "parent",
        "after_last": "repeat_last",
        "turns": [*turns, {"text": "Waiting for helper."}, *more],
    }


async def test_a_resumed_agent_is_told_which_sub_agents_its_end_stopped(client, git_repo):
    """A killed coordinator's end kills its running workers; the conversation it is resumed
    from still said it would be notified when they finish, and no notification came, so it
    waited for (or reported as running) a worker that was dead (a user test, 2026-12-06)."""
    from tests.workflows.test_agent_control import wait_status

    # The resumed parent (SCRIPT's) sends "and then?" to the helper.
    script = {"agents": [*held_helper(), SCRIPT["agents"][1], spawns_helper()]}
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            helper = client.get_workflow_handle(f"{handle.id}/helper")
            await wait_status(helper, lambda s: "Bash" in s.current_tools)
            await handle.cancel()
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
            await resume_agent(client, handle.id, "ask the helper again")
            result = await client.get_workflow_handle(handle.id, result_type=AgentResult).result()
    resumed = [r for r in model.log if r["agent"] == "resumed"]
    told = " ".join(str(resumed[0]["body"]["messages"][-1]).split())
    assert "no notification of theirs will come: helper (killed)" in told, told
    said = [r.content for r in tool_results(result)]
    resumes = [r for r in said if "resumed it in the background" in r]
    assert len(resumes) == 1 and 'Agent "helper" was stopped (killed)' in resumes[0], said
    notes = notifications(result)
    assert len(notes) == 1 and "second answer" in notes[0], notes


async def test_a_sub_agent_killed_and_told_of_before_the_end_is_not_named_as_stopped_by_it(
    client, git_repo
):
    """A user test (2026-12-06): a worker the user killed, whose notification the
    coordinator read before it completed, was named in the resume's message as stopped by
    the end ("no notification of theirs will come"), because it was cancelled within 30 s
    of the close. A completed run's result says which its end stopped: none here."""
    from tests.workflows.test_agent_control import wait_status

    script = {
        "agents": [
            {"name": "helper", "match": {"agent_name": "helper"}, "turns": [{"tool_use": HELD}]},
            {
                "name": "resumed",
                "match": {"conversation_contains": ["anything left?"]},
                "after_last": "repeat_last",
                "turns": [{"text": "unused"}, {"text": "unused"}, {"text": "Nothing left."}],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("helper", "what is the answer?", True)},
                    {"text": "Waiting for helper."},
                    {"text": "The helper was killed; done."},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            helper = client.get_workflow_handle(f"{handle.id}/helper")
            await wait_status(helper, lambda s: "Bash" in s.current_tools)
            await helper.cancel(reason="not needed")
            first = await handle.result()
            await resume_agent(client, handle.id, "anything left?")
            await client.get_workflow_handle(handle.id, result_type=AgentResult).result()
    assert first.final_text == "The helper was killed; done." and not first.stopped_children
    assert len(notifications(first)) == 1, notifications(first)
    resumed = [r for r in model.log if r["agent"] == "resumed"]
    told = " ".join(str(resumed[0]["body"]["messages"][-1]).split())
    assert "anything left?" in told and "no notification of theirs will come" not in told, told


NEW_CHILD = {
    "agents": [
        {
            "name": "helper",
            "match": {"agent_name": "helper"},
            "after_last": "repeat_last",
            "turns": [{"text": "an answer"}],
        },
        {
            "name": "resumed",
            "match": {"conversation_contains": ["start a new helper"]},
            "after_last": "repeat_last",
            "turns": [
                {"text": "unused"},
                {"text": "unused"},
                {"tool_use": spawn("helper", "once more", False)},
                {"text": "Done again."},
            ],
        },
        SCRIPT["agents"][2],  # the first run's parent
    ]
}


async def test_a_resumed_agent_s_new_child_does_not_take_an_earlier_one_s_id(client, git_repo):
    """Its registry did not know the name an earlier run gave, so a new child of that name
    became the earlier one's workflow id's next run, and `show` had only the new one."""
    with scripted_model(NEW_CHILD):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
            await resume_agent(client, handle.id, "start a new helper")
            result = await client.get_workflow_handle(handle.id, result_type=AgentResult).result()
            runs = await listed(
                client,
                f'WorkflowId STARTS_WITH "{handle.id}/helper"',
                until=lambda rows: len(rows) == 2,
            )
    assert result.final_text == "Done again."
    ids = sorted(r.id for r in runs)
    assert ids[0] == f"{handle.id}/helper" and ids[1].startswith(f"{handle.id}/helper."), ids


def closing_script(resumed_turns: list[dict]) -> dict:
    """A parent with a background helper held in Bash; `resumed_turns`: what the resumed
    parent does after the two turns of its first run."""
    resumed = {
        "name": "resumed",
        "match": {"conversation_contains": ["ask the helper again"]},
        "after_last": "repeat_last",
        "turns": [{"text": "unused"}, {"text": "unused"}, *resumed_turns],
    }
    return {"agents": [*held_helper(), resumed, spawns_helper()]}


@contextlib.asynccontextmanager
async def stopped_with_helper_closing(client, git_repo, script: dict):
    """The parent stopped while its background helper works; the helper's end (its output
    file's export, a host activity here) held until the test sets the event it is given,
    with the parent's resumed run's handle. A stopped agent's end stops its background
    sub-agents without waiting for them to close, and `resume_agent` does not wait for the
    sub-agents of a run that completed."""
    from tests.workflows.test_agent_control import wait_status

    release = asyncio.Event()

    @activity.defn(name="transcript.export")
    async def held_export(req: ExportInput) -> str:
        if activity.info().workflow_id.endswith("/helper"):
            await release.wait()
        return await export_transcript(req)

    config = fast_config(tools=ToolSettings(local_tools=False))
    with scripted_model(script, log_bodies=True) as model:
        host = host_activities_with(held_export)
        async with running_workers(client, host_activities=host) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            helper = client.get_workflow_handle(f"{handle.id}/helper")
            await wait_status(helper, lambda s: "Bash" in s.current_tools)
            await handle.signal("stop", StopRequest(reason="enough"))
            first = await handle.result()
            assert first.stopped and first.stopped_children == ["helper"], first
            assert (await helper.describe()).status == WorkflowExecutionStatus.RUNNING
            await resume_agent(client, handle.id, "ask the helper again")
            again = client.get_workflow_handle(handle.id, result_type=AgentResult)
            try:
                yield again, release, model
            finally:
                release.set()


async def until(predicate, timeout: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        assert asyncio.get_running_loop().time() < deadline, "never came"
        await asyncio.sleep(0.1)


AND_THEN = send("helper", "and then?")


async def test_a_message_to_an_earlier_sub_agent_still_closing_continues_it(
    client, git_repo, monkeypatch
):
    """The resumed run's SendMessage found the sub-agent still running, queued the message
    to it, and said so; the sub-agent, ending, never read it, and nothing resumed it: the
    message was lost. The lookup now waits for it to close, and it is resumed with it."""
    script = closing_script([AND_THEN, {"text": "Waiting for helper."}])
    seen: list[bool] = []

    def noted(desc) -> bool:
        seen.append(found := closing(desc))
        return found

    monkeypatch.setattr(earlier_agents, "closing", noted)
    async with stopped_with_helper_closing(client, git_repo, script) as (again, release, model):

        async def found_closing() -> bool:
            return True in seen

        # Released only once the lookup has found it being stopped, however slow it was.
        await until(found_closing)
        release.set()
        result = await again.result()
    said = [r.content for r in tool_results(result)]
    resumes = [r for r in said if "resumed it in the background" in r]
    assert len(resumes) == 1 and 'Agent "helper" was stopped (killed)' in resumes[0], said
    helper_calls = [r for r in model.log if r["agent"] == "helper-again"]
    assert len(helper_calls) == 1 and "and then?" in str(helper_calls[0]["body"]["messages"])
    notes = notifications(result)
    assert len(notes) == 1 and "second answer" in notes[0], notes


async def test_a_message_to_an_earlier_sub_agent_that_does_not_close_is_refused(
    client, git_repo, monkeypatch
):
    """Not closed within the lookup's wait: the model is told to send it again later, and
    a message sent once it has closed continues it."""
    monkeypatch.setattr(earlier_agents, "CLOSING_WAIT_S", 1.0)
    # In the workspace: the Bash sandbox has a /tmp of its own.
    go_on = git_repo / "go-on"
    wait = {"name": "Bash", "input": {"command": "until [ -e go-on ]; do sleep 0.05; done"}}
    script = closing_script([AND_THEN, {"tool_use": wait}, AND_THEN, {"text": "Waiting."}])
    async with stopped_with_helper_closing(client, git_repo, script) as (again, release, model):
        helper = client.get_workflow_handle(f"{again.id}/helper")

        async def refused() -> bool:
            asked = [r for r in model.log if r["agent"] == "resumed"]
            return bool(asked) and "still being stopped" in str(asked[-1]["body"]["messages"])

        await until(refused)
        release.set()
        with contextlib.suppress(WorkflowFailureError):
            await helper.result(follow_runs=False)
        go_on.touch()
        result = await again.result()
    # Its two SendMessage results, around the Bash that waited for the helper's end.
    first, _, second = tool_results(result)[-3:]
    assert (
        first.is_error and "'helper', an agent of an earlier run, is still being" in first.content
    )
    assert "send the message again in a while" in first.content, first.content
    assert not second.is_error and "resumed it in the background" in second.content, second
    helper_calls = [r for r in model.log if r["agent"] == "helper-again"]
    assert len(helper_calls) == 1 and "and then?" in str(helper_calls[0]["body"]["messages"])
