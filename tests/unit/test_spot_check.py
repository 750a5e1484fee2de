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
