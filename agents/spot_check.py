"""R82's spot-check: a verifier's PASS stands only if each of its passing checks was run.

The seed has the caller audit a verification report by its command output ("主 agent 可以
spot-check verification 的命令输出"); R82: "a PASS step with no output or output that doesn't
match re-execution is rejected". Outlast checks against what the verifier really ran, which
its conversation holds: no command runs twice (a re-run in a changed world, or of a probe
that writes, could differ for reasons of its own), and a made-up report is caught for sure.

The rules forgive how a model writes a report, never what it claims:
- a passing check's command: each command of it (its lines, split at `&&`, `||`, `;` and
  `|`; a `cd` is none) must be, word by word with shell quoting undone, part of one of the
  verifier's Bash commands: a report may leave out the `cd` or the variables it ran with,
  or show two commands it ran apart as one line, but not name one it never ran. Backticks
  (the spans in a line that has any), a `$ ` prompt, `\\` continuations, a multi-line
  command, `python` for `python3` and a relative path for an absolute one are forgiven;
- its output: every piece of it must be in what the verifier's tools returned. A piece is a
  line, the backticked spans of a line that has any (the rest is the verifier's prose), cut
  at `...` where the verifier left lines out. The verifier's notes ("(no output)", "No output
  (clean tree)", "exit code 0") and echoes of the command are no pieces. Short pieces count
  ("OK" where the tests said "FAILED" is the lie this is for), as whole words.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from agents.builtin.verification import Check

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROMPT_RE = re.compile(r"^[$>]\s+")
_SPAN_RE = re.compile(r"`+([^`]+)`+")
_ELLIPSIS_RE = re.compile(r"\.\.\.+|…")
_ARROW_RE = re.compile(r"→|->|=>")
_NOTE_RE = re.compile(
    r"^(\(.*\)\.?|(no output|nothing printed|nothing|none|empty)\b.*|"
    r"(exit|return) ?(code|status)\b.*)$",
    re.IGNORECASE,
)
_SEPARATORS = frozenset({"&&", "||", ";", "|"})


class CommandRun(BaseModel):
    """One Bash call of the verifier: its command, and what the model was given back."""

    model_config = ConfigDict(frozen=True)

    command: str
    output: str


def _flat(text: str) -> str:
    return " ".join(_ANSI_RE.sub("", text).split())


def _words(command: str) -> list[str]:
    """The words of a command, quoting undone, whitespace inside them made single spaces."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # an unclosed quote: a command the report cut short
        words = command.split()
    out: list[str] = []
    for word in words:
        if word.endswith(";") and word != ";":
            out += [word[:-1], ";"]
        else:
            out.append(word)
    return ["python" if w == "python3" else _flat(w) for w in out if w]


def _segments(words: list[str]) -> list[list[str]]:
    """`words` cut at `&&`, `||`, `;` and `|`, without the `cd`s."""
    parts: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            parts.append([])
        else:
            parts[-1].append(word)
    return [p for p in parts if p and p[0] != "cd"]


def _same(a: str, b: str) -> bool:
    return a == b or ("/" in a + b and (a.endswith("/" + b) or b.endswith("/" + a)))


def _within(part: list[str], whole: list[str]) -> bool:
    n = len(part)
    return any(
        all(_same(p, w) for p, w in zip(part, whole[i : i + n], strict=True))
        for i in range(len(whole) - n + 1)
    )


def _commands_of(line: str) -> list[str]:
    """The commands a line of a check's command shows: its backticked spans, if it has any,
    up to an arrow between them (`cmd` → `5.0`: what follows is what the command gave);
    else the line, up to a `→`, which no shell command holds."""
    line = _PROMPT_RE.sub("", line.strip())
    spans = list(_SPAN_RE.finditer(line))
    if not spans:
        return [line.split("→", 1)[0]]
    kept, last = [], 0
    for span in spans:
        if _ARROW_RE.search(line[last : span.start()]):
            break
        kept.append(_PROMPT_RE.sub("", span.group(1).strip()))
        last = span.end()
    return kept


def _all_ran(command: str, ran: Sequence[list[str]]) -> bool:
    segments = [s for c in _commands_of(command) for s in _segments(_words(c))]
    return bool(segments) and all(any(_within(s, r) for r in ran) for s in segments)


def was_run(command: str, ran: Sequence[list[str]]) -> bool:
    """Whether a check's command block names only commands the verifier ran: as a whole (a
    multi-line command), or line by line."""
    block = command.replace("\\\n", " ")
    if _all_ran(block, ran):
        return True
    lines = [line for line in block.splitlines() if line.strip()]
    judged = [line for line in lines if _segments(_words(" ".join(_commands_of(line))))]
    return bool(judged) and all(_all_ran(line, ran) for line in judged)


def pieces(output: str, command: str) -> list[str]:
    """What of a check's output observed must have been printed (see the module's doc)."""
    said = _flat(command)
    kept = []
    for raw in output.splitlines():
        line = _PROMPT_RE.sub("", _flat(raw))
        if not line or _NOTE_RE.match(line):
            continue
        spans = _SPAN_RE.findall(line)
        for part in spans or [line]:
            for piece in _ELLIPSIS_RE.split(part):
                piece = piece.strip(" ,;")
                if any(c.isalnum() for c in piece) and not _NOTE_RE.match(piece):
                    if piece not in said:
                        kept.append(piece)
    return kept


def _printed(piece: str, seen: str) -> bool:
    start = r"(?<!\w)" if piece[0].isalnum() or piece[0] == "_" else ""
    end = r"(?!\w)" if piece[-1].isalnum() or piece[-1] == "_" else ""
    return re.search(start + re.escape(piece) + end, seen) is not None


def unbacked(checks: Sequence[Check], runs: Sequence[CommandRun], outputs: Sequence[str]) -> str:
    """Why the first passing check in `checks` is not backed by the verifier's `runs` and the
    `outputs` of all its tools; "" if every one is."""
    ran = [_words(r.command.replace("\\\n", " ")) for r in runs]
    seen = "\n".join(_flat(line) for text in outputs for line in text.splitlines())
    for check in checks:
        if check.result != "PASS":
            continue
        if not was_run(check.command or "", ran):
            return (
                f"PASS, but the check {check.title!r} was never run: a command it shows is in "
                "none of the verifier's Bash calls (R82: every check shows what it executed)"
            )
        missing = [
            p for p in pieces(check.output or "", check.command or "") if not _printed(p, seen)
        ]
        if missing:
            return (
                f"PASS, but the check {check.title!r} reports output that none of the "
                f"verifier's commands printed: {missing[0]!r} (R82: the output observed is "
                "copied, not written)"
            )
    return ""
