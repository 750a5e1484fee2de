"""R82's spot-check: a verifier's PASS stands only if each of its passing checks was run.

The seed has the caller audit a verification report by its command output ("主 agent 可以
spot-check verification 的命令输出"); R82: "a PASS step with no output or output that doesn't
match re-execution is rejected". Outlast checks against what the verifier really ran, which
its conversation holds: no command runs twice (a re-run in a changed world, or of a probe
that writes, could differ for reasons of its own), and a made-up report is caught for sure.

The rules forgive how a model writes a report, not what it claims:
- a passing check's command is backed when, word by word (shell quoting undone), a line of
  it is part of one of the verifier's Bash commands, or one of those is part of it: a report
  may leave out the `cd` it ran with, or add one. Backticks, a `$ ` prompt, `\\` line
  continuations, `python` for `python3` and a relative path for an absolute one are
  forgiven; a bare `cd` line backs nothing;
- its output is backed when some line of it is in what the verifier's tools returned. Lines
  under MIN_LINE_CHARS prove nothing either way, nor do the verifier's notes ("(no output)",
  "exit code 0"); a check with nothing else copied is judged by its command alone.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from agents.builtin.verification import Check

MIN_LINE_CHARS = 5
"""Shorter lines ("OK", "True", "0") are in almost any output: they prove nothing."""
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROMPT_RE = re.compile(r"^[$>]\s+")
_WRAPPED_RE = re.compile(r"^(`+|\"|')(.*)\1$")
_NOTE_RE = re.compile(
    r"^(\(.*\)|no output|none|empty|nothing( printed)?|"
    r"exit (code|status):? ?-?\d+|return ?code:? ?-?\d+)\.?$",
    re.IGNORECASE,
)


class CommandRun(BaseModel):
    """One Bash call of the verifier: its command, and what the model was given back."""

    model_config = ConfigDict(frozen=True)

    command: str
    output: str


def _clean(line: str) -> str:
    line = " ".join(_ANSI_RE.sub("", line).split())
    while match := _WRAPPED_RE.match(line):
        line = match.group(2).strip()
    return _PROMPT_RE.sub("", line)


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # an unclosed quote: a command the report cut short
        words = command.split()
    words = [w.removesuffix(";") for w in words]
    return ["python" if w == "python3" else w for w in words if w]


def _same(a: str, b: str) -> bool:
    return a == b or ("/" in a + b and (a.endswith("/" + b) or b.endswith("/" + a)))


def _within(part: list[str], whole: list[str]) -> bool:
    n = len(part)
    return any(
        all(_same(p, w) for p, w in zip(part, whole[i : i + n], strict=True))
        for i in range(len(whole) - n + 1)
    )


def _report_lines(command: str) -> list[list[str]]:
    """The words of each line of a check's command; a bare `cd` proves nothing."""
    lines = [_words(_clean(line)) for line in command.replace("\\\n", " ").splitlines()]
    return [w for w in lines if w and not (w[0] == "cd" and len(w) <= 2)]


def _ran(line: list[str], commands: Sequence[list[str]]) -> bool:
    return any(
        _within(line, ran) or (ran and ran[0] != "cd" and _within(ran, line)) for ran in commands
    )


def _copied_lines(output: str) -> list[str]:
    """The lines of `output` that can only have come from a terminal, without a trailing
    ellipsis the verifier cut them with."""
    kept = []
    for raw in output.splitlines():
        line = _clean(raw).removesuffix("...").removesuffix("…").strip()
        if len(line) < MIN_LINE_CHARS or _NOTE_RE.match(line):
            continue
        if not any(c.isalnum() for c in line):
            continue  # a rule of dashes or equals signs
        kept.append(line)
    return kept


def unbacked(checks: Sequence[Check], runs: Sequence[CommandRun], outputs: Sequence[str]) -> str:
    """Why the first passing check in `checks` is not backed by the verifier's `runs` and the
    `outputs` of all its tools; "" if every one is."""
    commands = [_words(" ".join(r.command.replace("\\\n", " ").split())) for r in runs]
    seen = "\n".join(_clean(line) for text in outputs for line in text.splitlines())
    for check in checks:
        if check.result != "PASS":
            continue
        if not any(_ran(line, commands) for line in _report_lines(check.command or "")):
            return (
                f"PASS, but the check {check.title!r} was never run: its command is in none of "
                "the verifier's Bash calls (R82: every check shows a command it executed)"
            )
        copied = _copied_lines(check.output or "")
        if copied and not any(line in seen for line in copied):
            return (
                f"PASS, but the check {check.title!r} reports output that none of the "
                "verifier's commands printed (R82: the output observed is copied, not written)"
            )
    return ""
