"""Replay-corpus scenarios of one agent: the demo, tool errors, a kill, plan mode, continue-as-new,
the model as a local activity (tests/replay/record.py runs them)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError

from outlast.demo import HERE as DEMO_DIR
from outlast.demo import TASK as DEMO_TASK
from outlast.demo import make_sample_repo
from outlast.scripted_model import load_script
from tests.conftest import make_git_repo
from tests.support import (
    FAST_MODEL,
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    start,
)


async def demo(client: Client, tmp: Path) -> WorkflowHandle:
    repo = make_sample_repo(tmp / "repo")
    script = load_script(DEMO_DIR / "scenario.yaml").model_copy(update={"latency_ms": 0})
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input(DEMO_TASK, repo, queues), queues)
            await handle.result()
    return handle


async def killed(client: Client, tmp: Path) -> WorkflowHandle:
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 1003"}}},
                    {"text": "never"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("sleep", repo, queues), queues)
            await asyncio.sleep(3)
            await handle.cancel()
            try:
                await handle.result()
            except Exception:  # noqa: BLE001 - cancelled, as intended
                pass
    return handle


async def killed_kept_results(client: Client, tmp: Path) -> WorkflowHandle:
    """Killed while its Bash runs, after the Read of the same response finished: the kill
    appends the Read's result to its conversation (patched kill-keeps-results), and the
    Bash call's, as interrupted (patched kill-answers-cut-off-calls)."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    hold = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.1; done"}}
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    script = {"agents": [{"name": "main", "turns": [{"tool_use": [read, hold]}, {"text": "x"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("look", repo, queues), queues)
            await wait_until_tool_runs(handle, "Bash")
            await handle.cancel(reason="enough")
            with contextlib.suppress(Exception):  # cancelled, as intended
                await handle.result()
    return handle


async def failed_kept_results(client: Client, tmp: Path) -> WorkflowHandle:
    """A Read, then a model call the API refuses for good: the agent fails, and keeps the
    Read's result in its conversation (patched failure-keeps-results)."""
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    refused = {"error": {"status": 400, "type": "invalid_request_error", "message": "bad"}}
    script = {"agents": [{"name": "main", "turns": [{"tool_use": read}, refused]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("look", repo, queues), queues)
            with contextlib.suppress(Exception):  # failed, as intended
                await handle.result()
    return handle


async def tool_errors(client: Client, tmp: Path) -> WorkflowHandle:
    repo = make_git_repo(tmp / "repo", {"dup.txt": "alpha\nalpha\n"})
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {
                        "tool_use": [
                            {"name": "Frobnicate", "input": {}},
                            {"name": "Read", "input": {"file_path": "../../etc/passwd"}},
                            {"name": "Read", "input": {"file_path": "{{cwd}}/dup.txt"}},
                        ]
                    },
                    {
                        "tool_use": {
                            "name": "Edit",
                            "input": {
                                "file_path": "{{cwd}}/dup.txt",
                                "old_string": "alpha",
                                "new_string": "beta",
                            },
                        }
                    },
                    {"text": "done"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("try", repo, queues), queues)
            await handle.result()
    return handle


async def scripted(
    client: Client, tmp: Path, script: dict, config=None, repo: Path | None = None
) -> WorkflowHandle:
    """Runs under workflow id = the history's name: replay needs the original id, since
    child workflow ids are derived from it."""
    repo = repo or make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(script):
        async with running_workers(client) as queues:
            kw = {"config": config} if config else {}
            inp = agent_input("go", repo, queues, **kw)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def model_local(client: Client, tmp: Path) -> WorkflowHandle:
    read = {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}}
    turns = [read, {"fail": [529], **read}, {"text": "done"}]
    config = fast_config(model=FAST_MODEL.model_copy(update={"local_activity": True}))
    return await scripted(client, tmp, {"agents": [{"name": "main", "turns": turns}]}, config)


async def model_local_no_model(client: Client, tmp: Path) -> WorkflowHandle:
    """A local model call that a `--no-model` worker took: made again as a regular activity
    (patched no-model-falls-back), which a worker with credentials then makes."""
    from tests.workflows.test_no_model_worker import local_model_call_on_a_worker_without_a_key

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    address = client.service_client.config.target_host
    handle, _, _ = await local_model_call_on_a_worker_without_a_key(
        client, address, repo, tmp, os.environ["OUTLAST_RECORDING"]
    )
    return handle


async def model_auto(client: Client, tmp: Path) -> WorkflowHandle:
    """`model.local_activity: auto`: regular, local (after a quick call), regular (after a
    call of 1.2 s), local. On a cached worker, as local model calls should run."""
    from agents.config import ToolSettings

    read = {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}}
    turns = [read, {"delay_ms": 1200, **read}, read, {"text": "done"}]
    config = fast_config(
        model=FAST_MODEL.model_copy(update={"local_activity": "auto"}),
        tools=ToolSettings(local_tools=True),
    )
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model({"agents": [{"name": "main", "turns": turns}]}):
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("go", repo, queues, config=config)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def continue_as_new(client: Client, tmp: Path) -> WorkflowHandle:
    from agents.config import AgentSettings

    config = fast_config(agents=AgentSettings(turns_per_run=3))
    return await scripted(
        client,
        tmp,
        {
            "agents": [
                {
                    "name": "main",
                    "turns": [
                        *(
                            {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}}
                            for _ in range(7)
                        ),
                        {"text": "read it seven times"},
                    ],
                }
            ]
        },
        config=config,
    )


async def killed_worktree_kept(client: Client, tmp: Path) -> WorkflowHandle:
    """Killed in its worktree session with a change there: its end keeps the worktree and
    names it in its memo (patched worktree-in-memo)."""
    import contextlib

    from temporalio.client import WorkflowFailureError

    from tests.workflows.test_todos import status_when

    hold = {"name": "Bash", "input": {"command": "echo work > w.txt && sleep 60"}}
    enter = {"name": "EnterWorktree", "input": {"name": "kept"}}
    script = {"agents": [{"name": "main", "turns": [{"tool_use": enter}, {"tool_use": hold}]}]}
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await status_when(handle, lambda s: s.current_tools == ["Bash"])
            await handle.cancel(reason="enough")
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def plan(client: Client, tmp: Path, approve: bool) -> WorkflowHandle:
    from tests.workflows.test_plan_mode import APPROVED, REJECTED, wait_for_pending

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(APPROVED if approve else REJECTED):
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("add X", repo, queues), queues, os.environ["OUTLAST_RECORDING"]
            )
            view = await wait_for_pending(handle)
            decision = {"request_id": view.pending.request_id}
            if approve:
                await handle.signal("approve_plan", decision)
            else:
                await handle.signal("reject_plan", {**decision, "feedback": "add error handling"})
            await handle.result()
    return handle


async def plan_decided_by_update(client: Client, tmp: Path) -> WorkflowHandle:
    """The `decide_plan` update approves the plan, after one naming another plan was
    refused (a refused update leaves no history)."""
    from tests.workflows.test_plan_mode import APPROVED, wait_for_pending
    from workflows.contracts import PlanDecision

    repo = make_git_repo(tmp / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    with scripted_model(APPROVED):
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("add X", repo, queues), queues, os.environ["OUTLAST_RECORDING"]
            )
            view = await wait_for_pending(handle)
            with contextlib.suppress(WorkflowUpdateFailedError):
                await handle.execute_update("decide_plan", PlanDecision(request_id="plan-9"))
            decision = PlanDecision(request_id=view.pending.request_id)
            await handle.execute_update("decide_plan", decision, result_type=str)
            await handle.result()
    return handle


async def plan_approved(client: Client, tmp: Path) -> WorkflowHandle:
    return await plan(client, tmp, approve=True)


async def plan_rejected(client: Client, tmp: Path) -> WorkflowHandle:
    return await plan(client, tmp, approve=False)


async def task_output_takes_notice(client: Client, tmp: Path) -> WorkflowHandle:
    """A background command waited for with TaskOutput: the wait gives its end, and takes
    its notification off the queue (patched task-output-takes-notice)."""
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    count = {"command": "echo one && sleep 1 && echo two", "run_in_background": True}
    wait = {"task_id": "{{task_id}}", "timeout": 20000}
    turns = [
        {"tool_use": {"name": "Bash", "input": count}},
        {"tool_use": {"name": "TaskOutput", "input": wait}},
        {"text": "done"},
    ]
    script = {"agents": [{"name": "main", "after_last": "repeat_last", "turns": turns}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("count", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def background_bash(client: Client, tmp: Path) -> WorkflowHandle:
    """Two background commands: one runs to its end, one is stopped by TaskStop; the agent
    waits for both notifications and reads the first's output."""
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {
                                "command": "echo one && sleep 1 && echo two",
                                "description": "count",
                                "run_in_background": True,
                            },
                        }
                    },
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {"command": "sleep 1005", "run_in_background": True},
                        }
                    },
                    {"tool_use": {"name": "TaskStop", "input": {"task_id": "{{task_id}}"}}},
                    {"text": "waiting for the count"},
                    {"text": "done"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("count", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def signal_fields(client: Client, tmp: Path) -> WorkflowHandle:
    """Signals with a field their input does not have, refused (patched signal-unknown-fields),
    then a fitting message that ends the agent."""
    from tests.workflows.test_from_code import BUSY_UNTIL_FITTING
    from workflows.contracts import AgentStatus

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(BUSY_UNTIL_FITTING):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.signal("background", {"agentid": "a1"})
            await handle.signal("reject_plan", {"feedbak": "use X"})
            for _ in range(100):
                status = await handle.query("status", result_type=AgentStatus)
                if len(status.refused_signals) == 2:
                    break
                await asyncio.sleep(0.1)
            await handle.signal("send_message", {"text": "FITTING-TEXT", "later_field": 1})
            await handle.result()
    return handle


async def backgrounded_refused(client: Client, tmp: Path) -> WorkflowHandle:
    """A `set_backgrounded` with an input, to a top-level agent: refused (patched
    set-backgrounded-checked), then a fitting message that ends the agent; on the code
    before, it marked the agent `IsBackground` (an upsert)."""
    from tests.workflows.test_from_code import BUSY_UNTIL_FITTING

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(BUSY_UNTIL_FITTING):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.signal("set_backgrounded", {"x": 1})
            await asyncio.sleep(1)  # handled before the message that ends it
            await handle.signal("send_message", {"text": "FITTING-TEXT"})
            await handle.result()
    return handle


async def unknown_signal(client: Client, tmp: Path) -> WorkflowHandle:
    """A signal of a name no handler has (`stopp`) comes while the agent waits for mail,
    then a fitting message ends it. On the code before the dynamic handlers Temporal kept
    it unread (`agent_unknown_signal_v0`); now it is refused into `refused_signals`."""
    from tests.workflows.test_from_code import BUSY_UNTIL_FITTING

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(BUSY_UNTIL_FITTING):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.signal("stopp", {})
            await asyncio.sleep(1)  # handled (or kept) before the message that ends it
            await handle.signal("send_message", {"text": "FITTING-TEXT"})
            await handle.result()
    return handle


async def unknown_field(client: Client, tmp: Path) -> WorkflowHandle:
    """A client's start with a misspelt field (`max_turn`): refused, the workflow failed
    before its first model call (patched input-unknown-fields)."""
    from temporalio.client import WorkflowFailureError

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}):
        async with running_workers(client) as queues:
            workspace = {"root": str(repo), "host_queue": queues.host_queue}
            handle = await client.start_workflow(
                "AgentWorkflow",
                {"prompt": "go", "workspace": workspace, "max_turn": 1},
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
            )
            try:
                await handle.result()
            except WorkflowFailureError:
                pass
    return handle


async def todos(client: Client, tmp: Path) -> WorkflowHandle:
    """TodoWrite (T7): a list, a call that does not fit, the list updated beside a Read in
    one turn, then every item completed."""

    def todo(content: str, status: str) -> dict:
        return {"content": content, "status": status, "activeForm": content + "ing"}

    def write(*items: dict) -> dict:
        return {"name": "TodoWrite", "input": {"todos": list(items)}}

    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    turns = [
        {"tool_use": write(todo("Read", "in_progress"), todo("Answer", "pending"))},
        {"tool_use": {"name": "TodoWrite", "input": {"todos": [{"content": "x"}]}}},
        {"tool_use": [read, write(todo("Read", "completed"), todo("Answer", "in_progress"))]},
        {"tool_use": write(todo("Read", "completed"), todo("Answer", "completed"))},
        {"text": "done"},
    ]
    return await scripted(client, tmp, {"agents": [{"name": "main", "turns": turns}]})


async def new_calls(client: Client, tmp: Path) -> WorkflowHandle:
    """Calls only a later release takes (workflows/new_calls.py), beside Reads in one turn:
    TodoWrite, and Read with `pages`. Recorded before them (`agent_new_calls_v0`, on
    a832e70, where both were refused and so ran as batches of their own) and after."""
    import io

    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(3):
        writer.add_blank_page(width=100, height=100)
    pdf = io.BytesIO()
    writer.write(pdf)
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    (repo / "doc.pdf").write_bytes(pdf.getvalue())
    todo = {"content": "Read", "status": "in_progress", "activeForm": "Reading"}

    def read(name: str, **extra: str) -> dict:
        return {"name": "Read", "input": {"file_path": "{{cwd}}/" + name, **extra}}

    turns = [
        {
            "tool_use": [
                read("a.txt"),
                {"name": "TodoWrite", "input": {"todos": [todo]}},
                read("b.txt"),
            ]
        },
        {"tool_use": [read("a.txt"), read("doc.pdf", pages="1-2"), read("b.txt")]},
        {"text": "done"},
    ]
    script = {"agents": [{"name": "main", "turns": turns}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.result()
    return handle


async def question(client: Client, tmp: Path) -> WorkflowHandle:
    """AskUserQuestion between two Reads of one turn, answered by the update (patched
    ask-user-question). `agent_question_v0` is the same on a832e70, where it was refused."""
    from temporalio.client import WorkflowQueryFailedError

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    ask = {
        "question": "Which file matters?",
        "header": "File",
        "options": [{"label": "a", "description": "a.txt"}, {"label": "b", "description": "b.txt"}],
    }

    def read(name: str) -> dict:
        return {"name": "Read", "input": {"file_path": "{{cwd}}/" + name}}

    call = {"name": "AskUserQuestion", "input": {"questions": [ask]}}
    turns = [{"tool_use": [read("a.txt"), call, read("b.txt")]}, {"text": "done"}]
    with scripted_model({"agents": [{"name": "main", "turns": turns}]}):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            result = asyncio.ensure_future(handle.result())
            while not result.done():
                try:
                    pending = await handle.query("question")
                except WorkflowQueryFailedError:  # a release without the query: nothing asks
                    break
                if pending:
                    answers = {
                        "request_id": pending["request_id"],
                        "answers": {ask["question"]: "b"},
                    }
                    await handle.execute_update("answer_question", answers)
                    break
                await asyncio.sleep(0.1)
            await result
    return handle


async def notebook_edit(client: Client, tmp: Path) -> WorkflowHandle:
    """NotebookEdit after a Read (patched notebook-edit); `agent_notebook_edit_v0` is the
    same on a832e70, where it was refused as no such tool."""
    import json

    cells = [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "source": ["1"]}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    repo = make_git_repo(tmp / "repo", {"nb.ipynb": json.dumps(nb)})
    path = "{{cwd}}/nb.ipynb"
    change = {"notebook_path": path, "cell_id": "c1", "new_source": "2"}
    turns = [
        {"tool_use": {"name": "Read", "input": {"file_path": path}}},
        {"tool_use": {"name": "NotebookEdit", "input": change}},
        {"text": "done"},
    ]
    return await scripted(client, tmp, {"agents": [{"name": "main", "turns": turns}]}, repo=repo)


async def worktree_session(client: Client, tmp: Path) -> WorkflowHandle:
    """EnterWorktree between two Reads of one turn, a write in the worktree, a refused
    removal and a keep (patched worktree-tools); `agent_worktree_session_v0` is the same on
    58e72f0, where both tools were refused as no such tool."""
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    enter = {"name": "EnterWorktree", "input": {"name": "wt"}}
    turns = [
        {"tool_use": [read, enter, read]},
        {"tool_use": {"name": "Bash", "input": {"command": "echo hi > f.txt"}}},
        {"tool_use": {"name": "ExitWorktree", "input": {"action": "remove"}}},
        {"tool_use": {"name": "ExitWorktree", "input": {"action": "keep"}}},
        {"text": "done"},
    ]
    return await scripted(client, tmp, {"agents": [{"name": "main", "turns": turns}]})


async def skill(client: Client, tmp: Path) -> WorkflowHandle:
    """A Skill call between two Reads of one turn (patched skill-tool): read-only, so the
    three run as one batch; `agent_skill_v0` is the same on 58e72f0, where Skill was refused
    as no such tool and ran alone."""
    skill_md = "---\ndescription: Review a pull request\n---\nReview PR $ARGUMENTS.\n"
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n", ".claude/skills/review/SKILL.md": skill_md})
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    call = {"name": "Skill", "input": {"skill": "review", "args": "7"}}
    turns = [{"tool_use": [read, call, read]}, {"text": "done"}]
    return await scripted(client, tmp, {"agents": [{"name": "main", "turns": turns}]}, repo=repo)


async def web_fetch(client: Client, tmp: Path) -> WorkflowHandle:
    """A WebFetch between two Reads of one turn (patched web-fetch): the three run as one
    batch; `agent_web_fetch_v0` is the same on 58e72f0, where WebFetch was refused as no
    such tool and ran alone. The page is served by a local server for the recording."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tests.support import fast_config

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = b"<html><body><h1>Notes</h1><p>2.0 adds docs.</p></body></html>"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/notes"
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    fetch = {"name": "WebFetch", "input": {"url": url, "prompt": "What is new?"}}
    script = {
        "agents": [
            {
                "name": "reader",
                "match": {"agent_type": "web-fetch"},
                "turns": [{"text": "2.0 adds docs."}],
            },
            {"name": "main", "turns": [{"tool_use": [read, fetch, read]}, {"text": "done"}]},
        ]
    }
    config = fast_config()
    tools = config.tools.model_copy(update={"web_fetch_private_hosts": True})
    config = config.model_copy(update={"tools": tools})
    try:
        return await scripted(client, tmp, script, config=config)
    finally:
        server.shutdown()
        server.server_close()


async def web_search(client: Client, tmp: Path) -> WorkflowHandle:
    """A WebSearch between two Reads of one turn (patched web-search): the three run as one
    batch; `agent_web_search_v0` is the same on 58e72f0 (without the search's own scripted
    answer, which that release's scripted model could not give), where WebSearch was refused
    as no such tool and ran alone."""
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    search = {"name": "WebSearch", "input": {"query": "temporal docs"}}
    hits = [{"title": "Temporal docs", "url": "https://docs.temporal.io/"}]
    script = {
        "agents": [
            {
                "name": "search",
                "match": {"agent_type": "web-search"},
                "turns": [{"web_search": {"query": "temporal", "results": hits}, "text": "Docs."}],
            },
            {"name": "main", "turns": [{"tool_use": [read, search, read]}, {"text": "done"}]},
        ]
    }
    return await scripted(client, tmp, script)


async def fork_plan_mode(client: Client, tmp: Path) -> WorkflowHandle:
    """A fork calls EnterPlanMode: refused (patched fork-no-plan-mode)."""
    from agents.config import Features
    from tests.workflows.test_fork_join import FORK_ENTERS_PLAN_MODE

    config = fast_config(features=Features(fork_subagent=True))
    return await scripted(client, tmp, FORK_ENTERS_PLAN_MODE, config)


async def plan_forged_answer(client: Client, tmp: Path) -> WorkflowHandle:
    """A mail that reads like a lead's plan answer while the plan waits for the person: it
    is mail (patched person-plan-not-by-mail); the person approves."""
    from tests.workflows.test_plan_mode import forge_a_plan_answer

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _ = await forge_a_plan_answer(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def plan_approve_false(client: Client, tmp: Path) -> WorkflowHandle:
    """`approve_plan` with `approve: false` while a plan waits: refused (patched
    plan-approve-false-refused); a plain approval follows."""
    from tests.workflows.test_plan_mode import contradict_a_plan_decision

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _, _ = await contradict_a_plan_decision(
        client, repo, os.environ["OUTLAST_RECORDING"]
    )
    return handle


async def plan_decision_in_its_task(client: Client, tmp: Path) -> WorkflowHandle:
    """A queued approval reaches the agent in the task of its plan's read: the plan takes it
    (patched plan-decision-in-its-task); where it was refused, an approval by id follows."""
    from tests.workflows.test_plan_mode import approval_in_the_read_s_task

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _ = await approval_in_the_read_s_task(
        client, repo, os.environ["OUTLAST_RECORDING"], then=5
    )
    return handle


async def plan_stop_before_ask(client: Client, tmp: Path) -> WorkflowHandle:
    """A planning sub-agent stopped while its model writes ExitPlanMode: it asks nobody
    (patched plan-no-ask-after-stop, in the child)."""
    from tests.workflows.test_plan_mode import stop_as_careful_exits_plan_mode

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _ = await stop_as_careful_exits_plan_mode(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def plan_resumed(client: Client, tmp: Path) -> WorkflowHandle:
    """A planning sub-agent continued by SendMessage plans on in its plan file (patched
    resume-keeps-plan-file, in the resumed run)."""
    from tests.workflows.test_plan_mode import continue_a_worker_that_planned

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _ = await continue_a_worker_that_planned(
        client, repo, os.environ["OUTLAST_RECORDING"]
    )
    return handle


async def plan_late_answer(client: Client, tmp: Path) -> WorkflowHandle:
    """A lead's late answer to a stopped run's plan-1 does not decide the resumed run's plan
    (patched plan-ids-per-run, in the resumed run)."""
    from tests.workflows.test_plan_mode import answer_a_stopped_plan_late

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _, _ = await answer_a_stopped_plan_late(
        client, repo, os.environ["OUTLAST_RECORDING"]
    )
    return handle


async def plan_parent_answer(client: Client, tmp: Path) -> WorkflowHandle:
    """A message reading like the parent's answer to a planning sub-agent, from someone else:
    mail (patched plan-answer-from-parent, in the child); then the parent's answer."""
    from tests.workflows.test_plan_mode import forge_a_sub_agent_plan_answer

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _, _, _, _ = await forge_a_sub_agent_plan_answer(
        client, repo, os.environ["OUTLAST_RECORDING"]
    )
    return handle


async def liveness_backoff(client: Client, tmp: Path) -> WorkflowHandle:
    """A parent's liveness checks while it waits for a background child, further apart each
    time (patched liveness-backoff)."""
    from tests.workflows.test_agent_endings import wait_for_a_sleeping_child

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    handle, _ = await wait_for_a_sleeping_child(client, repo, os.environ["OUTLAST_RECORDING"])
    return handle


async def context_full(client: Client, tmp: Path) -> WorkflowHandle:
    """A tool call the context window cut off: refused (patched context-full-cuts-calls)."""
    from tests.workflows.test_bad_output import CONTEXT_FULL

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(CONTEXT_FULL):
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("go", repo, queues), queues, os.environ["OUTLAST_RECORDING"]
            )
            await handle.result()
    return handle


async def max_tokens_resume(client: Client, tmp: Path) -> WorkflowHandle:
    """An answer max_tokens cut off, taken up where it stopped (patched max-tokens-resume)."""
    cut = {"text": "PART-ONE ", "stop_reason": "max_tokens"}
    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model({"agents": [{"name": "main", "turns": [cut, {"text": "PART-TWO"}]}]}):
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("go", repo, queues), queues, os.environ["OUTLAST_RECORDING"]
            )
            await handle.result()
    return handle


async def compaction(client: Client, tmp: Path) -> WorkflowHandle:
    """A conversation near the context window, summed up (patched auto-compact); on the code
    before, the same turns went on uncompacted."""
    from tests.workflows.test_compaction import COMPACTED

    repo = make_git_repo(tmp / "repo", {"README.md": "r\n", "notes.txt": "NOTES-CONTENT\n"})
    return await scripted(client, tmp, COMPACTED, repo=repo)


async def compact_too_long(client: Client, tmp: Path) -> WorkflowHandle:
    """A call refused as too long for the window, sent again after a summary (patched
    compact-when-too-long); on the code before, the refusal failed the agent."""
    from temporalio.client import WorkflowFailureError

    from tests.workflows.test_compaction import TOO_LONG

    repo = make_git_repo(tmp / "repo", {"README.md": "# sample\n"})
    with scripted_model(TOO_LONG):
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("go", repo, queues), queues, os.environ["OUTLAST_RECORDING"]
            )
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def blank_mail(client: Client, tmp: Path) -> WorkflowHandle:
    """A `send_message` with blank text, refused (patched blank-mail-refused), then a fitting
    message that ends the agent; on the code before, the blank one reached the model, whose
    refusal (400) failed the agent."""
    from temporalio.client import WorkflowFailureError
    from temporalio.service import RPCError

    from tests.workflows.test_from_code import BUSY_UNTIL_FITTING

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(BUSY_UNTIL_FITTING):
        async with running_workers(client) as queues:
            inp = agent_input("go", repo, queues)
            handle = await start(client, inp, queues, wf_id=os.environ["OUTLAST_RECORDING"])
            await handle.signal("send_message", {"text": " \n "})
            await asyncio.sleep(3)  # a turn or two: the blank one read in, or refused
            with contextlib.suppress(RPCError):  # the run has failed (the code before)
                await handle.signal("send_message", {"text": "FITTING-TEXT"})
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def bad_mode(client: Client, tmp: Path) -> WorkflowHandle:
    """A client's start with a misspelt permission mode (`Plan`): refused (patched
    input-values-checked); on the code before, it ran without plan mode."""
    from temporalio.client import WorkflowFailureError

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}):
        async with running_workers(client) as queues:
            workspace = {"root": str(repo), "host_queue": queues.host_queue}
            handle = await client.start_workflow(
                "AgentWorkflow",
                {"prompt": "go", "workspace": workspace, "permission_mode": "Plan"},
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
            )
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def lenient_unknown(client: Client, tmp: Path) -> WorkflowHandle:
    """A client's start with an unknown field inside its workspace (`read_only`): refused
    (patched input-lenient-unknown-fields); on the code before, it ran without it."""
    from temporalio.client import WorkflowFailureError

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}):
        async with running_workers(client) as queues:
            workspace = {"root": str(repo), "host_queue": queues.host_queue, "read_only": True}
            handle = await client.start_workflow(
                "AgentWorkflow",
                {"prompt": "go", "workspace": workspace},
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
            )
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def coordinator_client_agent(client: Client, tmp: Path) -> WorkflowHandle:
    """A client's CoordinatorWorkflow start with `agent` set: refused (patched
    coordinator-client-agent-refused); on the code before, it ran that agent."""
    from temporalio.client import WorkflowFailureError

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}):
        async with running_workers(client) as queues:
            workspace = {"root": str(repo), "host_queue": queues.host_queue}
            agent = {"prompt": "go", "workspace": workspace}
            handle = await client.start_workflow(
                "CoordinatorWorkflow",
                {"task": "go", "workspace": workspace, "agent": agent},
                id=os.environ["OUTLAST_RECORDING"],
                task_queue=queues.task_queue,
            )
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
    return handle


async def resumed_by_person(client: Client, tmp: Path) -> WorkflowHandle:
    """An agent terminated during its second model call, resumed by a person (`outlast
    resume`) from its first call's conversation. The latest run's."""
    from outlast.api import resume_task
    from tests.workflows.test_resume_cli import KILLED, second_model_call

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    name = os.environ["OUTLAST_RECORDING"]
    with scripted_model(KILLED):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("List the files.", repo, queues), queues, name)
            await second_model_call(client, handle)
            await handle.terminate("the person changed their mind")
            task = await resume_task(client, name, "go on, but skip the slow part")
            await task.result()
    return client.get_workflow_handle(name)


async def resumed_earlier_child(client: Client, tmp: Path) -> WorkflowHandle:
    """An agent resumed by a person messages the sub-agent its first run spawned, found by
    name (patched earlier-children), which goes on from its own conversation. The latest
    run's."""
    from tests.workflows.test_earlier_children import SCRIPT

    return await _completed_then_resumed(client, tmp, SCRIPT, "ask the helper again")


async def resumed_new_child(client: Client, tmp: Path) -> WorkflowHandle:
    """An agent resumed by a person spawns a child under a name its first run gave: the new
    child gets a workflow id of its own (patched resumed-names-own-id). The latest run's."""
    from tests.workflows.test_earlier_children import NEW_CHILD

    return await _completed_then_resumed(client, tmp, NEW_CHILD, "start a new helper")


async def _completed_then_resumed(
    client: Client, tmp: Path, script: dict, message: str
) -> WorkflowHandle:
    from outlast.resume import resume_agent

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    name = os.environ["OUTLAST_RECORDING"]
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", repo, queues), queues, name)
            await handle.result()
            await resume_agent(client, name, message)
            await client.get_workflow_handle(name).result()
    return client.get_workflow_handle(name)


async def killed_undelivered(client: Client, tmp: Path) -> WorkflowHandle:
    """Killed mid-Bash with a background helper's end queued: its memo keeps the end
    (patched undelivered-in-memo)."""
    from tests.workflows.test_resume_cli import UNDELIVERED, kill_with_an_end_queued

    repo = make_git_repo(tmp / "repo", {"a.txt": "a\n"})
    with scripted_model(UNDELIVERED):
        async with running_workers(client) as queues:
            name = os.environ["OUTLAST_RECORDING"]
            return await kill_with_an_end_queued(client, queues, repo, name)
