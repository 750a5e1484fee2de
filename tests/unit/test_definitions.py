"""Agent definition files, precedence, and the built-ins (spec R5-R9)."""

import pytest

from agents.builtin import builtin_definitions
from agents.builtin.plan import check_plan_output
from agents.config import OutlastConfig
from agents.definition import DefinitionError, DefinitionSet, parse_agent_markdown

S000_EXAMPLE = """---
name: db-migrator
description: "Database migration specialist"
tools: ["Bash", "Read", "Edit"]
model: "sonnet"
permissionMode: "plan"
---
You migrate databases carefully.
"""


def test_seed_example_frontmatter_parses():
    d = parse_agent_markdown(S000_EXAMPLE, "projectSettings", "/x/db.md")
    assert d.agent_type == "db-migrator"
    assert d.when_to_use == "Database migration specialist"
    assert d.tools == ["Bash", "Read", "Edit"]
    assert d.model == "sonnet"
    assert d.permission_mode == "plan"
    assert d.system_prompt == "You migrate databases carefully."


def test_comma_separated_tools_and_max_turns():
    d = parse_agent_markdown(
        "---\nname: a\ndescription: b\ntools: Read, Grep\nmaxTurns: 2\n---\nbody", "userSettings"
    )
    assert d.tools == ["Read", "Grep"] and d.max_turns == 2


def test_a_comma_inside_parentheses_belongs_to_its_entry():
    """`tools: Agent(Explore, Plan), Read` lost the Agent tool: split at every comma, it was
    `Agent(Explore` and `Plan)`, neither a tool (a user test, 2026-12-07)."""
    text = "---\nname: a\ndescription: b\ntools: Agent(Explore, Plan), Read,Bash\n---\nbody"
    d = parse_agent_markdown(text, "userSettings")
    assert d.tools == ["Agent(Explore, Plan)", "Read", "Bash"]
    # YAML's own flow list splits at that comma too (a review, 2026-12-07).
    text = "---\nname: a\ndescription: b\ntools: [Agent(Explore, Plan), Read]\n---\nbody"
    assert parse_agent_markdown(text, "userSettings").tools == ["Agent(Explore, Plan)", "Read"]


def test_keys_and_tools_like_none_of_claude_code_s_are_left_as_there():
    """Claude Code ignores a key it does not know, and a tool name that is none of its own
    (an MCP server's, a later release's): so does Outlast, where it is no slip for one."""
    text = (
        "---\nname: a\ndescription: b\ncolor: blue\nowner: me\nbackground_color: red\n"
        "tools: Read, mcp__db__query, WebBrowse, NotebookRead, exit_plan_mode, SendUserMessage, "
        "Teammate, REPL\n---\nbody"
    )
    d = parse_agent_markdown(text, "userSettings")
    assert d.tools == [
        "Read",
        "mcp__db__query",
        "WebBrowse",
        "NotebookRead",
        "exit_plan_mode",
        "SendUserMessage",
        "Teammate",
        "REPL",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no frontmatter", "missing frontmatter"),
        ("---\nname: a\n", "not closed"),
        ("---\nname: a\n---\n", "lacks required description"),
        ("---\nname: a\ndescription: b\nmaxTurns: 0\n---\n", "max_turns"),
        ("---\nname: a\ndescription: b\npermissionMode: sudo\n---\n", "permission_mode"),
        ("---\n: [\n---\n", "not valid YAML"),
        ("---\nname: a\ndescription: &d b\nhooks: {x: *d}\n---\n", "aliases"),
        # Slips were dropped without a word: every tool for `tool: Read`, no limit for
        # `maxturns`, Bash not denied by `bash` (a user test, 2026-12-07).
        ("---\nname: a\ndescription: b\ntool: Read\n---\n", "key tool (did you mean tools?)"),
        ("---\nname: a\ndescription: b\nmaxturns: 2\n---\n", "(did you mean maxTurns?)"),
        ("---\nname: a\ndescription: b\ndisallowedTools: bash\n---\n", "bash (did you mean"),
        ("---\nname: a\ndescription: b\ntools: Read, Bassh\n---\n", "tools: Bassh (did you"),
        # Two letters swapped, below any ratio that does not also take REPL for Grep.
        ("---\nname: a\ndescription: b\ndisallowedTools: Bsah\n---\n", "Bsah (did you mean Bash"),
        ("---\nname: a\ndescription: b\ntools: Grpe\n---\n", "Grpe (did you mean Grep?)"),
        # The current spelling, whatever the set's order (`exit_plan_mode` folds the same).
        (
            "---\nname: a\ndescription: b\ntools: exitPlanMode\n---\n",
            "(did you mean ExitPlanMode?)",
        ),
        # A key whose nearest spelling means another thing names the one it means (a
        # review, 2026-12-07: `allowed-tools` read as a slip for `disallowedTools`).
        ("---\nname: a\ndescription: b\nallowed-tools: Read\n---\n", "(did you mean tools?)"),
        ("---\nname: a\ndescription: b\nmode: plan\n---\n", "(did you mean permissionMode?)"),
    ],
)
def test_bad_files_name_the_file_and_the_problem(text, problem):
    with pytest.raises(DefinitionError) as e:
        parse_agent_markdown(text, "projectSettings", "/repo/.claude/agents/bad.md")
    assert "/repo/.claude/agents/bad.md" in str(e.value)
    assert problem in str(e.value)


def test_an_alias_bomb_is_refused_before_it_expands():
    # 9 levels of 10 aliases: ~500 bytes standing for 10**9 strings once written as JSON.
    levels = ['a0: &a0 ["lol"]'] + [
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)
    ]
    text = "---\nname: bomb\ndescription: d\n" + "\n".join(levels) + "\nhooks: {h: *a9}\n---\nx"
    with pytest.raises(DefinitionError, match="aliases"):
        parse_agent_markdown(text, "projectSettings", "/repo/.claude/agents/bomb.md")


def test_project_beats_user_beats_builtin():
    user = parse_agent_markdown("---\nname: Explore\ndescription: u\n---\nU", "userSettings")
    project = parse_agent_markdown("---\nname: Explore\ndescription: p\n---\nP", "projectSettings")
    defs = DefinitionSet(definitions=[project, *builtin_definitions(OutlastConfig()), user])
    assert defs.get("Explore").system_prompt == "P"
    assert defs.names().count("Explore") == 1


def test_builtins():
    by_type = {d.agent_type: d for d in builtin_definitions(OutlastConfig())}
    explore = by_type["Explore"]
    assert explore.system_prompt.startswith(
        "=== CRITICAL: READ-ONLY MODE - NO FILE MODIFICATIONS ==="
    )
    assert set(explore.disallowed_tools) == {
        "Agent",
        "ExitPlanMode",
        "Edit",
        "Write",
        "NotebookEdit",
    }
    assert explore.model == "haiku" and explore.omit_claude_md
    assert (
        by_type["Plan"].model == "inherit"
        and by_type["Plan"].disallowed_tools == explore.disallowed_tools
    )
    assert (
        by_type["general-purpose"].tools == ["*"] and not by_type["general-purpose"].omit_claude_md
    )
    custom = builtin_definitions(
        OutlastConfig.model_validate({"agents": {"explore_model": "inherit"}})
    )
    assert {d.agent_type: d for d in custom}["Explore"].model == "inherit"


def test_plan_output_check():
    good = "Plan...\n### Critical Files for Implementation\n- /a.py - x\n- /b.py - y\n- /c.py - z\n"
    assert check_plan_output(good)
    assert not check_plan_output("Plan without the section")
    assert not check_plan_output("### Critical Files for Implementation\n- /a.py\n- /b.py\n")
