"""A fork-join's Web UI details (`workflows/fork_details.py`)."""

from __future__ import annotations

from workflows.contracts import ForkOutcome
from workflows.fork_details import render_fork_details


def outcome(i: int, **kw) -> ForkOutcome:
    return ForkOutcome(index=i, directive="d", agent_id="a", workflow_id=f"fj/fork-{i + 1}", **kw)


def test_each_fork_reads_how_it_stands_and_a_directive_only_its_first_line():
    directives = ["audit | the parser\nin depth", "x" * 100, "stop me", "turns", "later"]
    children = {i: (f"a{i}", f"fj/fork-{i + 1}") for i in range(4)}
    outcomes = {
        0: outcome(0, status="completed"),
        2: outcome(2, status="completed", stopped=True),
        3: outcome(3, status="completed", max_turns_reached=True),
    }
    text = render_fork_details(directives, children, outcomes, {0, 2, 3}, "joining", ["no"])
    lines = text.splitlines()
    assert lines[0] == "fork-join: 5 forks, 3 ended · joining"
    assert "| 1 | audit \\| the parser | completed | `fj/fork-1` |" in lines
    assert f"| 2 | {'x' * 59}… | starting | `fj/fork-2` |" in lines
    assert "| 3 | stop me | stopped | `fj/fork-3` |" in lines
    assert "| 4 | turns | out of turns | `fj/fork-4` |" in lines
    assert "| 5 | later | not started |  |" in lines
    assert lines[-2:] == ["Refused signals (their input did not fit):", "- no"]
