"""R82's spot-check: a verifier's PASS stands only if each of its passing checks was run.

The seed has the caller audit a verification report by its command output ("主 agent 可以
spot-check verification 的命令输出"); R82: "a PASS step with no output or output that doesn't
match re-execution is rejected". Outlast checks against what the verifier really ran, which
its conversation holds: no command runs twice (a re-run in a changed world, or of a probe
that writes, could differ for reasons of its own), and a made-up report is caught for sure.

The rules forgive how a model writes a report, never what it claims:
- the command: some command the check shows (a line of it, or a part of a line between
  `&&`, `||`, `;` and `|`; a `cd` is none) must be, word by word with shell quoting undone,
  part of one of the verifier's Bash commands. Backticks, a `$ ` prompt, `\\` continuations,
  a multi-line command, `python` for `python3`, a relative path for an absolute one and a
  command cut short with `...` are forgiven; a check may show a probe script and the line
  that ran it, or leave out the `cd` and the variables it ran with;
- the output: every piece of it must have been printed by those commands (a background
  one's through TaskOutput). A piece is a line, or the backticked spans of a line with
  prose around them, or a part of either between `...`. A whole line must be a printed
  line or the start of one (rules of `=` or `-` around it aside): "41 passed" is no copy of
  "1 failed, 41 passed"; a line that is not, with a copy in double quotes and prose around
  it (`Raises "ValueError: empty"`), is backed by what it quotes. Short pieces count ("OK"
  where the tests said "FAILED" is the lie this is for). The verifier's notes are no pieces:
  a line in parentheses, "no output" or "exit code 0" alone, a line that ends with a colon,
  the command echoed after a prompt.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from agents.builtin.verification import Check

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROMPT_RE = re.compile(r"^(?:\$|>>>|>)\s+")
_RULE_RE = re.compile(r"^[-=_*~.#+|]+$")
_LIST_RE = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_SPAN_RE = re.compile(r"`+([^`]+)`+")
_ELLIPSIS_RE = re.compile(r"\.\.\.+|…|<snip>")
_ARROW_RE = re.compile(r"→|->|=>")
_TRAILING_NOTE_RE = re.compile(r"\s+\([^()]*\)[.!]?$")
_QUOTED_RE = re.compile(r"^([\"'])(.*)\1$")
_DOUBLE_QUOTED_RE = re.compile(r"[\"“]([^\"“”]+)[\"”]")
_NOTE_RE = re.compile(
    r"^(\(.*\)[.!]?|(no output|nothing printed|nothing|none|empty)[.!]?(\s*\(.*\))?[.!]?"
    r"|(exit|return) ?(code|status):? ?-?\d+[.!]?)$",
    re.IGNORECASE,
)
_EDGES_RE = re.compile(r"^[^\w(\[{<\"']+|[^\w)\]}>\"'.%]+$")
_OPERATOR_RE = re.compile(r"(&&|\|\||;|\|)")
_SEPARATORS = frozenset({"&&", "||", ";", "|"})
BACKGROUND = "Command running in background"
"""How a background Bash call's result begins (workflows/shells.py): its output comes
later, through TaskOutput."""


class CommandRun(BaseModel):
    """One Bash call of the verifier: its command, and what the model was given back."""

    model_config = ConfigDict(frozen=True)

    command: str
    output: str


def _flat(text: str) -> str:
    return " ".join(_ANSI_RE.sub("", text).split())


def _words(command: str) -> list[str]:
    """The words of a command, quoting undone, whitespace inside them made single spaces,
    operators their own words and subshell parentheses gone."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # an unclosed quote: a command the report cut short
        words = command.split()
    out: list[str] = []
    for word in words:
        for part in _OPERATOR_RE.split(word) if word not in _SEPARATORS else [word]:
            part = part.strip("()") if part not in _SEPARATORS else part
            if part:
                out.append("python" if part == "python3" else _flat(part))
    return out


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


def _within(part: list[str], whole: list[str], cut: bool = False) -> bool:
    """Whether `part` is a run of `whole`'s words; `cut`: its last word may be the start of
    one (a command the report cut short with `...`)."""
    n = len(part)

    def fits(p: str, w: str, last: bool) -> bool:
        return _same(p, w) or (cut and last and w.startswith(p.rstrip("; ")))

    return any(
        all(
            fits(p, w, k == n - 1)
            for k, (p, w) in enumerate(zip(part, whole[i : i + n], strict=True))
        )
        for i in range(len(whole) - n + 1)
    )


def _commands_of(line: str) -> list[str]:
    """The commands a line of a check's command shows: its backticked spans, if it has any,
    up to an arrow between them (`cmd` → `5.0`: what follows is what the command gave);
    else the line, up to a `→`, which no shell command holds; each up to a `...`."""
    line = _PROMPT_RE.sub("", _LIST_RE.sub("", line.strip()))
    spans = list(_SPAN_RE.finditer(line))
    if not spans:
        found = [line.split("→", 1)[0]]
    else:
        found, last = [], 0
        for span in spans:
            if _ARROW_RE.search(line[last : span.start()]):
                break
            found.append(_PROMPT_RE.sub("", span.group(1).strip()))
            last = span.end()
    return found


def ran_for(command: str, runs: Sequence[CommandRun]) -> list[CommandRun]:
    """The verifier's Bash calls some command of a check's command block is part of: the
    block as a whole (a multi-line command), or a line or a part of one."""
    block = command.replace("\\\n", " ")
    shown: list[tuple[list[str], bool]] = []
    for text in [block, *block.splitlines()]:
        for c in _commands_of(text):
            head, *rest = _ELLIPSIS_RE.split(c, maxsplit=1)
            words = _cut_words(head) if rest else _words(c)
            shown += [(s, bool(rest)) for s in _segments(words)]
    ran = [(r, _words(r.command.replace("\\\n", " "))) for r in runs]
    return [r for r, words in ran if any(_within(s, words, cut) for s, cut in shown)]


def _cut_words(head: str) -> list[str]:
    """The words of a command cut short (`python3 -c 'from calc import mean; ...`): its
    open quote closed."""
    for closing in ("", "'", '"'):
        try:
            shlex.split(head + closing)
        except ValueError:
            continue
        return _words(head + closing)
    return _words(head)


def _piece(text: str) -> str:
    text = text.strip(" ,;")
    while match := _QUOTED_RE.match(text):
        text = match.group(2).strip()
    return text


def pieces(output: str, command: str) -> list[tuple[str, bool]]:
    """What of a check's output observed must have been printed (see the module's doc):
    each piece, and whether it is a whole line (else a part of one: a span, or cut at
    `...`)."""
    shown = [command, *command.splitlines()]
    echoes = {_flat(t) for t in shown} | {_flat(c) for t in shown for c in _commands_of(t)}
    kept: list[tuple[str, bool]] = []
    for raw in output.splitlines():
        line = _LIST_RE.sub("", _flat(raw))
        if not line or _NOTE_RE.match(line) or line.endswith(":"):
            continue
        if _PROMPT_RE.match(line) or line in echoes:
            continue  # the command, echoed
        spans = [_piece(s) for s in _SPAN_RE.findall(line)]
        spans = [s for s in spans if s and s not in echoes and not _NOTE_RE.match(s)]
        parts = spans if spans else [_piece(line.replace("`", ""))]
        whole = not spans
        for part in parts:
            cut = _ELLIPSIS_RE.split(part)
            for bit in (_piece(b) for b in cut):
                if bit and not _RULE_RE.match(bit) and not _NOTE_RE.match(bit):
                    kept.append((bit, whole and len(cut) == 1))
    return kept


def _trimmed(line: str) -> str:
    return _EDGES_RE.sub("", line).strip()


def _printed(piece: str, whole: bool, lines: set[str], text: str) -> bool:
    if whole:
        # The verifier's note after a copied line: "42 passed in 1.23s (no failures)".
        bare = _TRAILING_NOTE_RE.sub("", piece) or piece
        if {piece, bare, _trimmed(piece), _trimmed(bare)} & lines:
            return True
        # Spacing the verifier changed (`{"a": 1}` for `{"a":1}`).
        if {"".join(piece.split()), "".join(bare.split())} & {"".join(x.split()) for x in lines}:
            return True
        piece = bare
        # The start of a printed line, its tail left off ("Ran 3 tests" of "Ran 3 tests in
        # 0.001s"): still a copy, where a line's end is not ("41 passed" of "1 failed, 41
        # passed").
        head = re.compile(re.escape(_trimmed(piece) or piece) + r"(?!\w)")
        if any(head.match(line) for line in lines):
            return True
        # Prose around a copy in double quotes, as a backticked span would be: `Raises
        # "ValueError: empty"`. Single quotes are left out: prose has apostrophes.
        quoted = [q.strip() for q in _DOUBLE_QUOTED_RE.findall(piece)]
        return bool(quoted) and all(q and _printed(q, False, lines, text) for q in quoted)
    start = r"(?<!\w)" if piece[0].isalnum() or piece[0] == "_" else ""
    end = r"(?!\w)" if piece[-1].isalnum() or piece[-1] == "_" else ""
    return re.search(start + re.escape(piece) + end, text) is not None


def unbacked(checks: Sequence[Check], runs: Sequence[CommandRun], later: Sequence[str]) -> str:
    """Why the first passing check in `checks` is not backed by the verifier's Bash `runs`
    and, for a background one, the `later` results of its TaskOutput calls; "" if every one
    is."""
    for check in checks:
        if check.result != "PASS":
            continue
        matched = ran_for(check.command or "", runs)
        if not matched:
            return (
                f"PASS, but the check {check.title!r} was never run: no command it shows is "
                "in the verifier's Bash calls (R82: every check shows what it executed)"
            )
        printed = [r.output for r in matched]
        if any(r.output.startswith(BACKGROUND) for r in matched):
            printed += list(later)
        flat = [_flat(line) for text in printed for line in text.splitlines()]
        lines = {line for line in flat if line} | {_trimmed(line) for line in flat}
        text = "\n".join(flat)
        copied = pieces(check.output or "", check.command or "")
        if missing := [p for p, whole in copied if not _printed(p, whole, lines, text)]:
            return (
                f"PASS, but the check {check.title!r} reports output its command did not "
                f"print: {missing[0]!r} (R82: the output observed is copied, not written)"
            )
    return ""
