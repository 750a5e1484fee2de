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


def judged(runs: list[tuple[str, str]], checks: str) -> str:
    report = parse_verification_report(textwrap.dedent(checks) + "\nVERDICT: PASS\n")
    made = [CommandRun(command=c, output=o) for c, o in runs]
    return unbacked(report.checks, made, [o for _, o in runs])


HONEST = {
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
}

MADE_UP = {
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
        "reports output that none of the verifier's commands printed: 'OK'",
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
        "was never run",
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
        "was never run",
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


def test_output_of_any_tool_backs_a_check():
    """A background command's output comes back through TaskOutput, not its Bash call."""
    background = CommandRun(command="cd /tmp/copy && make test", output="Running in background")
    later = "<output>\nall 7 checks green\n</output>"
    check = Check(title="t", command="make test", output="all 7 checks green", result="PASS")
    assert unbacked([check], [background], [later]) == ""


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
