"""The Skill tool (T17): skills found in the project's and the user's `.claude/skills`, listed
for the model, and loaded on a call; bad ones are skipped, not fatal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.activity import _Definition
from temporalio.testing import ActivityEnvironment

from activities.context import tool_definitions
from activities.tools import TOOLS
from activities.tools.base import ToolContext
from activities.tools.skill import SkillRequest, find_skills, run_skill
from agents.skills import (
    MAX_DESCRIPTION_CHARS,
    SkillFileError,
    SkillInfo,
    SkillInput,
    invocation_text,
    listing,
    parse_skill,
)


def write_skill(root: Path, directory: str, front: str, body: str = "Do the thing.") -> Path:
    path = root / ".claude" / "skills" / directory / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}\n")
    return path


def test_parse_takes_the_name_from_the_frontmatter_or_the_directory():
    assert parse_skill("---\nname: pdf\ndescription: PDFs\n---\nbody\n", "x") == (
        "pdf",
        "PDFs",
        True,
        "body",
    )
    name, _, _, _ = parse_skill("---\ndescription: d\n---\nb", "review-pr")
    assert name == "review-pr"
    hidden = parse_skill("---\ndescription: d\ndisable-model-invocation: true\n---\nb", "x")
    assert hidden[2] is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter", "missing frontmatter"),
        ("---\nname: x\n---\nb", "no description"),
        ("---\nname: ../up\ndescription: d\n---\nb", "invalid skill name"),
        ("---\n: [\n---\nb", "not valid YAML"),
    ],
)
def test_parse_refuses_what_cannot_be_a_skill(text, message):
    with pytest.raises(SkillFileError, match=message):
        parse_skill(text, "dir")


def test_listing_and_invocation_texts():
    long = SkillInfo(name="a", description="w" * 400, source="project", directory="/r/a")
    text = listing([long])
    assert text.startswith("<available_skills>\n- a: ") and text.endswith("</available_skills>")
    assert len(text.splitlines()[1]) == len("- a: ") + MAX_DESCRIPTION_CHARS
    assert "one created since can be invoked by its exact name" in listing([])
    with_place = invocation_text(long, "Review PR $ARGUMENTS now.", "123")
    assert "Base directory for this skill: /r/a" in with_place
    assert with_place.endswith("Review PR 123 now.")
    assert invocation_text(long, "Body.", "x y").endswith("Body.\n\nARGUMENTS: x y")
    assert invocation_text(long, "Body.", None).endswith("Body.")


def test_the_input_is_checked():
    with pytest.raises(ValidationError):
        SkillInput(skill="")
    with pytest.raises(ValidationError):
        SkillInput(skill="x", extra=1)  # type: ignore[call-arg]


def test_project_and_user_skills_a_users_winning_a_name(tmp_path: Path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    write_skill(repo, "lint", "description: project lint")
    write_skill(repo, "deploy", "description: project deploy")
    write_skill(home, "lint", "description: my own lint")
    write_skill(home, "secret", "description: d\ndisable-model-invocation: true")
    write_skill(repo, "broken", "name: x")  # no description: skipped, the others stay
    (repo / ".claude" / "skills" / "empty-dir").mkdir()
    found = {info.name: info for info, _ in find_skills(str(repo), home)}
    assert sorted(found) == ["deploy", "lint"]
    assert found["lint"].source == "user" and found["lint"].description == "my own lint"
    assert found["deploy"].directory == str(repo / ".claude" / "skills" / "deploy")


def test_a_project_skill_may_not_point_outside_the_workspace(tmp_path: Path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    write_skill(outside, "evil", "description: reads elsewhere")
    link = repo / ".claude" / "skills" / "evil"
    link.parent.mkdir(parents=True)
    os.symlink(outside / ".claude" / "skills" / "evil", link)
    big = write_skill(repo, "big", "description: too big")
    big.write_text("---\ndescription: big\n---\n" + "x" * 300_000)
    assert find_skills(str(repo), tmp_path / "nohome") == []


async def run(repo: Path, skill: str, args: str | None = None):
    ctx = ToolContext(workspace_root=str(repo), cwd=str(repo))
    req = SkillRequest(ctx=ctx, input=SkillInput(skill=skill, args=args))
    return await ActivityEnvironment().run(run_skill, req)


async def test_the_activity_loads_a_skill_or_names_the_ones_there_are(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "review", "description: review a PR", "Review PR number $ARGUMENTS.")
    out = await run(repo, "/review", "42")
    assert not out.is_error and out.content.endswith("Review PR number 42.")
    missing = await run(repo, "pdf")
    assert missing.is_error and "Unknown skill: pdf" in missing.content
    assert "review" in missing.content


def test_the_tool_is_registered_read_only_with_the_listing_in_its_description():
    assert _Definition.must_from_callable(run_skill).name == "tool.skill"
    assert TOOLS["Skill"].read_only
    (definition,) = tool_definitions(["Skill"], skills=listing([]))
    assert definition["description"].endswith("can be invoked by its exact name.")
    assert definition["input_schema"]["required"] == ["skill"]


def test_placeholders_are_filled_as_claude_code_fills_them():
    skill = SkillInfo(name="s", description="d", source="project", directory="/r/s")
    body = "Dir ${CLAUDE_SKILL_DIR}. All: $ARGUMENTS. First: $0. Second: $ARGUMENTS[1]. $5."
    text = invocation_text(skill, body, "'a b' c")
    assert text.endswith("Dir /r/s. All: 'a b' c. First: a b. Second: c. .")
    # No arguments: the places are emptied, not left as `$ARGUMENTS` for the model to read.
    assert invocation_text(skill, "Review PR $ARGUMENTS.", None).endswith("Review PR .")


def test_what_a_bad_file_can_hold_never_escapes(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "good", "description: still listed")
    loop = repo / ".claude" / "skills" / "loop"
    loop.mkdir(parents=True)
    os.symlink("SKILL.md", loop / "SKILL.md")  # a link to itself
    deep = "[" * 5000 + "]" * 5000
    write_skill(repo, "deep", f"description: {deep}")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]"
    bomb += "\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\ndescription: [*c, *c, *c, *c, *c]"
    write_skill(repo, "bomb", bomb)
    fifo = repo / ".claude" / "skills" / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "SKILL.md")
    bom = write_skill(repo, "bom", "description: with a byte-order mark")
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    found = [info.name for info, _ in find_skills(str(repo), tmp_path / "nohome")]
    assert found == ["bom", "good"]


def test_a_hidden_or_broken_user_skill_keeps_its_name_from_the_project(tmp_path: Path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    write_skill(home, "deploy", "description: mine\ndisable-model-invocation: 'true'")
    write_skill(home, "release", "no description here")
    write_skill(repo, "deploy", "description: the repo's deploy")
    write_skill(repo, "release", "description: the repo's release")
    assert find_skills(str(repo), home) == []


def test_a_user_skill_may_be_a_link_and_a_worktree_sees_its_checkouts_skills(tmp_path: Path):
    repo, home, store = tmp_path / "repo", tmp_path / "home", tmp_path / "store"
    write_skill(store, "linked", "description: installed elsewhere")
    (home / ".claude" / "skills").mkdir(parents=True)
    os.symlink(store / ".claude" / "skills" / "linked", home / ".claude" / "skills" / "linked")
    write_skill(repo, "uncommitted", "description: not in any worktree")
    worktree = repo / ".claude" / "worktrees" / "feat"
    write_skill(worktree, "committed", "description: in the worktree too")
    names = [info.name for info, _ in find_skills(str(worktree), home)]
    assert names == ["committed", "linked", "uncommitted"]
