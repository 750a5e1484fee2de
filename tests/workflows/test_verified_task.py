"""`VerifiedTaskWorkflow` (R85, R89): FAIL goes back to the same implementer, a fresh
verifier checks again, and no verifier run changes the implementer's checkout."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle

from agents.builtin.verification import NOTHING_RAN
from agents.config import AgentSettings
from agents.verified_task import VERIFIER_KILLED
from outlast.inspect import agent_tree
from outlast.listing import list_rows
from tests.conftest import make_git_repo
from tests.support import fast_config, running_workers, scripted_model, taken_changes
from tests.workflows.test_agent_control import wait_status
from tests.workflows.test_late_mail import SLOW_EXPORT
from workflows import search_attributes as sa
from workflows.contracts import AgentNotification, MailMessage, Workspace
from workflows.pattern_contracts import VerifiedTaskInput, VerifiedTaskResult
from workflows.verified_task import VERIFIER_FAILURE_ENDS

TASK = "Make greet() return 'hi' so that the test suite passes."
APP = "def greet():\n    return 'hello'\n"
TEST = (
    "import unittest\n\nfrom src.app import greet\n\n\n"
    "class GreetTest(unittest.TestCase):\n"
    "    def test_greet(self):\n        self.assertEqual(greet(), 'hi')\n"
)
RUN_TESTS = (
    "cd {{cwd}} && python3 -m unittest 2>&1 | tail -3; echo EXIT=$?; "
    "touch probe.txt && echo WROTE-IN-COPY; "
    "touch /etc/outlast-probe 2>/dev/null || echo RO-ELSEWHERE"
)


def read_app() -> dict:
    return {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}}}


def edit_app(old: str, new: str) -> dict:
    return {
        "tool_use": {
            "name": "Edit",
            "input": {"file_path": "{{cwd}}/src/app.py", "old_string": old, "new_string": new},
        }
    }


def verifier(round_no: int, verdict: str, observed: str) -> dict:
    report = (
        "### Check: the test suite passes\n**Command run:**\n  python3 -m unittest\n"
        f"**Output observed:**\n  {observed}\n**Result: {verdict}**\n\n"
        "### Check: adversarial probe - a write outside the copy is refused\n"
        "**Command run:**\n  touch /etc/outlast-probe 2>/dev/null || echo RO-ELSEWHERE\n"
        "**Output observed:**\n  RO-ELSEWHERE\n**Result: PASS**\n\n"
        f"VERDICT: {verdict}"
    )
    return {
        "name": f"verifier-{round_no}",
        "match": {"agent_type": "verification", "prompt_contains": f"round {round_no})"},
        "turns": [
            {"tool_use": {"name": "Bash", "input": {"command": RUN_TESTS}}},
            {"text": report},
        ],
    }


SCRIPT = {
    "agents": [
        verifier(1, "FAIL", "FAILED (failures=1)"),
        verifier(2, "PASS", "OK"),
        {
            "name": "implementer",
            "match": {"agent_name": "implementer"},
            "turns": [
                read_app(),
                edit_app("'hello'", "'hey'"),  # the first attempt is wrong
                {"text": "IMPL-1: greet() now returns 'hey'."},
                # After the verifier's findings, no new Read: the implementer goes on with
                # what it had read (and written) in its first round.
                edit_app("'hey'", "'hi'"),
                {"text": "IMPL-2: greet() now returns 'hi'; the test passes."},
            ],
        },
    ]
}


def git_status(repo) -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--ignored"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def task_repo(path) -> Path:
    return make_git_repo(
        path,
        {
            "src/__init__.py": "",
            "src/app.py": APP,
            "tests/__init__.py": "",
            "tests/test_app.py": TEST,
        },
    )


async def start_verified(client, queues, repo, wf_id: str, **kw) -> WorkflowHandle:
    """`kw`: more `VerifiedTaskInput` fields."""
    inp = VerifiedTaskInput(
        task=TASK,
        workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
        config=fast_config(),
        **kw,
    )
    return await client.start_workflow(
        "VerifiedTaskWorkflow",
        inp,
        id=wf_id,
        task_queue=queues.task_queue,
        result_type=VerifiedTaskResult,
    )


async def run_verified(client, queues, repo, wf_id: str) -> VerifiedTaskResult:
    return await (await start_verified(client, queues, repo, wf_id)).result()


async def implementer_ends(client, wf_id: str) -> list[AgentNotification]:
    """Each implementer run's end, as the task received it."""
    ends = []
    async for e in client.get_workflow_handle(wf_id).fetch_history_events():
        attrs = e.workflow_execution_signaled_event_attributes
        if attrs.signal_name == "agent_notification":
            (end,) = await client.data_converter.decode(attrs.input.payloads, [AgentNotification])
            ends.append(end)
    return ends


async def test_fail_then_fix_then_pass(client, tmp_path):
    repo = task_repo(tmp_path / "repo")
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    with scripted_model(SCRIPT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            result = await run_verified(client, queues, repo, wf_id)
    assert result.status == "passed", result.message
    assert [r.verdict for r in result.rounds] == ["FAIL", "PASS"]
    first, second = result.rounds
    assert first.changed_files == ["src/app.py"] and "IMPL-1" in first.implementer_text
    assert first.checks[0].command == "python3 -m unittest" and first.checks[0].result == "FAIL"
    assert first.probes_found
    assert "IMPL-2" in second.implementer_text and result.final_text == second.implementer_text
    assert first.verifier_workflow_id != second.verifier_workflow_id  # a fresh verifier
    # `outlast ls` lists the task, not its implementer's resumed run (no child of anything).
    top = {r.workflow_id for r in await list_rows(client, limit=10_000)}
    assert wf_id in top and f"{wf_id}/implementer" not in top
    every = {r.workflow_id for r in await list_rows(client, include_children=True, limit=10_000)}
    assert f"{wf_id}/implementer" in every
    # `ls --all --pattern verified` lists the task's members too; `single` leaves them out.
    verified = {
        r.workflow_id
        for r in await list_rows(client, pattern="verified", include_children=True, limit=10_000)
    }
    assert {wf_id, f"{wf_id}/implementer", first.verifier_workflow_id} <= verified
    single = await list_rows(client, pattern="single", include_children=True, limit=10_000)
    assert not {r.workflow_id for r in single} & verified
    # `outlast show`: the implementer's line adds up both its runs (the resumed one's result
    # counts only itself).
    tree = await agent_tree(client, wf_id)
    (impl,) = [n for n in tree.children if n.row.workflow_id == f"{wf_id}/implementer"]
    last = await client.get_workflow_handle(f"{wf_id}/implementer").result()
    assert impl.runs == 2 and impl.turns > last["turns"], impl
    assert impl.tokens > last["usage"]["total_tokens"], impl
    assert impl.duration_ms > last["usage"]["duration_ms"] > 0, impl
    # The task's own time: it gave none, as if it had taken no time (a user test, 2026-12-07).
    assert result.usage.duration_ms >= impl.duration_ms, (result.usage, impl)
    # The verifier really ran the tests, in its copy: round 1 saw the failure, round 2 OK.
    bash_results = []
    for r in model.log:
        if r["headers"].get("x-outlast-agent-type") == "verification":
            last = r["body"]["messages"][-1]["content"]
            bash_results += [json.dumps(b) for b in last if b.get("type") == "tool_result"]
    assert any("FAILED (failures=1)" in b and "EXIT=0" in b for b in bash_results)
    assert any("\\nOK" in b for b in bash_results)
    # It may write in its copy (builds, caches), and nowhere else.
    assert all("WROTE-IN-COPY" in b and "RO-ELSEWHERE" in b for b in bash_results)
    # R84: the critical reminder is on every verifier turn, once (not piling up).
    verifier_calls = [
        r for r in model.log if r["headers"].get("x-outlast-agent-type") == "verification"
    ]
    assert len(verifier_calls) == 4
    for r in verifier_calls:
        sent = json.dumps(r["body"])
        assert sent.count("VERIFICATION-ONLY task") == 1
    # The findings went back to the same implementer (one resume, full context kept), which
    # is the same agent in both rounds.
    ends = await implementer_ends(client, wf_id)
    assert [e.run_generation for e in ends] == [1, 2] and len({e.agent_id for e in ends}) == 1
    impl = [r for r in model.log if r["headers"].get("x-outlast-agent-name") == "implementer"]
    resumed = json.dumps(impl[3]["body"]["messages"])
    assert "VERDICT: FAIL" in resumed and "IMPL-1" in resumed
    # Nothing the verifiers ran reached the implementer's checkout: only its own edit.
    assert git_status(repo) == " M src/app.py\n"
    assert (repo / "src/app.py").read_text() == "def greet():\n    return 'hi'\n"


def with_mail_answer(script: dict) -> dict:
    """`script` with the implementer answering mail between its first answer and the
    verifier's findings."""
    *verifiers, implementer = script["agents"]
    turns = implementer["turns"]
    answer = {"text": "MAIL-ANSWERED: noted, greet() stays as it is for now."}
    return {"agents": [*verifiers, {**implementer, "turns": [*turns[:3], answer, *turns[3:]]}]}


LATE_MAIL_SCRIPT = with_mail_answer(SCRIPT)


async def implementer_mailed_as_it_ends(client, tmp_path, wf_id: str) -> VerifiedTaskResult:
    """Mail reaches the implementer after its first run's final checks, so a second run
    answers it (tests/workflows/test_late_mail.py)."""
    repo = task_repo(tmp_path / "repo")
    with scripted_model(LATE_MAIL_SCRIPT):
        async with running_workers(client, host_activities=SLOW_EXPORT) as queues:
            handle = await start_verified(client, queues, repo, wf_id)
            implementer = client.get_workflow_handle(f"{wf_id}/implementer")
            await wait_status(implementer, lambda s: s.state == "finished", timeout=60)
            await implementer.signal("send_message", MailMessage(text="from the user: hi"))
            return await handle.result()


async def followed_a_continuing_end(handle: WorkflowHandle) -> bool:
    """The task heard an end that says another run follows (what it did then, the round's
    texts tell)."""
    async for e in handle.fetch_history_events():
        signaled = e.workflow_execution_signaled_event_attributes
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED and (
            signaled.signal_name == "agent_notification"
            and b'"continues":true' in signaled.input.payloads[0].data
        ):
            return True
    return False


async def test_a_round_ends_with_the_run_that_answers_late_mail(client, tmp_path):
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    result = await implementer_mailed_as_it_ends(client, tmp_path, wf_id)
    assert await followed_a_continuing_end(client.get_workflow_handle(wf_id))
    assert result.status == "passed", result.message
    first, second = result.rounds
    # Round 1 checked the run that answered the mail, not the one before it; the findings
    # went to the run after that one, and round 2 checked its fix.
    assert "MAIL-ANSWERED" in first.implementer_text and first.verdict == "FAIL"
    assert "IMPL-2" in second.implementer_text and second.verdict == "PASS"
    # The implementer's Read and two Edits, each verifier's Bash: the run that answered the
    # mail carried the first run's figures on (continue-as-new), which had counted twice.
    assert result.usage.tool_uses == 3 + 2, result.usage


async def test_a_partial_verdict_ends_the_task_with_the_report(client, tmp_path):
    """R85/R89: PARTIAL is the environment's limit, not the work's: the task ends `partial`
    after the one round, where it had gone back to the implementer as a FAIL, round after
    round, each meeting the same limit."""
    repo = task_repo(tmp_path / "repo")
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    script = {
        "agents": [
            verifier(1, "PARTIAL", "the server cannot start here"),
            verifier(2, "PASS", "OK"),
            SCRIPT["agents"][2],
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            result = await run_verified(client, queues, repo, wf_id)
    assert result.status == "partial", result.message
    assert [r.verdict for r in result.rounds] == ["PARTIAL"]
    assert [e.run_generation for e in await implementer_ends(client, wf_id)] == [1]


async def test_the_verifier_is_told_of_files_the_implementer_committed(client, tmp_path):
    """The round's changed files are those that differ from HEAD as the task started: a
    commit of the implementer's does not hide its change from the verifier."""
    repo = task_repo(tmp_path / "repo")
    commit = "cd {{cwd}} && git -c user.name=i -c user.email=i@x commit -qam 'greet: hi' && echo C"
    script = {
        "agents": [
            verifier(1, "PASS", "OK"),
            {
                "name": "implementer",
                "match": {"agent_name": "implementer"},
                "turns": [
                    read_app(),
                    edit_app("'hello'", "'hi'"),
                    {"tool_use": {"name": "Bash", "input": {"command": commit}}},
                    {"text": "IMPL-1: committed greet() returning 'hi'."},
                ],
            },
        ]
    }
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            result = await run_verified(client, queues, repo, wf_id)
    assert result.status == "passed", result.message
    assert git_status(repo) == ""  # committed: HEAD alone would show no change
    assert result.rounds[0].changed_files == ["src/app.py"]
    first_ask = next(
        r for r in model.log if r["headers"].get("x-outlast-agent-type") == "verification"
    )
    assert "src/app.py" in json.dumps(first_ask["body"]["messages"][0])


def failing(name: str, match: dict, first: dict) -> dict:
    """An agent whose second model call fails for good (a 400), after one tool call."""
    error = {"error": {"status": 400, "message": "prompt is too long"}}
    return {"name": name, "match": match, "turns": [first, error]}


async def test_what_a_failed_implementer_or_verifier_spent_counts(client, tmp_path):
    """The task's usage takes in the tokens and tool uses of an agent that failed: the
    implementer's from its end's notice, a verifier's read from its run after the end."""
    implementer = SCRIPT["agents"][2]
    cases = [
        ([failing("implementer", {"agent_name": "implementer"}, read_app())], 1),
        ([failing("verifier", {"agent_type": "verification"}, read_app()), implementer], 3),
    ]
    for agents, tool_uses in cases:
        repo = task_repo(tmp_path / f"repo-{tool_uses}")
        inp = VerifiedTaskInput(
            task=TASK,
            workspace=Workspace(root=str(repo), host_queue="set below"),
            config=fast_config(),
            max_rounds=1,
        )
        with scripted_model({"agents": agents}):
            async with running_workers(client) as queues:
                workspace = inp.workspace.model_copy(update={"host_queue": queues.host_queue})
                result = await client.execute_workflow(
                    "VerifiedTaskWorkflow",
                    inp.model_copy(update={"workspace": workspace}),
                    id=f"vt-{uuid.uuid4().hex[:8]}",
                    task_queue=queues.task_queue,
                    result_type=VerifiedTaskResult,
                )
        assert result.status == "failed", result.message
        assert result.usage.tool_uses == tool_uses, result.usage
        assert result.usage.tokens.output_tokens > 0
    assert "verifier: Model call failed" in result.rounds[0].verdict_reason


HANGING_VERIFIER = {
    "agents": [
        {
            "name": "verifier-1",
            "match": {"agent_type": "verification", "prompt_contains": "round 1)"},
            "turns": [
                {"tool_use": {"name": "Bash", "input": {"command": "sleep 60"}}},
                {"text": "never"},
            ],
        },
        verifier(2, "PASS", "OK"),
        SCRIPT["agents"][2],
    ]
}
"""Round 1's verifier runs a command that outlasts the test."""


async def kill_the_first_verifier(
    client, tmp_path, wf_id: str, log: list | None = None, **kw
) -> VerifiedTaskResult:
    """`outlast kill <task>/verify-1` while it runs its command; `log` gets the model's;
    `kw`: more `VerifiedTaskInput` fields."""
    repo = task_repo(tmp_path / "repo")
    with scripted_model(HANGING_VERIFIER, log_bodies=log is not None) as model:
        async with running_workers(client) as queues:
            handle = await start_verified(client, queues, repo, wf_id, **kw)
            first = client.get_workflow_handle(f"{wf_id}/verify-1")
            await wait_status(first, lambda s: "Bash" in s.current_tools, timeout=60)
            await first.cancel()
            result = await handle.result()
    if log is not None:
        log.extend(model.log)
    return result


async def test_a_verifier_killed_on_its_own_is_a_fail_round(client, tmp_path):
    """A hanging verifier killed by hand is a FAIL round, as a verifier that failed is, and
    the task goes on; its cancellation had gone up and failed the task with no result, its
    `AgentStatus` left at `running`. The implementer is told nothing was checked: it was told
    "VERDICT: FAIL (verifier: Cancelled)" with an empty report (a user test)."""
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    log: list = []
    result = await kill_the_first_verifier(client, tmp_path, wf_id, log)
    assert result.status == "passed", result.message
    first, second = result.rounds
    assert first.verdict == "FAIL" and first.verifier_killed, first
    assert first.verdict_reason == VERIFIER_KILLED
    assert second.verdict == "PASS"
    # The implementer's Read and two Edits, and each verifier's Bash (the killed one's too).
    assert result.usage.tool_uses == 3 + 1 + 1, result.usage
    told = json.dumps([r["body"]["messages"][-1] for r in log if r["agent"] == "implementer"])
    assert "The verifier of round 1 was killed by the user before it reported" in told, told
    assert "verifier-report" not in told


async def test_a_last_round_whose_verifier_was_killed_says_nothing_was_checked(client, tmp_path):
    result = await kill_the_first_verifier(
        client, tmp_path, f"vt-{uuid.uuid4().hex[:8]}", max_rounds=1
    )
    assert result.status == "failed"
    assert result.message == f"no PASS after 1 round(s); last VERDICT: FAIL ({VERIFIER_KILLED})"


async def test_a_long_implementer_run_is_checked_less_and_less_often(client, tmp_path):
    """The task checks that its implementer still runs (a terminated one cannot report) at
    twice the interval each time, as an agent checks its children: at a fixed interval a
    long implementer run filled the task's history."""
    handle = await verified_with_a_slow_implementer(client, tmp_path)
    result = await handle.result()
    assert result.status == "passed", result.message
    waits = [
        e.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta().total_seconds()
        async for e in handle.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]
    assert waits[:3] == [0.5, 1.0, 2.0], waits
    assert len(waits) <= 8, waits  # ~12 in round 1 alone at a fixed half second


async def verified_with_a_slow_implementer(client, tmp_path, wf_id: str | None = None):
    """A verified task (FAIL, then PASS) whose implementer's first turn takes 6 s, checked
    every half second at first; its handle once it has ended."""
    script = {"agents": [dict(a) for a in SCRIPT["agents"]]}
    implementer = script["agents"][-1]
    implementer["turns"] = [
        {**implementer["turns"][0], "delay_ms": 6000},
        *implementer["turns"][1:],
    ]
    repo = task_repo(tmp_path / "repo")
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await client.start_workflow(
                "VerifiedTaskWorkflow",
                VerifiedTaskInput(
                    task=TASK,
                    workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
                    config=fast_config(agents=AgentSettings(liveness_check_s=0.5)),
                ),
                id=wf_id or f"vt-slow-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue,
                result_type=VerifiedTaskResult,
            )
            await handle.result()
    return handle


async def verifier_cannot_run(client, tmp_path, wf_id: str) -> VerifiedTaskResult:
    """A verified task whose verifier's definition is gone when the verifier starts: the
    project defined `Nope` at the task's start (a type no definition has is refused then),
    and the implementer removed it."""
    repo = task_repo(tmp_path / "repo")
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "nope.md").write_text(
        "---\nname: Nope\ndescription: checks\n---\nCheck.\n"
    )
    remove = {"command": "rm {{cwd}}/.claude/agents/nope.md"}
    script = {
        "agents": [
            {
                "name": "implementer",
                "match": {"agent_name": "implementer"},
                "after_last": "repeat_last",
                "turns": [{"tool_use": {"name": "Bash", "input": remove}}, {"text": "IMPL-DONE"}],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_verified(client, queues, repo, wf_id, verifier_type="Nope")
            return await handle.result()


async def test_a_verifier_that_cannot_run_ends_the_task_without_another_round(client, tmp_path):
    """Its failure was a FAIL round: the implementer was sent back to work twice on findings
    there were none of, and the task ended "no PASS after 3 rounds" (a user test)."""
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    result = await verifier_cannot_run(client, tmp_path, wf_id)
    assert result.status == "failed" and len(result.rounds) == 1, result
    assert result.message.startswith("round 1: the verifier could not run: "), result.message
    assert "Nope" in result.message, result.message
    assert len(await implementer_ends(client, wf_id)) == 1
    # Not a verifier's FAIL in what a person reads (a review, 2026-12-07).
    (only,) = result.rounds
    assert only.verifier_failed and not only.verified, only
    from outlast.pattern_follow import round_line

    assert round_line(only).startswith("round 1: not verified: verifier: "), round_line(only)
    assert VERIFIER_FAILURE_ENDS in await taken_changes(client.get_workflow_handle(wf_id))


async def test_a_follow_says_what_the_round_s_agents_are_doing(client, tmp_path):
    """Off a terminal a follow printed a round's verdict only: nothing during a long round
    (a user test). It now says what the implementer, then the verifier, is doing, by turn."""
    import io

    from rich.console import Console

    from outlast.pattern_follow import follow_pattern

    slow = json.loads(json.dumps(SCRIPT))
    implementer = slow["agents"][2]
    for turn in (implementer["turns"][0], implementer["turns"][3], slow["agents"][0]["turns"][0]):
        turn["delay_ms"] = 1500
    repo = task_repo(tmp_path / "repo")
    out = io.StringIO()
    with scripted_model(slow):
        async with running_workers(client) as queues:
            handle = await start_verified(client, queues, repo, f"vt-{uuid.uuid4().hex[:8]}")
            console = Console(file=out, width=300, force_terminal=False)
            result = await follow_pattern(handle, "verified", console, client)
    assert result.status == "passed", result.message
    text = out.getvalue()
    for line in (
        "round 1: implementer: turn 1: calling",
        "round 1: verifier: turn 1: calling",
        "round 2: implementer: turn 1: calling",  # a resumed run counts its own turns
        "round 1: VERDICT: FAIL",
        "round 2: VERDICT: PASS",
    ):
        assert line in text, text


@pytest.mark.parametrize(
    ("role", "agent_type", "said"),
    [
        ("verifier_type", "verifcation", "did you mean 'verification'?"),
        # The implementer gets the config as it is, and the flag is off there: the check
        # passed it, and the implementer failed at its start (a user test, 2026-12-05).
        (
            "implementer_type",
            "verification",
            "'verification' is there only with features.verification_agent",
        ),
    ],
)
async def test_an_agent_type_its_child_will_not_find_is_refused_before_the_implementer_runs(
    client, tmp_path, role, agent_type, said
):
    """A misspelt verifier type failed the task only once the verifier started, after the
    implementer's whole round. The task now looks both types up when it starts."""
    repo = task_repo(tmp_path / "repo")
    assert not fast_config().features.verification_agent
    with scripted_model(SCRIPT) as model:
        async with running_workers(client) as queues:
            wf_id = f"vt-{uuid.uuid4().hex[:8]}"
            handle = await start_verified(client, queues, repo, wf_id, **{role: agent_type})
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(handle.result(), 30)
    cause = failed.value.cause
    assert cause.type == "AgentTypeNotFound" and cause.non_retryable, cause
    assert cause.message.startswith(
        f"VerifiedTaskWorkflow refused: agent type '{agent_type}' ({role}; {said}) not found. "
        "Available agents: "
    ), cause.message
    assert "verification" in cause.message
    assert not model.log


async def refuse_a_read_only_implementer(client, repo, wf_id: str | None = None):
    """A verified task started from a plain client with a read-only implementer (`Plan`):
    the failure, and the model calls made."""
    with scripted_model(SCRIPT) as model:
        async with running_workers(client) as queues:
            wf_id = wf_id or f"vt-{uuid.uuid4().hex[:8]}"
            handle = await start_verified(client, queues, repo, wf_id, implementer_type="Plan")
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(handle.result(), 30)
    return handle, failed.value.cause, model.log


async def test_a_read_only_implementer_is_refused_at_the_start(client, tmp_path):
    """The CLI and the API refused it; a start from any other client ran every round with an
    implementer that could change nothing, and ended `no PASS` (a user test, 2026-12-05)."""
    _, cause, calls = await refuse_a_read_only_implementer(client, task_repo(tmp_path / "repo"))
    assert cause.type == "InvalidAgentInput" and cause.non_retryable, cause
    assert cause.message == (
        "VerifiedTaskWorkflow refused: implementer_type Plan is read-only (no Write, Edit or "
        "NotebookEdit), and that agent must change the code; name an agent that can write, "
        "such as general-purpose"
    )
    assert not calls


async def verifier_ran_nothing(client, tmp: Path, wf_id: str) -> VerifiedTaskResult:
    """Round 1's verifier reports a PASS with its checks written out, having called no tool;
    round 2's runs its Bash (also the replay corpus's `verified_ran_nothing`)."""
    repo = task_repo(tmp / "repo")
    made_up = verifier(1, "PASS", "OK")
    made_up["turns"] = made_up["turns"][1:]  # the report only: its Bash never ran
    script = {"agents": [made_up, verifier(2, "PASS", "OK"), SCRIPT["agents"][2]]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            return await run_verified(client, queues, repo, wf_id)


async def test_a_pass_from_a_verifier_that_ran_nothing_is_a_fail_round(client, tmp_path):
    """A report with `**Command run:**` and `**Output observed:**` blocks, from a verifier
    that called no tool: the task read `passed`, "2 checks run", with the tests still
    failing (a user test). Counted as a FAIL, the findings go back to the implementer."""
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    result = await verifier_ran_nothing(client, tmp_path, wf_id)
    assert [r.verdict for r in result.rounds] == ["FAIL", "PASS"], result.rounds
    assert result.rounds[0].verdict_reason == NOTHING_RAN
    assert result.status == "passed"
    assert "verifier-ran-nothing" in await taken_changes(client.get_workflow_handle(wf_id))


async def verifier_made_up_output(client, tmp: Path, wf_id: str) -> VerifiedTaskResult:
    """Round 1's verifier runs the tests (they fail) and reports a PASS with output it wrote
    itself; round 2's copies what it ran (also the replay corpus's `verified_spot_check`)."""
    repo = task_repo(tmp / "repo")
    made_up = verifier(1, "PASS", "Ran 4 tests in 0.002s\n  OK (all green)")
    script = {"agents": [made_up, verifier(2, "PASS", "OK"), SCRIPT["agents"][2]]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            return await run_verified(client, queues, repo, wf_id)


async def test_a_pass_whose_output_no_command_printed_is_a_fail_round(client, tmp_path):
    """R82: the caller spot-checks a report's output. A verifier that ran the tests, saw
    them fail and reported a PASS with output of its own passed the task (a user test):
    its conversation has what its commands printed, and the made-up lines are in none."""
    wf_id = f"vt-{uuid.uuid4().hex[:8]}"
    result = await verifier_made_up_output(client, tmp_path, wf_id)
    assert [r.verdict for r in result.rounds] == ["FAIL", "PASS"], result.rounds
    assert result.rounds[0].verdict_reason.startswith(
        "PASS, but the check 'the test suite passes' reports output its command did not "
        "print: 'Ran 4 tests in 0.002s'"
    ), result.rounds[0].verdict_reason
    assert result.status == "passed"
    assert "verifier-spot-check" in await taken_changes(client.get_workflow_handle(wf_id))


async def stop_the_implementer(client, tmp_path, wf_id: str):
    """A verified task whose implementer a person stops mid-Bash (`outlast stop
    <task>/implementer`): the task's handle and result."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs
    from workflows.contracts import StopRequest

    hold = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.1; done"}}
    script = {
        "agents": [
            verifier(1, "PASS", "OK"),
            {
                "name": "implementer",
                "match": {"agent_name": "implementer"},
                "turns": [{"text": "Halfway: read the app.", "tool_use": hold}, {"text": "x"}],
            },
        ]
    }
    repo = task_repo(tmp_path / "repo")
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_verified(client, queues, repo, wf_id)
            implementer = client.get_workflow_handle(f"{wf_id}/implementer")
            await wait_until_tool_runs(implementer, "Bash")
            await implementer.signal("stop", StopRequest(reason="wrong approach"))
            (repo / "released").touch()
            result = await handle.result()
    return handle, result, model.log


async def test_an_implementer_a_person_kills_ends_the_task_with_the_kill_s_words(client, tmp_path):
    """It read "the implementer killed: stopped", the words lost (a user test, 2026-12-07)."""
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    hold = {"name": "Bash", "input": {"command": "sleep 60"}}
    script = {
        "agents": [
            verifier(1, "PASS", "OK"),
            {
                "name": "implementer",
                "match": {"agent_name": "implementer"},
                "turns": [{"text": "Halfway.", "tool_use": hold}, {"text": "x"}],
            },
        ]
    }
    wf_id = f"vt-kill-{uuid.uuid4().hex[:8]}"
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_verified(client, queues, task_repo(tmp_path / "repo"), wf_id)
            implementer = client.get_workflow_handle(f"{wf_id}/implementer")
            await wait_until_tool_runs(implementer, "Bash")
            await implementer.cancel(reason="IKILL")
            result = await asyncio.wait_for(handle.result(), 60)
    assert result.status == "failed", result
    assert result.message == "round 1: the implementer was killed: IKILL", result.message
    (only,) = result.rounds
    assert only.verdict_reason == "the implementer was killed: IKILL; nothing was verified"
    assert not [r for r in model.log if r["agent"].startswith("verifier")], "a verifier ran"


async def test_an_implementer_a_person_stops_ends_the_task_unverified(client, tmp_path):
    """Stopping the implementer is how a person stops a verified task after its current turn;
    its partial work went to a verifier as if it were done (a review, 2026-12-06)."""
    from workflows.verified_task import IMPLEMENTER_STOP_ENDS

    wf_id = f"vt-stop-{uuid.uuid4().hex[:8]}"
    handle, result, log = await stop_the_implementer(client, tmp_path, wf_id)
    assert result.status == "failed", result
    assert result.message == "round 1: the implementer was stopped by the user: wrong approach"
    (only,) = result.rounds
    assert only.implementer_status == "killed" and only.verdict == "FAIL", only
    assert only.implementer_text == "Halfway: read the app."
    assert not [r for r in log if r["agent"].startswith("verifier")], "a verifier ran"
    assert IMPLEMENTER_STOP_ENDS in await taken_changes(handle)
    # Closed before the task did, as stopped: the task's close policy cancelled it in its end,
    # and it ended CANCELED with its `AgentStatus` at `running` (a user test, 2026-12-07).
    implementer = await client.get_workflow_handle(f"{wf_id}/implementer").describe()
    assert implementer.status == WorkflowExecutionStatus.COMPLETED, implementer.status
    assert implementer.typed_search_attributes.get(sa.AGENT_STATUS) == "stopped"
    # `show` gives no verdict: no verifier ran ("VERDICT: FAIL" read as its rejection).
    from outlast.inspect import agent_tree
    from outlast.tree_text import tree_lines

    tree = await agent_tree(client, wf_id)
    assert tree.verdict is None and "VERDICT" not in tree_lines(tree)[0], tree_lines(tree)
