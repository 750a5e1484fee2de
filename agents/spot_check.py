"""R82's spot-check: a verifier's PASS stands only if each of its passing checks was run.

The seed has the caller audit a verification report by its command output ("主 agent 可以
spot-check verification 的命令输出"); R82: "a PASS step with no output or output that doesn't
match re-execution is rejected". Outlast checks against what the verifier really ran, which
its conversation holds: no command runs twice (a re-run in a changed world, or of a probe
that writes, could differ for reasons of its own), and a made-up report is caught for sure.

A passing check is backed when a line of its `**Command run:**` is part of one of the
verifier's Bash commands (a check may leave out the `cd` it ran with), or one of them, of a
useful length, is part of that line (it may add one); and when some line of its `**Output
observed:**` is in what the verifier's tools returned. Lines in parentheses or brackets are
the verifier's notes ("(no output)"); a report without a copied line is not judged by it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from agents.builtin.verification import Check

MIN_LINE_CHARS = 4
"""Shorter lines ("OK", "0") are in almost any output: they prove nothing either way."""
MIN_COMMAND_CHARS = 8
"""A Bash command shorter than this ("ls") is in too many lines to name one."""
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROMPT_RE = re.compile(r"^[$>]\s+")
_NOTE_RE = re.compile(r"^[(\[].*[)\]]$")


class CommandRun(BaseModel):
    """One Bash call of the verifier: its command, and what the model was given back."""

    model_config = ConfigDict(frozen=True)

    command: str
    output: str


def _norm(line: str) -> str:
    return " ".join(_ANSI_RE.sub("", line).split())


def _command_lines(command: str) -> list[str]:
    lines = (_PROMPT_RE.sub("", _norm(line)) for line in command.splitlines())
    return [line for line in lines if line]


def _copied_lines(output: str) -> list[str]:
    """The lines of `output` that can only have come from a terminal, without a trailing
    ellipsis the verifier cut them with."""
    kept = []
    for raw in output.splitlines():
        line = _norm(raw).removesuffix("...").removesuffix("…").strip()
        if len(line) < MIN_LINE_CHARS or _NOTE_RE.match(line):
            continue
        if not any(c.isalnum() for c in line):
            continue  # a rule of dashes or equals signs
        kept.append(line)
    return kept


def _ran(line: str, commands: Sequence[str]) -> bool:
    return any(line in c or (len(c) >= MIN_COMMAND_CHARS and c in line) for c in commands)


def unbacked(checks: Sequence[Check], runs: Sequence[CommandRun], outputs: Sequence[str]) -> str:
    """Why the first passing check in `checks` is not backed by the verifier's `runs` and the
    `outputs` of all its tools; "" if every one is."""
    commands = [_norm(r.command) for r in runs]
    seen = "\n".join(_norm(line) for text in outputs for line in text.splitlines())
    for check in checks:
        if check.result != "PASS":
            continue
        lines = _command_lines(check.command or "")
        if not any(_ran(line, commands) for line in lines):
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
