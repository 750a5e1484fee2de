"""The `verification` built-in and its verdict parser (spec R10, R81-R84)."""

import pytest

from agents.builtin.verification import DEFINITION, PROMPT, VERDICT_RE, parse_verdict

R84 = (
    "CRITICAL: This is a VERIFICATION-ONLY task. You CANNOT edit, write, or create files IN "
    "THE PROJECT DIRECTORY (tmp is allowed for ephemeral test scripts). You MUST end with "
    "VERDICT: PASS, VERDICT: FAIL, or VERDICT: PARTIAL."
)


def test_definition_fields():
    assert DEFINITION.agent_type == "verification"
    assert DEFINITION.model == "inherit"
    assert DEFINITION.background is True
    assert DEFINITION.color == "red"
    assert DEFINITION.disallowed_tools == ["Agent", "ExitPlanMode", "Edit", "Write", "NotebookEdit"]
    assert DEFINITION.critical_system_reminder == R84
    assert DEFINITION.is_built_in
    assert (
        "the ORIGINAL user task description, list of files changed, and approach taken"
        in DEFINITION.when_to_use
    )


@pytest.mark.parametrize(
    "marker",
    [
        "### Check:",
        "**Command run:**",
        "**Output observed:**",
        "**Result: PASS**",
        "verification avoidance",
        "first 80%",
        "PARTIAL is only for limits of the environment",
        "/tmp",
    ],
)
def test_prompt_markers(marker):
    assert marker.lower() in PROMPT.lower()


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("report\n\nVERDICT: PASS", "PASS"),
        ("report\nVERDICT: FAIL\n   \n", "FAIL"),
        ("VERDICT: PARTIAL  \n\n", "PARTIAL"),
        ("report\r\nVERDICT: PASS\r\n", "PASS"),
        ("report\n**VERDICT: PASS**", None),
        ("report\nVERDICT: PASS.", None),
        ("report\n  VERDICT: PASS", None),
        ("report\nverdict: pass", None),
        ("report\nVERDICT: MOSTLY", None),
        ("VERDICT: PASS\nthanks for reading", None),
        ("", None),
        ("\n \n", None),
    ],
)
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) == verdict


def test_regex_is_anchored():
    assert VERDICT_RE.pattern == "^VERDICT: (PASS|FAIL|PARTIAL)$"
