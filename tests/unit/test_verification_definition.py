"""The `verification` built-in, its verdict and report parsers (spec R10, R81-R84)."""

import pytest

from agents.builtin.verification import (
    DEFINITION,
    NOTHING_RAN,
    PROMPT,
    VERDICT_RE,
    Check,
    effective_verdict,
    parse_verdict,
    parse_verification_report,
)

R84 = (
    "CRITICAL: This is a VERIFICATION-ONLY task. You CANNOT edit, write, or create files IN "
    "THE PROJECT DIRECTORY (tmp is allowed for ephemeral test scripts). You MUST end with "
    "VERDICT: PASS, VERDICT: FAIL, or VERDICT: PARTIAL."
)


def test_definition_fields():
    assert DEFINITION.agent_type == "verification"
    assert DEFINITION.model == "inherit"
    assert DEFINITION.background is True
    assert DEFINITION.color == "red"
    assert DEFINITION.disallowed_tools == ["Agent", "ExitPlanMode", "Edit", "Write", "NotebookEdit"]
    assert DEFINITION.critical_system_reminder == R84
    assert DEFINITION.is_built_in
    assert (
        "the ORIGINAL user task description, list of files changed, and approach taken"
        in DEFINITION.when_to_use
    )


@pytest.mark.parametrize(
    "marker",
    [
        "### Check:",
        "**Command run:**",
        "**Output observed:**",
        "**Result: PASS**",
        "verification avoidance",
        "first 80%",
        "PARTIAL is only for limits of the environment",
        "/tmp",
        # What the spot-check holds a PASS to (agents/spot_check.py): said before, not after.
        "checks every PASS against the commands you ran and what they printed",
        "copy its output line for line",
    ],
)
def test_prompt_markers(marker):
    assert marker.lower() in PROMPT.lower()


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("report\n\nVERDICT: PASS", "PASS"),
        ("report\nVERDICT: FAIL\n   \n", "FAIL"),
        ("VERDICT: PARTIAL  \n\n", "PARTIAL"),
        ("report\r\nVERDICT: PASS\r\n", "PASS"),
        ("report\n**VERDICT: PASS**", None),
        ("report\nVERDICT: PASS.", None),
        ("report\n  VERDICT: PASS", None),
        ("report\nverdict: pass", None),
        ("report\nVERDICT: MOSTLY", None),
        ("VERDICT: PASS\nthanks for reading", None),
        ("", None),
        ("\n \n", None),
    ],
)
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) == verdict


def test_regex_is_anchored():
    assert VERDICT_RE.pattern == "^VERDICT: (PASS|FAIL|PARTIAL)$"


REPORT = """\
I read the README first.

### Check: test suite passes
**Command run:**
  python -m pytest -q
**Output observed:**
  12 passed in 0.40s
**Result: PASS**

### Check: login rejects an empty password
**Command run:**
```bash
# the empty string is the boundary
curl -s -X POST localhost:8000/login -d 'user=a&password='
```
**Output observed:**
```
{"error": "password required"}
```
**Result: FAIL** expected 400, got 200 with an error body

### Check: handler looks right
I read src/login.py and the logic is correct.
**Result: PASS**

VERDICT: FAIL
"""


def test_report_checks_and_results():
    report = parse_verification_report(REPORT)
    assert report.checks[0] == Check(
        title="test suite passes",
        command="python -m pytest -q",
        output="12 passed in 0.40s",
        result="PASS",
    )
    login = report.checks[1]
    assert login.title == "login rejects an empty password"
    assert login.command == (
        "# the empty string is the boundary\n"
        "curl -s -X POST localhost:8000/login -d 'user=a&password='"
    )
    assert login.output == '{"error": "password required"}'
    assert login.result == "FAIL"
    assert [c.result for c in report.checks] == ["PASS", "FAIL", "skip"]
    assert report.checks[2].command is None
    assert report.probes_found
    assert report.verdict == "FAIL" and report.verdict_problem is None
    assert effective_verdict(report) == ("FAIL", "")


def check(title: str, command: str | None = "make test", output: str | None = "ok") -> str:
    parts = [f"### Check: {title}"]
    if command is not None:
        parts += ["**Command run:**", f"  {command}"]
    if output is not None:
        parts += ["**Output observed:**", f"  {output}"]
    return "\n".join([*parts, "**Result: PASS**", ""])


def test_a_check_without_command_or_output_is_skipped():
    text = check("no command", command=None) + check("no output", output=None)
    text += check("blank output", output="") + "VERDICT: PASS"
    report = parse_verification_report(text)
    assert [c.result for c in report.checks] == ["skip", "skip", "skip"]
    assert report.checks[0].output == "ok" and report.checks[1].command == "make test"


def test_a_result_on_the_next_line_counts():
    text = "### Check: build\n**Command run:**\n  make\n**Output observed:**\n  done\n"
    report = parse_verification_report(text + "**Result:**\nPASS\n\nVERDICT: PASS")
    assert report.checks[0].result == "PASS"


def test_fenced_headings_do_not_split_a_check():
    text = check("docs render", output="```\n### Check: not a check\nVERDICT: PASS\n```")
    report = parse_verification_report(text + "\nVERDICT: PASS")
    assert [c.title for c in report.checks] == ["docs render"]
    assert report.checks[0].output == "### Check: not a check\nVERDICT: PASS"


def test_happy_path_report_has_no_probes():
    text = (
        check("build", "make build", "built 0 targets, 0 errors, empty cache")
        + check("tests", "git log -1 && pytest -x", "exit 0")
        + "VERDICT: PASS"
    )
    report = parse_verification_report(text)
    assert report.probes_found is False
    assert effective_verdict(report) == ("PASS", "")


@pytest.mark.parametrize(
    ("title", "command"),
    [
        ("Boundary values", "make test"),
        ("edge case: huge page", "make test"),
        ("negative limit", "make test"),
        ("Unicode names", "make test"),
        ("very long input", "make test"),
        ("MAX_INT offset", "make test"),
        ("two writers", "run concurrently"),
        ("race between saves", "make test"),
        ("calling twice is idempotent", "make test"),
        ("orphaned lock file", "make test"),
        ("invalid input", "make test"),
        ("malformed JSON", "make test"),
        ("limit of 0", "make test"),
        ("page -1", "make test"),
        ("paging", "python -c 'print(page(-1))'"),
        ("paging", "curl 'localhost/items?limit=0'"),
    ],
)
def test_probes_are_recognised(title, command):
    report = parse_verification_report(check(title, command) + "VERDICT: PASS")
    assert report.probes_found


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("### Check: x\n", "(its last line is '### Check: x')"),
        ("report\n**VERDICT: PASS**", "(its last line is '**VERDICT: PASS**')"),
        ("", "(the report is empty)"),
    ],
)
def test_verdict_problem_explains_what_is_wrong(text, problem):
    report = parse_verification_report(text)
    assert report.verdict is None
    assert report.verdict_problem == (
        "the report does not end with a line 'VERDICT: PASS', 'VERDICT: FAIL' or "
        f"'VERDICT: PARTIAL' {problem}"
    )
    assert effective_verdict(report) == ("FAIL", report.verdict_problem)


def test_a_pass_without_executed_checks_is_a_fail():
    skipped = parse_verification_report(check("reads fine", command=None) + "VERDICT: PASS")
    assert skipped.verdict == "PASS"
    assert effective_verdict(skipped) == ("FAIL", "PASS without any executed check")
    bare = parse_verification_report("All good.\nVERDICT: PASS")
    assert effective_verdict(bare) == ("FAIL", "PASS without any executed check")


def test_partial_and_fail_stand_without_executed_checks():
    partial = parse_verification_report(check("e2e", command=None) + "VERDICT: PARTIAL")
    assert effective_verdict(partial) == ("PARTIAL", "")
    fail = parse_verification_report("The build is broken.\nVERDICT: FAIL")
    assert effective_verdict(fail) == ("FAIL", "")


def test_a_pass_from_a_verifier_that_ran_no_command_is_a_fail():
    """Checks with `**Command run:**` and `**Output observed:**` blocks, from a verifier
    that called no tool: written, not run (a user test: `passed`, "2 checks run", with the
    tests still failing)."""
    text = (
        check("tests", "pytest -q", "2 passed")
        + check("empty input", "calc ''", "0")
        + ("VERDICT: PASS")
    )
    report = parse_verification_report(text)
    assert effective_verdict(report, tool_uses=0) == ("FAIL", NOTHING_RAN)
    assert effective_verdict(report, tool_uses=3) == ("PASS", "")
    assert effective_verdict(report) == ("PASS", "")  # not known: as before
    # A FAIL or a PARTIAL stands: a verifier may fail a task it could not run.
    for verdict in ("FAIL", "PARTIAL"):
        other = parse_verification_report(text.replace("VERDICT: PASS", f"VERDICT: {verdict}"))
        assert effective_verdict(other, tool_uses=0) == (verdict, "")
