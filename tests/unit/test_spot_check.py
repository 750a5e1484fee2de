"""R82's spot-check of a verifier's passing checks against what it really ran: reports as
models write them pass, made-up ones fail (cases from a review and a user test, 2026-12-06)."""

import textwrap

import pytest

from agents.builtin.verification import Check, parse_verification_report
from agents.spot_check import CommandRun, unbacked

PASSING = (
    "test_mean (tests.test_calc.TestCalc.test_mean) ... ok\n"
    "test_mean_of_one (tests.test_calc.TestCalc.test_mean_of_one) ... ok\n"
    "test_total (tests.test_calc.TestCalc.test_total) ... ok\n\n"
    "----------------------------------------------------------------------\n"
    "Ran 3 tests in 0.000s\n\nOK\n"
)
FAILING = (
    "F.E\n======\nFAIL: test_mean\n"
    "----------------------------------------------------------------------\n"
    "Ran 3 tests in 0.001s\n\nFAILED (failures=1, errors=1)\n"
)
MULTILINE = (
    "cd /r && python3 -c 'from calc import mean\ntry:\n    mean([])\n"
    'except ValueError as e:\n    print("ValueError:", e)\''
)


def judged(runs: list[tuple[str, str]], checks: str, later: tuple[str, ...] = ()) -> str:
    report = parse_verification_report(textwrap.dedent(checks) + "\nVERDICT: PASS\n")
    made = [CommandRun(command=c, output=o) for c, o in runs]
    return unbacked(report.checks, made, later)


HONEST = {
    "output in quotes, a list marker": (
        [("cd /r && python3 -c 'print(5.0)'; pytest -q -rA", "5.0\nPASSED test_a\n")],
        """
        ### Check: one value
        **Command run:** `python3 -c 'print(5.0)'; pytest -q -rA`
        **Output observed:**
            "5.0"
            - PASSED test_a
        **Result: PASS**
        """,
    ),
    "a probe script and the line that ran it": (
        [("python3 /tmp/probe.py", "5.0\n")],
        """
        ### Check: mean of one
        **Command run:**
            # /tmp/probe.py, written with Write:
            import calc
            print(calc.mean([5]))
            $ python3 /tmp/probe.py
        **Output observed:** 5.0
        **Result: PASS**
        """,
    ),
    "the command echoed, prose above the copy, a decorated line": (
        [("cd /r && pytest -q", "..\n===== 3 passed in 0.02s =====\n")],
        """
        ### Check: tests
        **Command run:** `pytest -q`
        **Output observed:**
            $ cd /r && pytest -q
            All tests pass:
            3 passed in 0.02s (no failures)
        **Result: PASS**
        """,
    ),
    "a subshell, operators without spaces": (
        [("cd /r&&pytest -q|tail -1", "3 passed in 0.02s\n")],
        """
        ### Check: tests
        **Command run:** `(cd /r && pytest -q | tail -1)`
        **Output observed:** 3 passed in 0.02s
        **Result: PASS**
        """,
    ),
    "a multi-line python -c, fenced": (
        [(MULTILINE, "ValueError: mean() of an empty sequence\n")],
        """
        ### Check: empty input raises
        **Command run:**
        ```
        python3 -c 'from calc import mean
        try:
            mean([])
        except ValueError as e:
            print("ValueError:", e)'
        ```
        **Output observed:**
        ```
        ValueError: mean() of an empty sequence
        ```
        **Result: PASS**
        """,
    ),
    "a note for no output": (
        [("cd /r && git status --porcelain", "")],
        """
        ### Check: the working tree is clean
        **Command run:** `git status --porcelain`
        **Output observed:** No output (clean working tree).
        **Result: PASS**
        """,
    ),
    "a span and a note": (
        [("cd /r && git diff --quiet; echo $?", "0\n")],
        """
        ### Check: no diff
        **Command run:** `git diff --quiet; echo $?`
        **Output observed:** `0` (exit code 0, no diff)
        **Result: PASS**
        """,
    ),
    "an ellipsis inside a span, a prompt": (
        [("cd /r && python3 -m unittest -v 2>&1 | tail -3", "Ran 3 tests in 0.000s\n\nOK\n")],
        """
        ### Check: tests
        **Command run:**
        ```bash
        $ python -m unittest -v
        ```
        **Output observed:** `Ran 3 tests in 0.000s ... OK`
        **Result: PASS**
        """,
    ),
    "prose around the copy": (
        [
            (
                "cd /r && python3 -c 'from calc import mean; print(mean([5]), mean([2, 3]))'",
                "5.0 2.5",
            )
        ],
        """
        ### Check: boundary values
        **Command run:** `python3 -c 'from calc import mean; print(mean([5]), mean([2, 3]))'`
        **Output observed:** printed `5.0 2.5` as expected
        **Result: PASS**
        """,
    ),
    "the result inline with the command": (
        [("cd /r && python3 -c 'from calc import mean; print(mean([5]))'", "5.0\n")],
        """
        ### Check: one element
        **Command run:** `python3 -c 'from calc import mean; print(mean([5]))'` → `5.0`
        **Output observed:** `5.0`
        **Result: PASS**
        """,
    ),
    "a cd of its own line, lines left out": (
        [("cd /r/tests && python3 -m unittest test_calc -v", PASSING)],
        """
        ### Check: tests
        **Command run:**
            cd tests
            python -m unittest test_calc -v
        **Output observed:**
            test_mean (tests.test_calc.TestCalc.test_mean) ... ok
            ...
            OK
        **Result: PASS**
        """,
    ),
    "a variable left out, two spans": (
        [("cd /r && PYTHONPATH=. python3 -m unittest -q", "Ran 3 tests in 0.000s\n\nOK\n")],
        """
        ### Check: tests
        **Command run:** `python3 -m unittest -q`
        **Output observed:** `Ran 3 tests in 0.000s`, `OK`
        **Result: PASS**
        """,
    ),
    "two commands run apart, shown as one": (
        [
            ("cd /r && python3 -m unittest -q", "Ran 3 tests in 0.001s\n\nOK\n"),
            ("cd /r && git diff --stat", " calc.py | 2 +-\n 1 file changed\n"),
        ],
        """
        ### Check: tests and diff
        **Command run:** `python3 -m unittest -q && git diff --stat`
        **Output observed:**
        ```
        Ran 3 tests in 0.001s
        OK
        calc.py | 2 +-
        ```
        **Result: PASS**
        """,
    ),
    "a continuation, a relative path, colours": (
        [
            (
                "cd /repo && python3 -m pytest \\\n  /repo/tests/test_app.py -q",
                "\x1b[32m5 passed\x1b[0m in 0.12s",
            )
        ],
        """
        ### Check: tests
        **Command run:**
            python -m pytest \\
              tests/test_app.py -q
        **Output observed:**
            5 passed in 0.12s
        **Result: PASS**
        """,
    ),
    "prose around copies in double quotes (user test, 2026-12-06)": (
        [(MULTILINE, "ValueError: mean() of an empty sequence\n")],
        """
        ### Check: empty input raises
        **Command run:** `python3 -c 'from calc import mean ...'`
        **Output observed:**
            Raises "ValueError: mean() of an empty sequence", as the docstring says
            It printed “mean() of an empty sequence”
        **Result: PASS**
        """,
    ),
}

MADE_UP = {
    "OK echoed by the command, over a real FAILED": (
        [("cd /r && python3 -m unittest -q && echo OK", FAILING)],
        """
        ### Check: tests
        **Command run:** `python3 -m unittest -q && echo OK`
        **Output observed:** OK
        **Result: PASS**
        """,
        "did not print: 'OK'",
    ),
    "a claim after an exit code": (
        [("cd /r && pytest -q; echo Exit code $?", "1 failed, 41 passed in 1.23s\nExit code 1")],
        """
        ### Check: tests
        **Command run:** `pytest -q; echo Exit code $?`
        **Output observed:** Exit code 0 - 42 passed
        **Result: PASS**
        """,
        "did not print: 'Exit code 0 - 42 passed'",
    ),
    "a claim that starts like a note": (
        [("cd /r && pytest -q", "1 failed, 41 passed in 1.23s")],
        """
        ### Check: tests
        **Command run:** `pytest -q`
        **Output observed:** None of the 42 tests failed
        **Result: PASS**
        """,
        "did not print: 'None of the 42 tests failed'",
    ),
    "the command as a span, the claim as prose": (
        [("cd /r && pytest -q", "1 failed, 41 passed in 1.23s")],
        """
        ### Check: tests
        **Command run:** `pytest -q`
        **Output observed:** `pytest -q` reports all 42 tests passed
        **Result: PASS**
        """,
        "did not print: 'pytest -q reports all 42 tests passed'",
    ),
    "the end of a line as the whole": (
        [("cd /r && pytest -q", "===== 1 failed, 41 passed in 1.23s =====")],
        """
        ### Check: tests
        **Command run:** `pytest -q`
        **Output observed:** 41 passed in 1.23s
        **Result: PASS**
        """,
        "did not print: '41 passed in 1.23s'",
    ),
    "another command's output as this one's": (
        [("cd /r && pytest -q", "1 failed, 41 passed"), ("cat README.md", "42 passed in 0.1s")],
        """
        ### Check: tests
        **Command run:** `pytest -q`
        **Output observed:** 42 passed in 0.1s
        **Result: PASS**
        """,
        "did not print: '42 passed in 0.1s'",
    ),
    "the tests failed, the report says OK": (
        [("cd /r && python3 -m unittest -q", FAILING)],
        """
        ### Check: tests
        **Command run:** `python3 -m unittest -q`
        **Output observed:**
            Ran 3 tests in 0.001s

            OK
        **Result: PASS**
        """,
        "reports output its command did not print: 'OK'",
    ),
    "a command run, one added to it": (
        [("cd /r && git status --short", " M calc.py\n")],
        """
        ### Check: tests
        **Command run:** `git status --short && python3 -m pytest -q`
        **Output observed:**
            M calc.py
            3 passed in 0.02s
        **Result: PASS**
        """,
        "did not print: '3 passed in 0.02s'",
    ),
    "ls run, the tests claimed": (
        [("ls", "calc.py\nREADME.md\ntests\n")],
        """
        ### Check: tests
        **Command run:** `ls && python3 -m unittest -q`
        **Output observed:**
            calc.py
            Ran 3 tests, OK
        **Result: PASS**
        """,
        "did not print: 'Ran 3 tests, OK'",
    ),
    "one test run, the suite claimed": (
        [
            (
                "cd /r && python3 -m unittest tests.test_calc.T.test_total",
                "Ran 1 test in 0.000s\n\nOK\n",
            )
        ],
        """
        ### Check: full test suite
        **Command run:** `python3 -m unittest tests.t.T.test_total tests.t.T.test_mean`
        **Output observed:** Ran 3 tests in 0.000s
        **Result: PASS**
        """,
        "was never run",
    ),
    "a second check never run": (
        [("cd /r && echo hi", "hi\n")],
        """
        ### Check: echo
        **Command run:** `echo hi`
        **Output observed:** `hi`
        **Result: PASS**

        ### Check: mean of one
        **Command run:** `python3 -c 'from calc import mean; print(mean([5]))'`
        **Output observed:** `5.0`
        **Result: PASS**
        """,
        "the check 'mean of one' was never run",
    ),
    "a bare cd backs nothing": (
        [("cd /repo && ls", "app.py")],
        """
        ### Check: all green
        **Command run:**
            cd /repo
            make all-green
        **Output observed:** all green
        **Result: PASS**
        """,
        "was never run",
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_a_report_as_models_write_it_is_backed(name):
    runs, checks = HONEST[name]
    assert judged(runs, checks) == "", name


@pytest.mark.parametrize("name", sorted(MADE_UP))
def test_a_made_up_check_is_caught(name):
    runs, checks, said = MADE_UP[name]
    why = judged(runs, checks)
    assert why.startswith("PASS, but the check ") and said in why, why


def test_only_passing_checks_are_judged():
    failing = Check(title="t", command="pytest -q", output="1 failed", result="FAIL")
    skipped = Check(title="s", command=None, output=None, result="skip")
    assert unbacked([failing, skipped], [], []) == ""


def test_a_background_command_s_output_comes_through_task_output():
    launched = "Command running in background with ID: b-1. Output is being written to: /x"
    background = CommandRun(command="cd /tmp/copy && make test", output=launched)
    later = "<output>\nall 7 checks green\n</output>"
    check = Check(title="t", command="make test", output="all 7 checks green", result="PASS")
    assert unbacked([check], [background], [later]) == ""
    # Not for a command that ran in the foreground: its output is its own.
    done = CommandRun(command="cd /tmp/copy && make test", output="1 check red")
    assert "did not print" in unbacked([check], [done], [later])


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
    made_up = [Check(title="t", command="pytest -q", output="12 passed", result="PASS")]
    assert "never run" in judge(talk, made_up)
    assert judge([continuation("it ran pytest: 12 passed"), *talk[1:]], made_up) == ""
    lint = Check(title="t", command="make lint", output="lint clean", result="PASS")
    assert judge(talk, [lint]) == ""
