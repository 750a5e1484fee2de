"""R82's spot-check of a verifier's passing checks against what it really ran."""

from agents.builtin.verification import Check
from agents.spot_check import CommandRun, unbacked

RUN = CommandRun(
    command="cd /tmp/copy && python3 -m unittest -q 2>&1 | tail -5; echo EXIT=$?",
    output="----------------------------------------------------------------------\n"
    "Ran 3 tests in 0.001s\n\n\x1b[32mOK\x1b[0m\nEXIT=0",
)


def check(command: str | None, output: str | None, result: str = "PASS") -> Check:
    return Check(title="the suite passes", command=command, output=output, result=result)


def test_a_check_that_ran_and_copied_its_output_is_backed():
    for command in (
        "python3 -m unittest -q",  # without the cd it ran with
        "$ cd /tmp/copy && python3 -m unittest -q",  # as typed at a prompt
        "cd /tmp/copy && python3 -m unittest -q 2>&1 | tail -5; echo EXIT=$? ; # the suite",
    ):
        assert unbacked([check(command, "Ran 3 tests\nOK")], [RUN], [RUN.output]) == "", command
    # Cut short with an ellipsis, or with the verifier's own notes beside the copy.
    cut = "Ran 3 tests in 0.0...\n(the rest is blank)"
    assert unbacked([check("python3 -m unittest -q", cut)], [RUN], [RUN.output]) == ""


def test_a_passing_check_whose_command_never_ran_is_unbacked():
    why = unbacked([check("pytest -q", "Ran 3 tests")], [RUN], [RUN.output])
    assert why.startswith("PASS, but the check 'the suite passes' was never run"), why
    # A short command of the verifier's (`ls`) names no check it happens to be part of.
    ls = CommandRun(command="ls", output="calc.py")
    assert "never run" in unbacked([check("tools/check_all.sh", "calc.py")], [ls], ["calc.py"])
    assert "never run" in unbacked([check(None, "Ran 3 tests")], [RUN], [RUN.output])


def test_a_passing_check_whose_output_was_written_not_copied_is_unbacked():
    made_up = "Ran 12 tests in 0.4s\nOK (skipped=1)"
    why = unbacked([check("python3 -m unittest -q", made_up)], [RUN], [RUN.output])
    assert why.startswith("PASS, but the check 'the suite passes' reports output that none"), why


def test_only_passing_checks_are_judged_and_short_lines_prove_nothing():
    failing = check("pytest -q", "1 failed", result="FAIL")
    skipped = check(None, None, result="skip")
    assert unbacked([failing, skipped], [], []) == ""
    # "OK" and "0" are in almost any output: with nothing longer copied, the output is
    # not judged (the command still is).
    assert unbacked([check("python3 -m unittest -q", "OK\n0\n---")], [RUN], [RUN.output]) == ""


def test_output_of_any_tool_backs_a_check():
    """A background command's output comes back through TaskOutput, not its Bash call."""
    background = CommandRun(command="cd /tmp/copy && make test", output="Running in background")
    later = "<output>\nall 7 checks green\n</output>"
    assert unbacked([check("make test", "all 7 checks green")], [background], [later]) == ""


def test_how_a_model_writes_a_report_is_forgiven():
    """Each of these failed an honest verifier in review (2026-12-06)."""
    ran = CommandRun(
        command="cd /repo && python3 -m pytest \\\n  tests/test_app.py -q 2>&1 | tail -3",
        output="5 passed in 0.12s",
    )
    short = CommandRun(command="pytest", output="3 passed in 0.02s")
    quoted = CommandRun(command="python3 -c 'print(1 + 1)'", output="2")
    cases = [
        ("`python -m pytest tests/test_app.py -q`", "`5 passed in 0.12s`"),  # backticks
        ("python3 -m pytest \\\n  /repo/tests/test_app.py -q", "5 passed in 0.12s"),
        ("cd /w && pytest", "3 passed"),  # it ran the short command with no cd
        ('python -c "print(1 + 1)"', "2"),  # other quotes, python for python3
        ("python3 -m pytest tests/test_app.py -q", "No output"),  # a note, not a copy
        ("python3 -m pytest tests/test_app.py -q", "Exit code: 0"),
    ]
    outputs = [r.output for r in (ran, short, quoted)]
    for command, output in cases:
        assert unbacked([check(command, output)], [ran, short, quoted], outputs) == "", command


def test_a_bare_cd_backs_no_check():
    ran = CommandRun(command="cd /repo && ls", output="app.py")
    why = unbacked([check("cd /repo\nmake all-green", "all green")], [ran], [ran.output])
    assert "never run" in why, why


def test_a_compacted_conversation_is_not_judged():
    """Its calls before the compaction are gone: a check run then would read as never run."""
    from activities.spot_check import judge
    from agents.compaction import continuation
    from agents.messages import Message, ToolResultBlock, ToolUseBlock

    bash = ToolUseBlock(id="t1", name="Bash", input={"command": "make lint"})
    talk = [
        Message.user_text("verify it"),
        Message(role="assistant", content=[bash]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="lint clean")]),
    ]
    made_up = [check("pytest -q", "12 passed")]
    assert "never run" in judge(talk, made_up)
    assert judge([continuation("it ran pytest: 12 passed"), *talk[1:]], made_up) == ""
    assert judge(talk, [check("make lint", "lint clean")]) == ""
