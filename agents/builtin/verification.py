"""The `verification` built-in (spec R10, R81-R84): an adversarial verifier with a verdict.

Its job is to break an implementation, not to confirm it. The report ends with one
machine-readable `VERDICT:` line that the caller parses with `parse_verdict`; the checks
before it are parsed with `parse_verification_report` and judged with `effective_verdict`.
"""

from __future__ import annotations

import re
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict

from agents.builtin.explore import READ_ONLY_DENY
from agents.definition import AgentDefinition

Verdict = Literal["PASS", "FAIL", "PARTIAL"]
CheckResult = Literal["PASS", "FAIL", "skip"]

CRITICAL_SYSTEM_REMINDER = (
    "CRITICAL: This is a VERIFICATION-ONLY task. You CANNOT edit, write, or create files IN "
    "THE PROJECT DIRECTORY (tmp is allowed for ephemeral test scripts). You MUST end with "
    "VERDICT: PASS, VERDICT: FAIL, or VERDICT: PARTIAL."
)

PROMPT = """\
You are a verification specialist. Someone else implemented a change; your job is to try \
to break it, not to confirm it. You will receive the original task description, the files \
that were changed and the approach taken (sometimes also a plan or spec file).

Two failure patterns to resist:
- Verification avoidance: reading the code, deciding it looks right, and reporting PASS \
without running anything. Reading code is not verification.
- Being seduced by the first 80%: the happy path works, so you stop looking. The bugs live \
in the remaining 20% - edge cases, error paths, concurrency, the parts nobody demoed.

=== YOU MUST NOT CHANGE THE PROJECT ===
- Do not create, modify or delete files in the project directory.
- Do not install dependencies or change the environment.
- Do not run git write operations (add, commit, push, checkout, reset, stash).
- You may write throwaway test scripts under /tmp or $TMPDIR; delete them when you are done.

Before saying something cannot be tested, check the tools you actually have (for example \
MCP tools for browser automation or HTTP calls).

Baseline, every time:
1. Read CLAUDE.md and the README to learn how the project builds and tests.
2. Build it. A broken build is an automatic FAIL.
3. Run the test suite. Failing tests are an automatic FAIL.
4. Run the linters and type checkers the project uses.
5. Look for regressions in code near the change.

Then pick a strategy for the kind of change:
- Frontend: run the app, drive the changed UI, check the console for errors.
- Backend/API: call the endpoints, including malformed and unauthorised requests.
- CLI: run the commands with valid, invalid and missing arguments; check exit codes.
- Infrastructure/config: validate the configuration and dry-run it where possible.
- Library: exercise the public API as a caller would, not only through existing tests.
- Bug fix: reproduce the original bug first, then show it is gone.
- Mobile: build for the target and exercise the changed screens.
- Data/ML: run the pipeline on a small sample; check shapes, ranges and empty inputs.
- Database migration: migrate up and down on a scratch database; check existing data.
- Refactor: show behaviour is unchanged - same outputs for the same inputs.

Adversarial probes: include at least one, and report its result even when the code \
handles it. Ideas: concurrent calls, boundary values (0, -1, empty, very long, unicode, \
MAX_INT), repeating an operation (idempotency), operations on things that no longer exist. \
A report with zero adversarial probes is a happy-path confirmation, not a verification.

Before you report a FAIL, check that the problem is real: not already handled elsewhere, \
not intentional, and something the implementer can act on.

=== REPORT FORMAT ===
Write every check in exactly this form:

### Check: [what you are verifying]
**Command run:**
  [the exact command you ran]
**Output observed:**
  [the actual output, copied, not paraphrased]
**Result: PASS** (or **Result: FAIL**, with expected vs actual)

A check without a **Command run:** block was skipped, not passed. The caller checks every \
PASS against the commands you ran and what they printed: show each command as you ran it \
and copy its output line for line (cut a long output with `...`, never summarize it); a \
PASS whose output is missing, or was not printed by the command it shows, is rejected.

=== VERDICT ===
End your report with exactly one final line, on its own, in exactly one of these forms:

VERDICT: PASS
VERDICT: FAIL
VERDICT: PARTIAL

Nothing else on that line: no bold, no punctuation, no other wording, and nothing after it.
- PASS: every check ran and the change does what the task asked.
- FAIL: say what failed, with the exact error output and the steps to reproduce it.
- PARTIAL is only for limits of the environment (no test framework, a tool you lack, a \
server that cannot start), never for uncertainty. If a check could run, decide PASS or \
FAIL. With PARTIAL, say what you verified, what you could not and why, and what the \
implementer should know."""

DEFINITION = AgentDefinition(
    agent_type="verification",
    when_to_use=(
        "Adversarial verifier: use it after a non-trivial implementation to try to break it "
        "before you report the work as done. It runs builds, tests and probes without "
        "changing the project and ends with VERDICT: PASS, FAIL or PARTIAL. Pass it the "
        "ORIGINAL user task description, list of files changed, and approach taken."
    ),
    system_prompt=PROMPT,
    disallowed_tools=list(READ_ONLY_DENY),
    model="inherit",
    background=True,
    color="red",
    critical_system_reminder=CRITICAL_SYSTEM_REMINDER,
    source="built-in",
)

VERDICT_RE = re.compile(r"^VERDICT: (PASS|FAIL|PARTIAL)$")


def parse_verdict(text: str) -> Verdict | None:
    """The verdict on the report's last non-empty line, or None if that line is not one (R83).

    Only trailing whitespace is forgiven: `**VERDICT: PASS**` or `VERDICT: PASS.` is no verdict.
    """
    lines = [line.rstrip() for line in text.splitlines()]
    last = next((line for line in reversed(lines) if line), None)
    match = VERDICT_RE.match(last) if last is not None else None
    return cast(Verdict, match.group(1)) if match else None


class Check(BaseModel):
    """One `### Check:` section of a report (R82)."""

    model_config = ConfigDict(frozen=True)

    title: str
    command: str | None
    output: str | None
    result: CheckResult


class VerificationReport(BaseModel):
    """A verifier's report, parsed (R82, R83)."""

    model_config = ConfigDict(frozen=True)

    checks: list[Check]
    probes_found: bool
    verdict: Verdict | None
    verdict_problem: str | None


_CHECK_RE = re.compile(r"^#{3}\s*Check:\s*(.*?)\s*$")
# A section ends at the next heading of level 1-3 or at the verdict line (outside fences).
_SECTION_END_RE = re.compile(r"^(#{1,3}\s|VERDICT\b)")
_FIELD_RE = re.compile(r"^\s*\*\*(Command run|Output observed|Result):?\s*(.*)$")
_RESULT_RE = re.compile(r"^\s*(PASS|FAIL)\b")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
# Pasted output is full of "0", "empty" and "error", so probes are looked for in what the
# verifier chose to do and say (title, command, prose), never in the output it copied.
_PROBE_WORDS_RE = re.compile(
    r"\b(adversarial|boundary|boundaries|edge[ -]cases?|empty|negative|unicode|very long|"
    r"max[_ ]?int|int[_ ]max|concurren(t|tly|cy)|simultaneous(ly)?|rac(e|es|ing)|"
    r"idempoten(t|tly|cy)|orphan(ed|s)?|"
    r"invalid input|malformed)\b",
    re.IGNORECASE,
)
# 0 and -1 are probes in a title, and in a command only as a value ("f(-1)", "limit=0"):
# as a bare argument they are mostly flags and counts ("git log -1", "exit 0").
_TITLE_NUMBER_RE = re.compile(r"(?<![\w.-])(-1|0)(?![\w.])")
_COMMAND_NUMBER_RE = re.compile(r"[(\[=,:]\s*(-1|0)(?![\w.])")
_VERDICT_FORMS = "'VERDICT: PASS', 'VERDICT: FAIL' or 'VERDICT: PARTIAL'"


def _fenced(lines: list[str]) -> list[bool]:
    """For each line, whether it lies inside (or opens or closes) a ``` or ~~~ code fence."""
    inside, marks = False, []
    for line in lines:
        fence = bool(_FENCE_RE.match(line))
        marks.append(inside or fence)
        inside = inside != fence
    return marks


def _block(lines: list[str]) -> str | None:
    """A field's text without code fences or surrounding blank lines; None when empty."""
    kept = [line.rstrip() for line in lines if not _FENCE_RE.match(line)]
    text = "\n".join(kept).strip("\n")
    if not text.strip():
        return None
    indents = [len(line) - len(line.lstrip()) for line in text.splitlines() if line.strip()]
    return "\n".join(line[min(indents) :] for line in text.splitlines())


def _parse_check(title: str, body: list[str], fenced: list[bool]) -> tuple[Check, bool]:
    """The check and whether it is an adversarial probe."""
    fields: dict[str, list[str]] = {}
    prose: list[str] = []
    current: str | None = None
    for line, in_fence in zip(body, fenced, strict=True):
        match = None if in_fence else _FIELD_RE.match(line)
        if match:
            current = match.group(1)
            rest = match.group(2).removeprefix("**").removeprefix(":").strip()
            fields[current] = [rest] if rest else []
            if current == "Result":
                prose.append(rest)
        elif current in ("Command run", "Output observed"):
            fields[current].append(line)
        elif current == "Result":
            fields[current].append(line)
            prose.append(line)
        else:
            prose.append(line)
    command = _block(fields["Command run"]) if "Command run" in fields else None
    output = _block(fields["Output observed"]) if "Output observed" in fields else None
    claimed = _RESULT_RE.match(" ".join(fields.get("Result", [])))
    result = claimed.group(1) if claimed and command and output else "skip"
    probe = bool(
        _PROBE_WORDS_RE.search("\n".join([title, command or "", *prose]))
        or _TITLE_NUMBER_RE.search(title)
        or _COMMAND_NUMBER_RE.search(command or "")
    )
    check = Check(title=title, command=command, output=output, result=cast(CheckResult, result))
    return check, probe


def _verdict_problem(text: str) -> str | None:
    if parse_verdict(text) is not None:
        return None
    last = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), None)
    problem = f"the report does not end with a line {_VERDICT_FORMS}"
    if last is None:
        return f"{problem} (the report is empty)"
    shown = last if len(last) <= 80 else last[:77] + "..."
    return f"{problem} (its last line is {shown!r})"


def parse_verification_report(text: str) -> VerificationReport:
    """The checks, probes and verdict of a verifier's report (R82, R83).

    A check runs from a `### Check: <title>` line to the next heading or the verdict line.
    Its result is what its `**Result: PASS**` / `**Result: FAIL** ...` line claims, but only
    if it shows both a non-empty `**Command run:**` and `**Output observed:**` block;
    otherwise it is `skip`: reading code is not verification. `probes_found` is True when
    some check names an adversarial probe (boundary values, empty or malformed input,
    concurrency, idempotency, orphans, ...) in its title, command or prose.
    """
    lines = text.splitlines()
    fenced = _fenced(lines)
    checks: list[Check] = []
    probes_found = False
    i = 0
    while i < len(lines):
        header = None if fenced[i] else _CHECK_RE.match(lines[i])
        i += 1
        if not header:
            continue
        start = i
        while i < len(lines) and (fenced[i] or not _SECTION_END_RE.match(lines[i])):
            i += 1
        check, probe = _parse_check(header.group(1), lines[start:i], fenced[start:i])
        checks.append(check)
        probes_found = probes_found or probe
    return VerificationReport(
        checks=checks,
        probes_found=probes_found,
        verdict=parse_verdict(text),
        verdict_problem=_verdict_problem(text),
    )


NOTHING_RAN = (
    "PASS, but the verifier called no tool: the output its checks report was never observed"
)


def effective_verdict(
    report: VerificationReport, tool_uses: int | None = None
) -> tuple[Verdict, str]:
    """The verdict the caller acts on, and why it differs from the claimed one ("" if not).

    A missing or malformed verdict is a FAIL; so is a PASS with no executed check (every
    check `skip`, or no checks at all), since nothing was verified; and, given the verifier's
    `tool_uses`, a PASS from a verifier that called no tool at all: its `**Command run:**`
    blocks were written, not run (R82: reading code is not verification, and a check whose
    output does not match a run of its command is rejected).
    """
    if report.verdict is None:
        return "FAIL", report.verdict_problem or f"no final line {_VERDICT_FORMS}"
    if report.verdict == "PASS" and all(c.result == "skip" for c in report.checks):
        return "FAIL", "PASS without any executed check"
    if report.verdict == "PASS" and tool_uses == 0:
        return "FAIL", NOTHING_RAN
    return report.verdict, ""
