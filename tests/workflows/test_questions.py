"""AskUserQuestion (T16): the agent waits, durably, for the user's answers; the
`answer_question` update refuses answers that do not fit before anything is recorded."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError

from agents.questions import QuestionAnswers, answers_result
from outlast.inspect import agent_tree
from tests.support import (
    agent_input,
    running_workers,
    scripted_model,
    spawn,
    start,
    tool_results,
)
from tests.workflows.test_visibility import current_details
from workflows import search_attributes as sa
from workflows.contracts import AgentResult, PendingQuestion

DB = {
    "question": "Which database should the service use?",
    "header": "Database",
    "options": [
        {"label": "Postgres (Recommended)", "description": "Relational, already deployed."},
        {"label": "SQLite", "description": "A file; no server."},
    ],
}
CHECKS = {
    "question": "Which checks should run before merging?",
    "header": "Checks",
    "multiSelect": True,
    "options": [
        {"label": "Unit tests", "description": "Fast."},
        {"label": "Lint", "description": "ruff."},
        {"label": "Integration", "description": "Slow, needs a server."},
    ],
}
ASK = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "Two things to settle first.",
                    "tool_use": {"name": "AskUserQuestion", "input": {"questions": [DB, CHECKS]}},
                },
                {"text": "Going with that."},
            ],
        }
    ]
}


async def waiting_question(handle, timeout: float = 30) -> PendingQuestion:
    deadline = asyncio.get_running_loop().time() + timeout
    while (pending := await handle.query("question", result_type=PendingQuestion | None)) is None:
        assert asyncio.get_running_loop().time() < deadline, "no question came"
        await asyncio.sleep(0.1)
    return pending


async def refused(handle, answers: dict[str, str], request_id: str | None = None) -> str:
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await handle.execute_update(
            "answer_question", QuestionAnswers(request_id=request_id, answers=answers)
        )
    # Sending it again cannot help: it read `retryable: true` (a user test, 2026-12-07).
    assert failed.value.cause.non_retryable, failed.value.cause
    return failed.value.cause.message


async def test_the_agent_waits_for_the_answers_and_refuses_what_does_not_fit(
    client, dev_server, git_repo
):
    with scripted_model(ASK, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("set it up", git_repo, queues), queues)
            pending = await waiting_question(handle)
            assert pending.request_id == "question-1"
            assert [q.header for q in pending.questions] == ["Database", "Checks"]
            details = await current_details(client, handle.id)
            assert "## Questions waiting for an answer (question-1)" in details
            assert "2. **Checks**: Which checks should run before merging? (pick one or more)" in (
                details
            )
            assert f"outlast answer {handle.id}" in details
            # Its `AgentStatus` attribute says so, for the Web UI's list and its filters.
            marks = (await handle.describe()).typed_search_attributes
            assert marks.get(sa.AGENT_STATUS) == sa.WAITING_FOR_ANSWER
            # `outlast show` says so too (it said `waiting`).
            tree = await agent_tree(client, handle.id)
            assert tree.outcome == f"questions wait for answers: outlast answer {handle.id}"
            # Refused, each with its reason, and the questions go on waiting.
            only_db = {DB["question"]: "SQLite"}
            assert "has no answer" in await refused(handle, only_db)
            stray = {**only_db, CHECKS["question"]: "Lint", "Which cloud?": "none"}
            assert "no question 'Which cloud?' was asked" in await refused(handle, stray)
            full = {DB["question"]: "SQLite", CHECKS["question"]: "Lint"}
            assert "not question-9" in await refused(handle, full, request_id="question-9")
            # The CLI answers by choice numbers, as a person types them.
            env = {**os.environ, "TEMPORAL_ADDRESS": dev_server.address, "COLUMNS": "200"}
            cli = [sys.executable, "-m", "outlast.cli", "answer", handle.id]
            shown = await asyncio.to_thread(
                subprocess.run, cli, env=env, capture_output=True, text=True, timeout=60
            )
            assert shown.returncode == 0, shown.stdout + shown.stderr
            assert "   2) SQLite: A file; no server." in shown.stdout
            wrong = await asyncio.to_thread(
                subprocess.run, [*cli, "1,2", "1"], env=env, capture_output=True, text=True
            )
            assert wrong.returncode == 2 and "'Database' takes one choice" in wrong.stdout
            done = await asyncio.to_thread(
                subprocess.run, [*cli, "2", "1,3"], env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stdout + done.stderr
            assert "question-1 of" in done.stdout and "answered" in done.stdout
            result = await asyncio.wait_for(handle.result(), timeout=60)
            history = [e async for e in handle.fetch_history_events()]
            ended = (await handle.describe()).typed_search_attributes
    assert ended.get(sa.AGENT_STATUS) == "completed"
    assert result.status == "completed" and result.final_text == "Going with that."
    [answered] = tool_results(result)
    chosen = {DB["question"]: "SQLite", CHECKS["question"]: "Unit tests, Integration"}
    assert answered.content == answers_result(pending.questions, chosen)
    assert not answered.is_error
    last = model.log[-1]["body"]["messages"][-1]["content"][0]
    assert last["content"] == answered.content
    # Only the answer that fitted was recorded: refused updates leave no event.
    accepted = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    assert sum(e.event_type == accepted for e in history) == 1


async def test_a_stop_ends_the_wait(client, dev_server, git_repo):
    from tests.workflows.test_plan_mode import cli

    with scripted_model(ASK) as _:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("set it up", git_repo, queues), queues)
            await waiting_question(handle)
            code, out = await cli(dev_server.address, "stop", handle.id, "--reason", "no time")
            result = await asyncio.wait_for(handle.result(), timeout=60)
            left = await handle.query("question", result_type=PendingQuestion | None)
    # What `outlast stop` says: it said "after its current turn (a tool running now finishes
    # first ...)" (a user test, 2026-12-07).
    said = " ".join(out.split())
    assert code == 0 and "it waits for answers to its questions, so it ends now" in said, said
    # The stop ends the run at the turn's end: the model is not called again to read it.
    assert result.stopped and result.status == "completed" and result.turns == 1
    assert left is None


async def test_a_sub_agent_is_not_offered_the_question_and_its_call_is_refused(client, git_repo):
    ask = {"name": "AskUserQuestion", "input": {"questions": [DB]}}
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [{"tool_use": ask}, {"text": "chose Postgres myself"}],
            },
            {
                "name": "main",
                "turns": [
                    {"tool_use": spawn("helper", "pick a database", background=False)},
                    {"text": "done"},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await asyncio.wait_for(handle.result(), timeout=60)
            child = client.get_workflow_handle(f"{handle.id}/helper", result_type=AgentResult)
            child_result = await child.result()
    assert result.status == "completed" and child_result.status == "completed"
    [refused] = tool_results(child_result)
    assert refused.is_error and "No such tool available: AskUserQuestion" in refused.content
    helper_tools = {
        t["name"]
        for entry in model.log
        if entry["agent"] == "helper"
        for t in entry["body"]["tools"]
    }
    assert helper_tools and "AskUserQuestion" not in helper_tools
    main_tools = {t["name"] for t in model.log[0]["body"]["tools"]}
    assert "AskUserQuestion" in main_tools


async def test_the_wait_outlives_its_workers(client, git_repo):
    """A deploy while the user thinks: the workers go away, new ones come, the questions
    are still there and the answer still lands."""
    with scripted_model(ASK) as _:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("set it up", git_repo, queues), queues)
            await waiting_question(handle)
        async with running_workers(client, queues=queues):
            pending = await waiting_question(handle)
            assert pending.request_id == "question-1"
            answers = {DB["question"]: "Postgres (Recommended)", CHECKS["question"]: "Lint"}
            done = await handle.execute_update(
                "answer_question", QuestionAnswers(answers=answers), result_type=str
            )
            result = await asyncio.wait_for(handle.result(), timeout=60)
    assert done == "question-1" and result.status == "completed"
    [answered] = tool_results(result)
    assert '"Which database should the service use?"="Postgres (Recommended)"' in answered.content


class Terminal:
    """`outlast` run on a pseudo-terminal: what it shows, and what the person types."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        import pty

        self.controller, terminal = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "outlast.cli", *argv],
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=env,
            close_fds=True,
        )
        os.close(terminal)
        self.seen = b""

    def until(self, text: bytes, timeout: float = 60, after: int = 0) -> None:
        """Read the terminal until `text` shows (after byte `after` of what it showed, its
        colours taken out)."""
        import select

        deadline = time.monotonic() + timeout
        while text not in self.plain()[after:]:
            assert time.monotonic() < deadline, self.shown()
            ready, _, _ = select.select([self.controller], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.controller, 65536)
                except OSError:  # the process closed the terminal
                    break
        assert text in self.plain()[after:], self.shown()

    def plain(self) -> bytes:
        """What the terminal showed without its escape sequences (colours, cursor)."""
        return re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", self.seen)

    def type(self, text: bytes) -> None:
        os.write(self.controller, text)

    def shown(self) -> str:
        return self.seen.decode(errors="replace")[-2000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.controller)


def ask_on_a_terminal(dev_server, model, git_repo, wf_id: str) -> Terminal:
    from tests.workflows.test_cli_run import cli_env

    env = cli_env(dev_server, model, TERM="xterm", COLUMNS="120", LINES="40")
    return Terminal(["run", "set it up", "--repo", str(git_repo), "--id", wf_id], env)


def test_outlast_run_on_a_terminal_asks_the_person_and_sends_the_answers(dev_server, git_repo):
    """A pseudo-terminal: `outlast run` draws its live tree, stops it for the questions,
    takes a wrong answer, asks again, and the agent goes on with what was typed."""
    with scripted_model(ASK, log_bodies=True) as model:
        term = ask_on_a_terminal(dev_server, model, git_repo, "cli-ask-1")
        try:
            term.until(b"answer 1 (Database): ")
            term.type(b"1,2\n")  # one choice only: asked again
            term.until(b"takes one choice")
            term.until(b"answer 1 (Database): ", 5, after=term.plain().index(b"takes one choice"))
            term.type(b"2\n")
            term.until(b"answer 2 (Checks): ")
            term.type(b"my own: lint only\n")
            term.until(b"question-1 answered")
            assert term.proc.wait(timeout=60) == 0, term.shown()
            term.until(b"Going with that.", 5)
        finally:
            term.close()
    last = model.log[-1]["body"]["messages"][-1]["content"][0]["content"]
    assert '"Which database should the service use?"="SQLite"' in last
    assert '"Which checks should run before merging?"="my own: lint only"' in last


async def test_ctrl_c_at_the_question_detaches_at_once(client, dev_server, git_repo):
    """Ctrl-C while `outlast run` waits for the person's answer detaches, exit 0, as it does
    anywhere else (the prompt read its line in a thread that Python waits for at exit: the
    command hung until Enter); the question stays waiting."""
    import signal

    with scripted_model(ASK) as model:
        term = ask_on_a_terminal(dev_server, model, git_repo, "cli-ask-2")
        try:
            term.until(b"answer 1 (Database): ")
            term.proc.send_signal(signal.SIGINT)
            term.until(b"detached", 10)
            # Said as a condition: another worker may serve it (it was said as a fact).
            term.until(b"worker stopped with it: unless another", 10)
            assert term.proc.wait(timeout=10) == 0, term.shown()
        finally:
            term.close()
        # Still waiting (its worker went with the command: nothing answers a query now).
        handle = client.get_workflow_handle("cli-ask-2")
        assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
        await handle.terminate("test over")


async def test_a_question_answered_elsewhere_is_not_asked_any_more(client, dev_server, git_repo):
    """`outlast answer` from another terminal (here, the update itself) while `outlast run`
    asks: the prompt says so and the run is followed to its end."""
    with scripted_model(ASK) as model:
        term = ask_on_a_terminal(dev_server, model, git_repo, "cli-ask-3")
        try:
            term.until(b"answer 1 (Database): ")
            await client.get_workflow_handle("cli-ask-3").execute_update(
                "answer_question",
                QuestionAnswers(
                    request_id="question-1",
                    answers={DB["question"]: "SQLite", CHECKS["question"]: "Lint"},
                ),
            )
            term.until(b"answered elsewhere", 10)
            assert term.proc.wait(timeout=60) == 0, term.shown()
            term.until(b"Going with that.", 5)
        finally:
            term.close()
