"""Bad CLI arguments are refused with a message saying what is wrong; nothing starts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from outlast import cli
from outlast.cli import app
from outlast.runner import StartError
from tests.support import CREDENTIAL_VARS

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, list(args), env={"TEMPORAL_ADDRESS": "127.0.0.1:9", **(env or {})})


def test_missing_repo(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path / "nope"))
    assert out.exit_code == 2 and "no such directory" in out.output


def test_a_repo_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    for extra in ((), ("--pattern", "pipeline")):
        out = run("run", "fix it", "--repo", str(tmp_path / "f"), *extra)
        assert out.exit_code == 2 and "not a directory" in out.output, out.output


def test_unknown_agent_lists_the_available_ones(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), "--agent", "Wizard")
    assert out.exit_code == 2
    assert "Agent type 'Wizard' not found. Available" in out.output and "Explore" in out.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--agent", "Explor"), "Agent type 'Explor' not found (did you mean 'Explore'?)"),
        (("--agent", "explore"), "Agent type 'explore' not found (did you mean 'Explore'?)"),
        (
            ("--pattern", "team", "--teammate", "x:Explor=look"),
            "--teammate x: agent type 'Explor' not found (did you mean 'Explore'?)",
        ),
    ],
)
def test_a_misspelt_agent_type_is_guessed(tmp_path, args, said):
    """A user test: `--teammate x:Explor=do` had only the list of agents to go by."""
    out = run("run", "fix it", "--repo", str(tmp_path), *args)
    assert out.exit_code == 2 and said in " ".join(out.output.split()), out.output


def test_an_agent_whose_file_does_not_load_says_why(tmp_path):
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "broken.md").write_text("---\nname: broken\ndescription: [unclosed\n---\nHi\n")
    for extra in ((), ("--pattern", "team")):
        out = run("run", "fix it", "--repo", str(tmp_path), "--agent", "broken", *extra)
        assert out.exit_code == 2
        text = " ".join(out.output.split())
        assert "'broken' not found" in text and "could not be loaded" in text, text
        assert "broken.md" in text and "YAML" in text, text


def test_empty_task(tmp_path):
    out = run("run", "  ", "--repo", str(tmp_path))
    assert out.exit_code == 2 and "task is empty" in out.output


def test_no_api_key_for_the_in_process_worker(tmp_path):
    out = run(
        "run",
        "fix it",
        "--repo",
        str(tmp_path),
        # HOME: no Anthropic profile of this machine's user counts either.
        env={**dict.fromkeys(CREDENTIAL_VARS, ""), "HOME": str(tmp_path)},
    )
    assert out.exit_code == 2 and "ANTHROPIC_API_KEY is not set" in out.output


def test_max_turns_must_be_positive(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), "--max-turns", "0")
    assert out.exit_code == 2 and "max-turns" in out.output


def test_unknown_pattern_names_the_choices(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), "--pattern", "swarmy")
    assert out.exit_code == 2 and "choose one of single, coordinator, pipeline" in out.output


def test_teammates_are_written_as_name_equals_prompt(tmp_path):
    # None at all is a team whose lead spawns its own (R69).
    out = run("run", "fix it", "--repo", str(tmp_path), "--pattern", "team", "--teammate", "bob")
    assert out.exit_code == 2 and "name=prompt" in out.output
    out = run(
        "run",
        "fix it",
        "--repo",
        str(tmp_path),
        "--pattern",
        "team",
        "--teammate",
        "lead=review",
    )
    assert out.exit_code == 2 and "is named 'lead'" in out.output
    out = run(
        "run",
        "fix it",
        "--repo",
        str(tmp_path),
        "--pattern",
        "team",
        "--teammate",
        "b*d=review",
    )
    assert out.exit_code == 2 and "teammate name 'b*d'" in out.output


def test_fork_join_needs_directives_and_rounds_are_bounded(tmp_path):
    out = run("run", "audit", "--repo", str(tmp_path), "--pattern", "fork-join")
    assert out.exit_code == 2 and "--fork DIRECTIVE" in out.output
    out = run("run", "audit", "--repo", str(tmp_path), "--pattern", "verified", "--max-rounds", "0")
    assert out.exit_code == 2 and "max-rounds" in out.output


def test_pattern_inputs_are_the_public_workflow_inputs(tmp_path):
    from outlast.patterns import PatternArgs, build_pattern_input
    from workflows.contracts import ForkJoinInput
    from workflows.pattern_contracts import CoordinatorInput, PipelineInput, TeamInput

    def build(pattern: str, **kw):
        return build_pattern_input(
            PatternArgs(pattern=pattern, task="do it", repo=tmp_path, host_id="h", **kw)
        )

    assert isinstance(build("coordinator"), CoordinatorInput)
    pipe = build("pipeline", approve=True)
    assert isinstance(pipe, PipelineInput) and pipe.approve_between
    assert [s.name for s in pipe.stages] == ["explore", "plan", "implement", "verify"]
    team = build("team", teammates=["b:Explore=look around", "c=write"], team_tasks=["t1"])
    assert isinstance(team, TeamInput)
    assert [(m.name, m.agent_type) for m in team.members()] == [
        ("lead", "general-purpose"),
        ("b", "Explore"),
        ("c", "general-purpose"),
    ]
    assert [t.subject for t in team.tasks] == ["t1"]
    fj = build("fork-join", forks=["a", "b"])
    assert isinstance(fj, ForkJoinInput) and fj.directives == ["a", "b"] and fj.synthesize


def test_rerun_is_for_a_named_pipeline_stage():
    out = run("reject", "pipe-1", "--rerun")
    assert out.exit_code == 2 and "--rerun is for a pipeline stage" in out.output


@pytest.mark.parametrize("command", ["approve", "reject"])
def test_attempt_is_for_a_named_pipeline_stage_and_counts_from_one(command):
    out = run(command, "pipe-1", "--attempt", "2")
    assert out.exit_code == 2 and "--attempt is for a pipeline stage" in out.output
    out = run(command, "pipe-1", "plan", "--attempt", "0")
    assert out.exit_code == 2 and "greater than or equal to 1" in out.output


def test_team_arguments_name_the_option_at_fault(tmp_path):
    base = ("run", "fix it", "--repo", str(tmp_path), "--pattern", "team")
    out = run(*base, "--teammate", "b:Wizard=look")
    assert out.exit_code == 2 and "--teammate b: agent type 'Wizard' not found" in out.output
    out = run(*base, "--teammate", "lead=look")
    assert out.exit_code == 2 and "is named 'lead'" in out.output
    out = run(*base, "--teammate", "b=look", "--team-task", " ")
    assert out.exit_code == 2 and "--team-task: a task needs a subject" in out.output
    out = run(*base, "--team-name", "core team")
    assert out.exit_code == 2, out.output
    assert "--team-name 'core team': a team's name is letters, digits" in out.output
    out = run("run", "fix it", "--repo", str(tmp_path), "--team-name", "core")
    assert out.exit_code == 2 and "--team-name is for --pattern team, not single" in out.output


def test_a_team_is_named_as_asked_and_team_by_default(tmp_path):
    """Every CLI team was named `team`, and its TeamName search attribute was never set."""
    from outlast.patterns import PatternArgs, build_pattern_input
    from workflows import search_attributes as sa

    def build(**kw):
        args = PatternArgs(pattern="team", task="t", repo=tmp_path, host_id="h", **kw)
        return build_pattern_input(args)

    assert build().team_name == "team"
    assert build(team_name="core").team_name == "core"
    assert sa.for_pattern("team", "s1", team_name="core").get(sa.TEAM_NAME) == "core"
    assert sa.for_pattern("pipeline", "s1").get(sa.TEAM_NAME) is None


def test_plan_first_is_for_a_single_agent(tmp_path):
    from outlast.patterns import PatternArgs, build_pattern_input

    single = build_pattern_input(
        PatternArgs(pattern="single", task="t", repo=tmp_path, host_id="h", plan_first=True)
    )
    assert single.permission_mode == "plan"
    out = run("run", "t", "--repo", str(tmp_path), "--pattern", "pipeline", "--plan")
    assert out.exit_code == 2 and "--plan starts a single agent" in out.output


def test_empty_ids_and_unknown_modes_are_refused_before_any_call():
    for args in (("kill", ""), ("stop", " "), ("show", ""), ("send", "", "hi"), ("attach", "")):
        out = run(*args)
        assert out.exit_code == 2 and "the workflow id is empty" in out.output, args
    for to in ("", "  "):  # an empty --to once went to the lead (a user test, 2026-12-05)
        out = run("send", "team-1", "hi", "--to", to)
        assert out.exit_code == 2 and "--to is empty: name a member" in out.output, to
    out = run("approve", "wf-1", "--mode", "plan")
    assert out.exit_code == 2 and "--mode plan: choose one of default" in out.output


def test_plan_with_an_agent_that_cannot_plan_is_refused(tmp_path):
    """Explore has neither Write nor ExitPlanMode: started to plan, it was told to write its
    plan and ask, could do neither, and ended with nothing asked (a user test, 2026-12-05)."""
    (tmp_path / "a.txt").write_text("a")
    out = run("run", "look", "--repo", str(tmp_path), "--plan", "--agent", "Explore")
    assert out.exit_code == 2
    said = "--plan: the Explore agent cannot plan for approval: it has no ExitPlanMode or Write"
    assert said in " ".join(out.output.split())
    out = run("run", "look", "--repo", str(tmp_path), "--plan", env={"OUTLAST_HOOKS": "{x"})
    assert out.exit_code == 2 and "OUTLAST_HOOKS: not JSON" in out.output


def test_an_agent_defined_to_plan_that_cannot_is_refused(tmp_path):
    """`permissionMode: plan` in a definition without Write or ExitPlanMode: told to write a
    plan and ask, it could do neither, and ran out of turns (a user test, 2026-12-07)."""
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "ro.md").write_text(
        "---\nname: ro\ndescription: d\ntools: Read, Grep\npermissionMode: plan\n---\nbody"
    )
    (agents / "planner.md").write_text(
        "---\nname: planner\ndescription: d\ntools: Read, Write, ExitPlanMode\n"
        "permissionMode: plan\n---\nbody"
    )
    out = run("run", "look", "--repo", str(tmp_path), "--agent", "ro", "--no-worker")
    said = " ".join(out.output.split())
    assert out.exit_code == 2, said
    assert "the ro agent starts in plan mode (permissionMode: plan in " in said
    assert "it has no ExitPlanMode or Write; add them to its tools" in said
    # One that can plan passes this check (and then needs a server, which is not here).
    out = run("run", "look", "--repo", str(tmp_path), "--agent", "planner", "--no-worker")
    assert "cannot reach Temporal at 127.0.0.1:9" in " ".join(out.output.split()), out.output


def test_an_unknown_model_call_mode_names_the_choices(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), "--model-call", "fast")
    assert out.exit_code == 2
    assert "--model-call fast: choose one of regular, local, auto." in out.output


def test_a_misspelt_model_call_mode_in_the_environment_is_refused(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), env={"OUTLAST_MODEL_CALL": "yes"})
    assert out.exit_code == 2
    assert "OUTLAST_MODEL_CALL=yes: choose one of regular, local, auto." in out.output


def test_the_demo_refuses_a_misspelt_model_call_mode_before_starting_anything():
    out = run("demo", env={"OUTLAST_MODEL_CALL": "yes"})
    assert out.exit_code == 2
    assert "OUTLAST_MODEL_CALL=yes: choose one of regular, local, auto." in out.output


@pytest.mark.parametrize("pattern", ["single", "pipeline", "team"])
def test_model_call_wins_over_the_environment_for_every_pattern(monkeypatch, tmp_path, pattern):
    seen = []

    def capture(args):
        seen.append(args.config)
        raise StartError("captured")

    monkeypatch.setattr(cli, "build_pattern_input", capture)
    argv = ["run", "fix it", "--repo", str(tmp_path), "--pattern", pattern]
    out = run(*argv, "--model-call", "auto", env={"OUTLAST_MODEL_CALL": "local"})
    assert out.exit_code == 2 and "captured" in out.output
    assert seen[0].model.local_activity == "auto"
    out = run(*argv, env={"OUTLAST_MODEL_CALL": "local"})
    assert seen[1].model.local_activity is True
    out = run(*argv, env={"OUTLAST_MODEL_CALL": ""})
    assert seen[2].model.local_activity is False


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (("attach", "x"), {}, "cannot reach Temporal at 127.0.0.1:9"),
        (("search-attributes",), {}, "cannot reach Temporal at 127.0.0.1:9"),
        (("ls",), {"OUTLAST_PAYLOAD_KEY": "notbase64!!"}, "OUTLAST_PAYLOAD_KEY is not base64"),
        (("attach", "x"), {"OUTLAST_PAYLOAD_STORE": "bogus"}, "OUTLAST_PAYLOAD_STORE"),
    ],
)
def test_no_server_or_bad_payload_settings_is_one_sentence_not_a_traceback(args, env, said):
    out = run(*args, env=env)
    assert out.exit_code == 2, out.output
    assert out.output.startswith("error: ") and said in out.output, out.output
    assert "Traceback" not in out.output


def test_dev_refuses_a_port_out_of_range():
    out = run("dev", "--port", "99999")
    assert out.exit_code == 2 and "65535" in out.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--max-turns", "2", "--pattern", "pipeline"), "--max-turns is for --pattern single or"),
        (("--approve",), "--approve is for --pattern pipeline, not single"),
        (("--fork", "a", "--pattern", "team"), "--fork is for --pattern fork-join, not team"),
        (("--teammate", "b=help", "--pattern", "verified"), "--teammate is for --pattern team"),
        (("--team-task", "x"), "--team-task is for --pattern team, not single"),
        (("--max-rounds", "2", "--pattern", "fork-join", "--fork", "a"), "--max-rounds is for"),
        (("--agent", "Wizard", "--pattern", "verified"), "--agent Wizard: agent type 'Wizard'"),
        (("--agent", "Wizard", "--pattern", "team"), "--agent Wizard: agent type 'Wizard'"),
        # An implementer that can change no file fails every round.
        (("--agent", "Explore", "--pattern", "verified"), "--agent Explore: Explore is read-only"),
        (("--agent", "Plan", "--pattern", "verified"), "--agent Plan: Plan is read-only"),
        (
            ("--agent", "Wizard", "--pattern", "fork-join", "--fork", "a"),
            "--agent Wizard: agent type 'Wizard'",
        ),
    ],
)
def test_an_option_the_pattern_would_ignore_or_could_not_run_is_refused(tmp_path, args, said):
    out = run("run", "fix it", "--repo", str(tmp_path), *args)
    assert out.exit_code == 2, out.output
    assert said in out.output, out.output


def test_start_task_refuses_a_value_out_of_range_with_a_start_error(tmp_path):
    from outlast.patterns import PatternArgs, build_pattern_input

    with pytest.raises(
        StartError, match="verified: max_rounds: Input should be less than or equal"
    ):
        build_pattern_input(
            PatternArgs(pattern="verified", task="t", repo=tmp_path, host_id="h", max_rounds=11)
        )


def test_steering_options_that_would_be_ignored_are_refused():
    out = run("approve", "wf-1", "build", "--mode", "acceptEdits")
    assert out.exit_code == 2 and "a pipeline stage has none" in out.output


def test_agent_is_refused_where_the_pattern_picks_its_own_agents(tmp_path):
    out = run("run", "fix it", "--repo", str(tmp_path), "--pattern", "pipeline", "--agent", "Plan")
    assert out.exit_code == 2
    assert "--agent is for --pattern single or team or verified or fork-join, not pipeline" in (
        out.output
    )


def test_agent_in_coordinator_mode_names_the_setting(tmp_path):
    out = run(
        "run", "fix it", "--repo", str(tmp_path), "--agent", "Plan",
        env={"CLAUDE_CODE_COORDINATOR_MODE": "1"},
    )  # fmt: skip
    assert out.exit_code == 2 and "CLAUDE_CODE_COORDINATOR_MODE is on" in out.output, out.output


def test_a_refusal_quoting_markup_like_text_prints_it_as_written(tmp_path):
    """`fail` messages quote what a person typed or a model wrote: `[/]` stays text (rich
    would raise on it), an escape sequence does not reach the terminal."""
    out = run("run", "fix it", "--repo", str(tmp_path), "--agent", "a[/]b[bold]\x1b[2J")
    assert out.exit_code == 2, out.output
    assert "Agent type 'a[/]b[bold] [2J' not found" in out.output, out.output
    assert "\x1b" not in out.output


def test_a_server_that_saw_no_worker_is_answered_with_what_to_run(monkeypatch):
    from temporalio.service import RPCError, RPCStatusCode

    from outlast import cli_base
    from outlast.cli_base import server_said

    bare = RPCError("no poller seen for task queue recently, worker may be down", 9, b"")
    said = server_said("wf-1", bare)
    assert said.startswith("wf-1: no poller seen") and "`outlast worker`" in said
    other = RPCError("namespace not found", RPCStatusCode.NOT_FOUND, b"")
    assert server_said("wf-1", other) == "wf-1: namespace not found"
    # The server gone mid-command: said so, not "tcp connect error" alone (a user test).
    gone = RPCError("tcp connect error", RPCStatusCode.UNAVAILABLE, b"")
    said = server_said("wf-1", gone)
    assert said.startswith("wf-1: lost the Temporal server at ") and "is it running?" in said, said
    # At the address this command connected to, which `$TEMPORAL_ADDRESS` need not name.
    monkeypatch.setattr(cli_base, "CONNECTED", ["127.0.0.1:41234"])
    said = server_said("wf-1", gone)
    assert said.startswith("wf-1: lost the Temporal server at 127.0.0.1:41234 "), said


def test_ls_prints_an_aligned_table_with_a_header():
    from datetime import UTC, datetime, timedelta, timezone

    from outlast.cli_inspect import ls_lines
    from outlast.listing import Row

    two_hours_east = timezone(timedelta(hours=2))
    rows = [
        Row(workflow_id="a-long-workflow-id", pattern="team", workflow_type="TeamWorkflow",
            status="running", started=datetime(2026, 12, 4, 12, 0, tzinfo=UTC)),
        Row(workflow_id="b", pattern="single", workflow_type="AgentWorkflow",
            status="completed", started=datetime(2026, 12, 4, 14, 30, tzinfo=two_hours_east)),
    ]  # fmt: skip
    lines = ls_lines(rows)
    assert lines[0].split() == ["WORKFLOW", "ID", "PATTERN", "STATUS", "STARTED", "(UTC)"]
    assert lines[1] == "a-long-workflow-id  team     running    2026-12-04 12:00:00"
    assert lines[2] == "b                   single   completed  2026-12-04 12:30:00"


def test_a_refused_connection_is_said_plainly():
    out = run("ls")  # TEMPORAL_ADDRESS=127.0.0.1:9: nothing listens there
    assert out.exit_code == 2
    text = " ".join(out.output.split())
    assert (
        "cannot reach Temporal at 127.0.0.1:9: nothing listens there (connection refused)" in text
    )
    assert "tonic" not in text and "is it running?" in text


def test_a_decision_the_workflow_type_cannot_take_is_refused_in_a_sentence():
    """`approve pipe-1` asked a pipeline for its plan, `approve plan-1 s1` an agent for a
    stage: the SDK's "handler expected but not found" reached the user (a user test)."""
    from outlast.cli_decide import decision_refusal

    assert "is a pipeline: name the stage" in decision_refusal("p", "PipelineWorkflow", None)
    assert "has no stages" in decision_refusal("a", "AgentWorkflow", "s1")
    assert "no stages and no plan of its own" in decision_refusal("t", "TeamWorkflow", None)
    # With a stage too, the same answer: "leave the stage out" led to "no plan of its own".
    assert decision_refusal("t", "TeamWorkflow", "plan") == decision_refusal(
        "t", "TeamWorkflow", None
    )
    assert "is an AgentWorkflow, which has no stages;" in decision_refusal(
        "a", "AgentWorkflow", "s"
    )
    assert decision_refusal("a", "AgentWorkflow", None) is None
    assert decision_refusal("c", "CoordinatorWorkflow", None) is None
    assert decision_refusal("p", "PipelineWorkflow", "s1") is None


def test_an_empty_fork_directive_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("a")
    out = run("run", "t", "--repo", str(tmp_path), "--pattern", "fork-join", "--fork", "a",
              "--fork", " ")  # fmt: skip
    assert out.exit_code == 2 and "--fork 2 is empty" in out.output


def test_a_retry_is_said_once_per_attempt_not_per_countdown():
    from outlast.retries import same_retry

    a = "model call retrying (attempt 3): 529; next try in 40s"
    assert same_retry(a, "model call retrying (attempt 3): 529; next try in 38s")
    assert not same_retry(a, "model call retrying (attempt 4): 529; next try in 80s")
    assert not same_retry(a, None)


def test_a_single_agent_s_id_names_its_type_whichever_way_it_starts():
    """The API named a single agent `outlast-single-...`, `outlast run` by its type: the same
    agent had two kinds of ids (a user test)."""
    from outlast.patterns import new_pattern_id
    from workflows.contracts import AgentInput, Workspace

    inp = AgentInput(
        prompt="go", workspace=Workspace(root="/r", host_queue="h"), agent_type="Explore"
    )
    assert new_pattern_id("single", inp).startswith("outlast-explore-")
    assert new_pattern_id("team").startswith("outlast-team-")


def test_a_request_no_worker_answered_exits_3_not_2():
    """2 says refused: a script that sent a message again on 2 sent it twice once a worker
    came back (a user test, 2026-12-06)."""
    import typer

    from outlast.cli_base import UNANSWERED_EXIT, not_answered
    from outlast.updates import no_answer_text

    try:
        not_answered(no_answer_text("team2", "message"))
    except typer.Exit as e:
        assert e.exit_code == UNANSWERED_EXIT == 3
    else:
        raise AssertionError("not_answered returned")
