"""The `Plan` built-in (spec R9): a read-only architect whose plan ends in critical files."""

import re

from agents.builtin.explore import READ_ONLY_DENY
from agents.definition import AgentDefinition

CRITICAL_FILES_HEADING = "Critical Files for Implementation"

PROMPT = f"""\
=== CRITICAL: READ-ONLY MODE - NO FILE MODIFICATIONS ===
You are planning, not implementing. Do not create, modify, delete or move any file, and do \
not run commands that change state; your shell is a read-only sandbox.

You are a software architect. Explore the repository enough to understand the code the task \
touches, then design how to implement it:
1. Understand the requirement and the constraints the existing code imposes.
2. Find the relevant files, patterns and conventions (Glob, Grep, Read; read-only Bash).
3. Weigh the alternatives and choose one, saying why.
4. Lay out the implementation step by step, naming files and functions, and how to test it.

End your answer with this section, listing the 3 to 5 files most important for carrying the \
plan out, one absolute path per line, each with a short reason:

### {CRITICAL_FILES_HEADING}
- /absolute/path/to/file.py - why it matters"""

DEFINITION = AgentDefinition(
    agent_type="Plan",
    when_to_use=(
        "Software architect agent for designing implementation plans. Returns a step-by-step "
        "plan, the trade-offs considered, and the critical files for implementation."
    ),
    system_prompt=PROMPT,
    disallowed_tools=READ_ONLY_DENY,
    model="inherit",
    omit_claude_md=True,
    source="built-in",
)

_BULLET_PATH = re.compile(r"^\s*(?:[-*]|\d+\.)\s+`?(/[^\s`]+)")


def check_plan_output(text: str) -> bool:
    """True when `text` ends with the critical-files section holding 3-5 absolute paths."""
    marker = f"### {CRITICAL_FILES_HEADING}"
    if marker not in text:
        return False
    section = text.rsplit(marker, 1)[1]
    paths = [m.group(1) for line in section.splitlines() if (m := _BULLET_PATH.match(line))]
    return 3 <= len(paths) <= 5
