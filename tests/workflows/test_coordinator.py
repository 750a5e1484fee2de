"""`CoordinatorWorkflow` (R55-R63): research in parallel, implementation serialised per file
set, verification after, and a synthesized final answer; all on the real dev server."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from agents.builtin.coordinator import COORDINATOR_TOOLS
from agents.config import Features
from tests.support import fast_config, listed, running_workers, scripted_model, tool_results
from workflows.contracts import AgentResult, Workspace
from workflows.pattern_contracts import CoordinatorInput


def worker(name: str, phase: str, prompt: str, files: list[str] | None = None) -> dict:
    return {
        "name": "Agent",
        "input": {
            "subagent_type": "worker",
            "description": f"{phase} {name}",
            "name": name,
            "prompt": prompt,
            "phase": phase,
            "files": files or [],
        },
    }


def stage(name: str, turn: dict, contains=(), lacks=()) -> dict:
    return {
        "name": name,
        "match": {
            "agent_type": "coordinator",
            "conversation_contains": list(contains),
            "conversation_lacks": list(lacks),
        },
        "turns": [turn],
        "after_last": "repeat_last",
    }


FINDINGS = ["FINDING-1", "FINDING-2", "FINDING-3"]
# A research worker may write notes to the shared scratchpad, never to the repository.
RESEARCH_WRITES = {
    1: {
        "name": "Write",
        "input": {"file_path": "{{scratchpad}}/notes.md", "content": "NOTE-FROM-RESEARCH-1\n"},
    },
    2: {"name": "Write", "input": {"file_path": "{{cwd}}/notes.md", "content": "no"}},
    3: {"name": "Glob", "input": {"pattern": "*.py"}},
}
SYNTHESIS = "Summary for the user: greet() now says hi in app.py; FINDING-1..3 addressed."


def coordinator_script() -> dict:
    research = [
        worker(
            f"research-{i}",
            "research",
            f"Look at {{{{cwd}}}}/src/app.py and report FINDING-{i}: how greet() is used. "
            "This research will inform a small change. Report findings - do not modify files.",
        )
        for i in (1, 2, 3)
    ]
    impl_prompt = (
        "In {{cwd}}/src/app.py line 2, change the return value of greet() to '{word}'. "
        "Purpose: the product wants a shorter greeting. Done = file changed; report it."
    )
    return {
        "agents": [
            *(
                {
                    "name": f"research-{i}",
                    "match": {"agent_name": f"research-{i}"},
                    "turns": [
                        {
                            "tool_use": {
                                "name": "Read",
                                "input": {"file_path": "{{cwd}}/src/app.py"},
                            }
                        },
                        {"tool_use": RESEARCH_WRITES[i]},
                        {"text": f"FINDING-{i}: greet() returns 'hello'.\nSummary: read it."},
                    ],
                }
                for i in (1, 2, 3)
            ),
            *(
                {
                    "name": name,
                    "match": {"agent_name": name},
                    "turns": [
                        {
                            "tool_use": {
                                "name": "Read",
                                "input": {"file_path": "{{cwd}}/src/app.py"},
                            }
                        },
                        {
                            "tool_use": {
                                "name": "Write",
                                "input": {
                                    "file_path": "{{cwd}}/src/app.py",
                                    "content": f"def greet():\n    return '{word}'\n",
                                },
                            }
                        },
                        # Long enough that a second writer started too early would overlap.
                        {"delay_ms": 1500, "text": f"{name.upper()}-DONE\nSummary: wrote it."},
                    ],
                }
                for name, word in (("impl-a", "hi"), ("impl-b", "hi there"))
            ),
            {
                "name": "verifier",
                "match": {"agent_name": "verify-1"},
                "turns": [
                    {
                        "tool_use": [
                            {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}},
                            {"name": "Read", "input": {"file_path": "{{scratchpad}}/notes.md"}},
                            # The shell is read-only, but for the scratchpad.
                            {
                                "name": "Bash",
                                "input": {
                                    "command": "touch {{cwd}}/x 2>/dev/null || echo RO-REPO; "
                                    "echo ok > {{scratchpad}}/bash.txt && cat "
                                    "{{scratchpad}}/bash.txt"
                                },
                            },
                        ]
                    },
                    {"text": "### Check: greet\nVERIFIED-OK\nVERDICT: PASS"},
                ],
            },
            stage("final", {"text": SYNTHESIS}, contains=["VERIFIED-OK"]),
            stage(
                "verify",
                {
                    "tool_use": worker(
                        "verify-1",
                        "verification",
                        "Check that {{cwd}}/src/app.py greet() returns 'hi there' and nothing "
                        "else changed. Purpose: sign-off before release. End with a VERDICT.",
                        ["src/app.py"],
                    )
                },
                contains=["IMPL-A-DONE", "IMPL-B-DONE"],
                lacks=['"verify-1"'],
            ),
            stage(
                "implement",
                {
                    "text": "Research is in; launching the two edits.",
                    "tool_use": [
                        worker(
                            "impl-a",
                            "implementation",
                            impl_prompt.replace("{word}", "hi"),
                            ["src/app.py"],
                        ),
                        worker(
                            "impl-b",
                            "implementation",
                            impl_prompt.replace("{word}", "hi there"),
                            ["{{cwd}}/src/app.py"],
                        ),
                    ],
                },
                contains=FINDINGS,
                lacks=['"impl-a"'],
            ),
            stage(
                "start",
                {"text": "Starting research.", "tool_use": research},
                lacks=['"research-1"'],
            ),
            stage("wait", {"text": "Waiting for the workers."}),
        ]
    }


async def start_coordinator(client, queues, repo: Path, wf_id: str, config=None, task=None):
    """A CoordinatorWorkflow on `repo`; `config`: the tests' own by default, with a
    scratchpad (R63)."""
    inp = CoordinatorInput(
        task=task or "Make greet() shorter, carefully.",
        workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
        config=config or fast_config(features=Features(scratchpad=True)),
    )
    return await client.start_workflow(
        "CoordinatorWorkflow", inp, id=wf_id, task_queue=queues.task_queue, result_type=AgentResult
    )


async def run_coordinator(client, queues, repo: Path, wf_id: str):
    handle = await start_coordinator(client, queues, repo, wf_id)
    return handle, await handle.result()


async def test_coordinator_session_phases(client, git_repo):
    wf_id = f"coord-{uuid.uuid4().hex[:8]}"
    with scripted_model(coordinator_script(), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle, result = await run_coordinator(client, queues, git_repo, wf_id)
    assert result.status == "completed", result.error
    assert result.final_text == SYNTHESIS
    assert (git_repo / "src/app.py").read_text() == "def greet():\n    return 'hi there'\n"

    log = model.log
    coordinator_calls = [
        r for r in log if r["headers"].get("x-outlast-agent-type") == "coordinator"
    ]
    # R34: the coordinator's tools are exactly Agent, SendMessage, TaskStop.
    assert {tuple(r["tools"]) for r in coordinator_calls} == {tuple(COORDINATOR_TOOLS)}
    first = coordinator_calls[0]["body"]
    system = "\n".join(b["text"] for b in first["system"])
    assert "Workers spawned via the Agent tool have access to these tools: " in system
    assert "Scratchpad directory: " in system

    # Every worker prompt the model server received is self-contained.
    worker_calls = [r for r in log if r["headers"].get("x-outlast-agent-type") == "worker"]
    for r in worker_calls:
        text = json.dumps(r["body"]["messages"]).lower()
        assert "based on your findings" not in text
    assert {r["headers"]["x-outlast-agent-name"] for r in worker_calls} == {
        "research-1",
        "research-2",
        "research-3",
        "impl-a",
        "impl-b",
        "verify-1",
    }

    # The phase decides the capabilities: research and verification write only to the
    # scratchpad (R63), their shell cannot touch the repository; the verifier reads the note
    # research-1 left there.
    def answers(name: str, turn: int) -> str:
        calls = [r for r in worker_calls if r["headers"]["x-outlast-agent-name"] == name]
        return json.dumps(calls[turn]["body"]["messages"][-1]["content"])

    assert '"is_error": true' not in answers("research-1", 2)
    assert "which this agent may only read" in answers("research-2", 2)
    assert not (git_repo / "notes.md").exists()
    verified = answers("verify-1", 1)
    assert "NOTE-FROM-RESEARCH-1" in verified and "RO-REPO" in verified and "ok" in verified
    assert not (git_repo / "x").exists()
    # R62: workers are told how to commit and to end with a summary line.
    worker_system = "\n".join(b["text"] for b in worker_calls[0]["body"]["system"])
    assert "Summary:" in worker_system and "git add -A" in worker_system

    # The second writer of src/app.py was queued and started only after the first had ended:
    # its model calls all come after the first writer's, and in the coordinator's history the
    # start of impl-b follows impl-a's end notification.
    seqs = {
        name: [r["seq"] for r in worker_calls if r["headers"]["x-outlast-agent-name"] == name]
        for name in ("research-1", "research-2", "research-3", "impl-a", "impl-b", "verify-1")
    }
    assert max(seqs["impl-a"]) < min(seqs["impl-b"])
    assert max(seqs["impl-b"]) < min(seqs["verify-1"])
    # Research ran in parallel: all three were running before any of them ended.
    spans = [
        await client.get_workflow_handle(f"{wf_id}/research-{i}").describe() for i in (1, 2, 3)
    ]
    assert max(d.start_time for d in spans) < min(d.close_time for d in spans)
    launch = [r.content for r in tool_results(result) if "impl-b" in r.content]
    assert any("Queued:" in c and "src/app.py" in c for c in launch), launch

    events = (await handle.fetch_history()).events
    order = []
    for e in events:
        if e.HasField("start_child_workflow_execution_initiated_event_attributes"):
            attrs = e.start_child_workflow_execution_initiated_event_attributes
            order.append(("start", attrs.workflow_id.rsplit("/", 1)[-1]))
        elif e.HasField("workflow_execution_signaled_event_attributes"):
            attrs = e.workflow_execution_signaled_event_attributes
            if attrs.signal_name == "agent_notification":
                payload = json.loads(attrs.input.payloads[0].data)
                order.append(("ended", payload["agent_id"]))
    impl_a = await client.get_workflow_handle(f"{wf_id}/impl-a", result_type=AgentResult).result()
    assert order.index(("start", "impl-b")) > order.index(("ended", impl_a.agent_id))
    assert order.index(("start", "impl-a")) < order.index(("ended", impl_a.agent_id))


async def test_coordinator_refusals_are_tool_errors_it_can_fix(client, git_repo):
    """R55: no shell for the coordinator; R59: an implementation worker must declare its files;
    R56: a prompt that points at the coordinator's conversation is refused; a queued worker
    can be taken off the queue with TaskStop before it ever starts."""
    lazy = "Fix the bug based on your findings."
    script = {
        "agents": [
            {
                "name": "holder",
                "match": {"agent_name": "holder"},
                "turns": [
                    # Outside its declared files: refused, it reports instead.
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{{cwd}}/elsewhere.txt", "content": "x"},
                        }
                    },
                    {"delay_ms": 1500, "text": "HOLDER-DONE"},
                ],
            },
            {
                "name": "coordinator",
                "match": {"agent_type": "coordinator"},
                "turns": [
                    {
                        "tool_use": [
                            {"name": "Bash", "input": {"command": "ls"}},
                            worker("nofiles", "implementation", "Change src/app.py line 2."),
                            worker("lazy", "research", lazy),
                            worker(
                                "holder", "implementation", "Edit README.md title.", ["README.md"]
                            ),
                            worker("globber", "implementation", "Shorten them.", ["src/*.py"]),
                        ]
                    },
                    {
                        "tool_use": worker(
                            "queued", "implementation", "Edit README.md body.", ["README.md"]
                        )
                    },
                    {"tool_use": {"name": "TaskStop", "input": {"task_id": "queued"}}},
                    {"text": "Waiting."},
                    {"text": "All done."},
                ],
                "after_last": "repeat_last",
            },
        ]
    }
    wf_id = f"coord-{uuid.uuid4().hex[:8]}"
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            _, result = await run_coordinator(client, queues, git_repo, wf_id)
    assert result.status == "completed", result.error
    results = tool_results(result)
    by_order = [(r.is_error, r.content) for r in results]
    assert by_order[0][0] and "Bash" in by_order[0][1]
    assert by_order[1][0] and "must declare the files" in by_order[1][1]
    assert by_order[2][0] and "based on your findings" in by_order[2][1]
    assert not by_order[3][0]
    # A pattern, taken as a path, kept no other writer off its files (a user test).
    assert by_order[4][0] and "Declared files are paths, not patterns: src/*.py" in by_order[4][1]
    assert not by_order[5][0] and "Queued:" in by_order[5][1]
    assert not by_order[6][0] and "Removed queued worker" in by_order[6][1]
    names = {r["headers"].get("x-outlast-agent-name") for r in model.log}
    assert not names & {"queued", "nofiles", "lazy", "globber"}, names
    holder = [r for r in model.log if r["headers"].get("x-outlast-agent-name") == "holder"]
    refused = holder[1]["body"]["messages"][-1]["content"][0]
    assert refused["is_error"] and "not among the files this worker declared" in str(refused)
    assert not (git_repo / "elsewhere.txt").exists()


async def test_coordinator_continues_as_new_as_a_coordinator(client, git_repo):
    """The next run is still a `CoordinatorWorkflow` with its workers' table: a worker's
    notification that arrives after the hand-over still reaches it."""
    from agents.config import AgentSettings

    script = {
        "agents": [
            {
                "name": "w",
                "match": {"agent_name": "w"},
                "turns": [{"delay_ms": 1000, "text": "W-FOUND: greet is in src/app.py"}],
            },
            stage("final", {"text": "Done: greet is in src/app.py."}, contains=["W-FOUND"]),
            stage(
                "start",
                {"tool_use": worker("w", "research", "Find greet() in {{cwd}}. Report only.")},
                lacks=['"w"'],
            ),
            stage("wait", {"text": "Waiting for w."}),
        ]
    }
    config = fast_config(agents=AgentSettings(turns_per_run=1))
    wf_id = f"coord-{uuid.uuid4().hex[:8]}"
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = CoordinatorInput(
                task="Where is greet()?",
                workspace=Workspace(root=str(git_repo), host_queue=queues.host_queue),
                config=config,
            )
            handle = await client.start_workflow(
                "CoordinatorWorkflow",
                inp,
                id=wf_id,
                task_queue=queues.task_queue,
                result_type=AgentResult,
            )
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "Done: greet is in src/app.py."
    runs = await listed(client, f'WorkflowId = "{wf_id}"', until=lambda rows: len(rows) >= 3)
    assert len(runs) >= 3
    assert {r.workflow_type for r in runs} == {"CoordinatorWorkflow"}


async def test_a_coordinator_has_a_scratchpad_only_with_the_feature(client, git_repo):
    """R63: `features.scratchpad` (default off, as `tengu_scratch`) decides whether a
    coordinator's session gets a scratchpad, and whether its prompt names one."""
    script = {
        "agents": [
            {"name": "c", "match": {"agent_type": "coordinator"}, "turns": [{"text": "Done."}]}
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            wf_id = f"coord-{uuid.uuid4().hex[:8]}"
            handle = await start_coordinator(
                client, queues, git_repo, wf_id, config=fast_config(), task="Nothing to do."
            )
            assert (await handle.result()).final_text == "Done."
            names = [
                e.activity_task_scheduled_event_attributes.activity_type.name
                async for e in handle.fetch_history_events()
            ]
    assert "workspace.create_scratchpad" not in names
    assert "Scratchpad directory" not in json.dumps(model.log[0]["body"]["system"])
