"""The table of an agent's background commands and what its model reads about them."""

from __future__ import annotations

import random

from activities.tools.bash_background import size_text
from workflows.registry import ChildRegistry
from workflows.shells import (
    DESCRIPTION_CHARS,
    ENDED_SHELLS_KEPT,
    ShellEnd,
    ShellTable,
    ShellTask,
    end_summary,
    shell_description,
    status_of,
)


def table_with(shell_id: str = "b00000001") -> ShellTable:
    table = ShellTable()
    table.add(
        ShellTask(
            shell_id=shell_id,
            description="run tests",
            workflow_id=f"agent/{shell_id}",
            output_file=f"/state/tasks/agent/{shell_id}.output",
            tool_use_id="toolu_1",
        )
    )
    return table


def test_an_end_is_told_once():
    table = table_with()
    assert table.outstanding()
    end = ShellEnd(shell_id="b00000001", status="completed", exit_code=0)
    text = table.record_end(end)
    assert text is not None and "<status>completed</status>" in text
    assert "<tool-use-id>toolu_1</tool-use-id>" in text
    assert text.endswith(
        "Read the output file to retrieve the result: /state/tasks/agent/b00000001.output"
    )
    # The workflow's signal and the handle watcher both report: the second changes nothing.
    assert table.record_end(end) is None
    assert not table.outstanding() and table.running() == []


def test_a_stopped_command_is_reported_stopped_whatever_it_exited_with():
    table = table_with()
    table.shells["b00000001"].stop_requested = True
    text = table.record_end(ShellEnd(shell_id="b00000001", status="failed", exit_code=143))
    assert text is not None and "<status>killed</status>" in text
    assert 'Background command "run tests" was stopped' in text
    assert table.shells["b00000001"].status == "killed"


def test_an_unknown_command_is_ignored():
    assert table_with().record_end(ShellEnd(shell_id="bffffffff", status="completed")) is None


def test_the_registry_queues_shell_ends_beside_agents_and_waits_for_them():
    registry = ChildRegistry(shells=table_with())
    assert registry.outstanding()
    assert registry.record_shell_end(ShellEnd(shell_id="b00000001", status="failed", exit_code=2))
    assert not registry.outstanding()
    (text,) = registry.drain()
    assert 'Background command "run tests" failed with exit code 2' in text


def test_summaries():
    def summary(**kw) -> str:
        return end_summary("build", ShellEnd(shell_id="b1", **kw))

    assert (
        summary(status="completed", exit_code=0)
        == 'Background command "build" completed (exit code 0)'
    )
    assert (
        summary(status="failed", exit_code=1)
        == 'Background command "build" failed with exit code 1'
    )
    assert summary(status="failed", timed_out=True, timeout_ms=5000) == (
        'Background command "build" timed out after 5000ms'
    )
    assert summary(status="failed", error="bubblewrap is missing") == (
        'Background command "build" did not run: bubblewrap is missing'
    )
    assert summary(status="killed", exit_code=137) == 'Background command "build" was stopped'


def test_only_exit_code_zero_completes():
    assert status_of(0, False, None) == "completed"
    assert status_of(1, False, None) == "failed"
    assert status_of(None, True, None) == "failed"
    assert status_of(None, False, "refused") == "failed"


def test_a_command_without_a_description_is_named_by_its_text():
    assert shell_description("  run the tests ", "pytest") == "run the tests"
    assert shell_description(None, "pytest  -q\n  tests/") == "pytest -q tests/"
    # A description of any length is cut as a command is: it rides in every notification,
    # summary and carried shell record.
    long = shell_description("word " * 10_000, "pytest")
    assert len(long) == DESCRIPTION_CHARS and long.startswith("word word") and long.endswith("...")
    long = shell_description("", "x" * 200)
    assert len(long) == 80 and long.endswith("...")


def test_ids_are_unique_in_the_table():
    table = table_with("b00000007")
    rng = random.Random(0)
    draws = iter([7, 7, 8])
    assert table.new_id(lambda bits: next(draws)) == "b00000008"
    assert table.new_id(rng.getrandbits).startswith("b") and len(table.new_id(rng.getrandbits)) == 9


def test_a_stop_says_why_the_stopper_s_reason_first():
    capped = ShellEnd(
        shell_id="b00000001", status="killed", stop_reason="its output file exceeded 5GB"
    )
    text = table_with().record_end(capped)
    assert 'Background command "run tests" was stopped: its output file exceeded 5GB' in text
    table = table_with()
    table.find("b00000001").stop_reason = "still running 3600 s after the turn had ended"
    text = table.record_end(capped)
    assert "was stopped: still running 3600 s after the turn had ended<" in text
    # A reason of its run's own is said only of a stop.
    done = ShellEnd(shell_id="b00000001", status="completed", exit_code=0, stop_reason="x")
    assert "completed (exit code 0)<" in table_with().record_end(done)


def test_the_cap_is_named_as_claude_code_names_it():
    assert [size_text(n) for n in (5 * 1024**3, 1024**2, 1536 * 1024, 1000)] == [
        "5GB",
        "1MB",
        "1536KB",
        "1000 bytes",
    ]


def test_a_continued_run_keeps_what_still_matters_and_the_latest_ended_commands():
    """The carry held every command the agent ever ran (a review of the standing list)."""
    table = ShellTable()
    total = ENDED_SHELLS_KEPT + 5
    for i in range(total):
        table.add(table_with(f"b{i:08x}").shells[f"b{i:08x}"])
    for i in range(total - 2):  # all but the last two ended...
        table.record_end(ShellEnd(shell_id=f"b{i:08x}", status="completed", exit_code=0))
    table.shells[f"b{0:08x}"].notified = False  # ...and the model has not been told of one
    kept = list(table.carried().shells)
    ended_kept = [f"b{i:08x}" for i in range(total - 2 - ENDED_SHELLS_KEPT, total - 2)]
    assert kept == [f"b{0:08x}", *ended_kept, f"b{total - 2:08x}", f"b{total - 1:08x}"]
    assert len(table.shells) == total  # the run's own table is unchanged
    registry = ChildRegistry(shells=table)
    assert list(registry.carried().shells.shells) == kept
