"""Reading the plan file at ExitPlanMode: a regular file only, read only as far as it is used."""

from __future__ import annotations

import os

from temporalio.testing import ActivityEnvironment

from activities.plan_file import PLAN_MAX_CHARS, read_plan


async def read(path) -> str | None:
    return (await ActivityEnvironment().run(read_plan, str(path))).text


async def test_a_plan_is_read_cut_and_with_plain_newlines(tmp_path):
    plan = tmp_path / "plan.md"
    plan.write_bytes(b"# Plan\r\n1. do it\r\n")
    assert await read(plan) == "# Plan\n1. do it\n"
    plan.write_text("p" * (PLAN_MAX_CHARS + 5))
    assert await read(plan) == "p" * PLAN_MAX_CHARS


async def test_no_plan_a_link_a_fifo_or_a_directory_is_no_plan_text(tmp_path):
    assert await read(tmp_path / "missing.md") is None
    (tmp_path / "real.md").write_text("elsewhere")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    assert await read(tmp_path / "link.md") is None
    os.mkfifo(tmp_path / "fifo.md")  # a plain read would wait for a writer for good
    assert await read(tmp_path / "fifo.md") is None
    (tmp_path / "dir.md").mkdir()
    assert await read(tmp_path / "dir.md") is None
