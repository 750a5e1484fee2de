"""The tool registry: schemas the model sees, permanent activity names, activity options."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from pydantic import ValidationError
from temporalio import activity
from temporalio.contrib.pydantic import pydantic_data_converter

from activities.tools import ALL_ACTIVITIES, TOOLS, bash_runs, clean_schema
from activities.tools.base import ToolContext
from activities.tools.bash import BashInput
from activities.tools.grep import GrepInput, GrepRequest

# Permanent: a running workflow's history names these. Never change one to make a test pass.
ACTIVITY_NAMES = {
    "Read": "tool.read",
    "Write": "tool.write",
    "Edit": "tool.edit",
    "NotebookEdit": "tool.notebook_edit",
    "Glob": "tool.glob",
    "Grep": "tool.grep",
    "Skill": "tool.skill",
    "Bash": "tool.bash",
}

FIELDS = {
    "Read": ({"file_path", "offset", "limit", "pages"}, ["file_path"]),
    "Write": ({"file_path", "content"}, ["file_path", "content"]),
    "Edit": (
        {"file_path", "old_string", "new_string", "replace_all"},
        ["file_path", "old_string", "new_string"],
    ),
    "NotebookEdit": (
        {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
        ["notebook_path", "new_source"],
    ),
    "Glob": ({"pattern", "path"}, ["pattern"]),
    "Skill": ({"skill", "args"}, ["skill"]),
    "Grep": (
        {
            "pattern",
            "path",
            "glob",
            "output_mode",
            "-B",
            "-A",
            "-C",
            "context",
            "-n",
            "-i",
            "-o",
            "type",
            "head_limit",
            "offset",
            "multiline",
        },
        ["pattern"],
    ),  # fmt: skip
    "Bash": (
        {"command", "timeout", "description", "run_in_background", "dangerouslyDisableSandbox"},
        ["command"],
    ),
}

MINIMAL_INPUTS: dict[str, dict[str, Any]] = {
    "Read": {"file_path": "/w/a"},
    "Write": {"file_path": "/w/a", "content": ""},
    "Edit": {"file_path": "/w/a", "old_string": "a", "new_string": "b"},
    "NotebookEdit": {"notebook_path": "/w/a.ipynb", "cell_id": "c", "new_source": "x"},
    "Glob": {"pattern": "*"},
    "Grep": {"pattern": "x"},
}

JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def keys_anywhere(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(keys_anywhere(v, key) for v in node.values())
    if isinstance(node, list):
        return any(keys_anywhere(v, key) for v in node)
    return False


def test_registry_names_and_activity_names_are_pinned() -> None:
    assert list(TOOLS) == list(ACTIVITY_NAMES)
    for name, spec in TOOLS.items():
        defn = activity._Definition.must_from_callable(spec.activity)
        assert defn.name == ACTIVITY_NAMES[name]
        assert spec.name == name
    assert ALL_ACTIVITIES == [spec.activity for spec in TOOLS.values()]


@pytest.mark.parametrize("name", list(FIELDS))
def test_input_schema_has_exact_fields_and_required(name: str) -> None:
    schema = TOOLS[name].input_schema()
    properties, required = FIELDS[name]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == properties
    assert schema["required"] == required
    assert "$schema" not in schema
    assert not keys_anywhere(schema, "title")
    assert not keys_anywhere(schema, "anyOf")
    assert json.loads(json.dumps(schema)) == schema


@pytest.mark.parametrize("name", list(FIELDS))
def test_input_schema_is_well_formed(name: str) -> None:
    schema = TOOLS[name].input_schema()
    assert set(schema["required"]) <= set(schema["properties"])
    for field, prop in schema["properties"].items():
        assert prop.get("type") in JSON_TYPES, field
        assert prop["description"].strip(), field
        if "enum" in prop:
            assert all(isinstance(v, str) for v in prop["enum"])


def test_descriptions_carry_the_usage_rules() -> None:
    assert "absolute path" in TOOLS["Read"].description
    assert "2000 lines" in TOOLS["Read"].description
    assert "Read tool" in TOOLS["Edit"].description and "replace_all" in TOOLS["Edit"].description
    assert "NEVER" in TOOLS["Grep"].description
    assert "600000" in TOOLS["Bash"].description and "30000" in TOOLS["Bash"].description
    assert "modification time" in TOOLS["Glob"].description


def test_read_only_flags() -> None:
    assert {n for n, s in TOOLS.items() if s.read_only} == {"Read", "Glob", "Grep", "Skill"}


def test_grep_aliases_validate_by_alias_and_by_name() -> None:
    by_alias = GrepInput.model_validate({"pattern": "x", "-A": 2, "-B": 1, "-C": 3, "-i": True})
    assert (by_alias.lines_after, by_alias.lines_before, by_alias.lines_around) == (2, 1, 3)
    assert by_alias.case_insensitive and by_alias.line_numbers
    by_name = GrepInput(pattern="x", only_matching=True)
    assert by_name.only_matching
    assert by_alias.model_dump(by_alias=True)["-A"] == 2
    with pytest.raises(ValidationError):
        GrepInput.model_validate({"pattern": "x", "-Z": 1})


async def test_grep_request_survives_the_temporal_converter() -> None:
    req = GrepRequest(
        ctx=ToolContext(workspace_root="/w", cwd="/w"),
        input=GrepInput.model_validate({"pattern": "x", "-A": 2, "-n": False}),
    )
    payloads = await pydantic_data_converter.encode([req])
    (back,) = await pydantic_data_converter.decode(payloads, [GrepRequest])
    assert back == req


def test_activity_options_live_with_the_tool() -> None:
    bash = TOOLS["Bash"].activity_options(BashInput(command="make", timeout=300_000))
    assert bash["start_to_close_timeout"] == timedelta(seconds=330)
    assert bash["heartbeat_timeout"] == timedelta(seconds=30)
    # One re-run after a lost worker, and only after the interrupted run is killed
    # (tests/workflows/test_bash_rerun.py); failing commands are results, never retried. The
    # attempts beyond are for graceful worker stops, which the activity gives back; it
    # refuses a re-run past the one (bash_runs.MAX_CRASH_RERUNS).
    assert bash["retry_policy"].maximum_attempts == 6
    assert bash_runs.MAX_CRASH_RERUNS == 1
    default = TOOLS["Bash"].activity_options({"command": "ls"})
    assert default["start_to_close_timeout"] == timedelta(seconds=150)
    for name, minimal in MINIMAL_INPUTS.items():
        options = TOOLS[name].activity_options(TOOLS[name].input_model.model_validate(minimal))
        assert options["heartbeat_timeout"] == timedelta(seconds=30)
        assert options["retry_policy"].maximum_attempts > 1
        assert options["start_to_close_timeout"] > timedelta(0)


def test_request_builds_the_activity_argument() -> None:
    ctx = ToolContext(workspace_root="/w", cwd="/w")
    req = TOOLS["Grep"].request(ctx, {"pattern": "x", "-C": 1})
    assert isinstance(req, GrepRequest) and req.input.lines_around == 1


def test_clean_schema_keeps_a_property_named_title() -> None:
    schema = {
        "title": "Model",
        "properties": {"title": {"title": "Title", "anyOf": [{"type": "string"}, {"type": "null"}],
                                 "default": None}},
    }  # fmt: skip
    assert clean_schema(schema) == {"properties": {"title": {"type": "string"}}}
