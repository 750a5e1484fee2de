"""The script format: loading YAML/JSON, strict validation, shorthands, substitution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from outlast.scripted_model import Script, ScriptError, load_script
from outlast.scripted_model.__main__ import parse_variables
from outlast.scripted_model.script import (
    ErrorSpec,
    UnknownVariable,
    cwd_from_system,
    parse_script,
    render_turn,
    substitute,
)

YAML = """\
model: claude-scripted
latency_ms: 5
agents:
  - name: main
    match: {agent_type: general-purpose, header: {X-Some-Header: v}}
    turns:
      - text: "I'll look around first."
        tool_use:
          - {name: Glob, input: {pattern: "**/*.py"}}
      - thinking: "hmm"
        tool_use: {name: Read, input: {file_path: "{{cwd}}/calc.py"}}
      - fail: [529, {status: 429, retry_after: 1}, 500]
        text: done
      - error: {status: 400, type: invalid_request_error, message: bad}
    after_last: repeat_last
  - name: fallback
    turns: [{text: hi}]
"""


def test_load_yaml(tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    path.write_text(YAML)
    script = load_script(path)
    main, fallback = script.agents
    assert script.model == "claude-scripted" and script.latency_ms == 5
    assert main.match.header == {"x-some-header": "v"} and not main.match.is_fallback
    assert fallback.match.is_fallback and fallback.after_last == "end"
    assert [t.name for t in main.turns[1].tool_use] == ["Read"]
    assert [f.status for f in main.turns[2].fail] == [529, 429, 500]
    assert main.turns[2].fail[1].retry_after == 1
    assert main.turns[0].effective_stop_reason == "tool_use"
    assert main.turns[2].effective_stop_reason == "end_turn"


def test_load_json_and_dict(tmp_path: Path) -> None:
    data = {"agents": [{"name": "a", "turns": [{"text": "x"}]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    assert load_script(path) == load_script(data) == Script.model_validate(data)
    script = load_script(data)
    assert load_script(script) is script


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("agents: [{name: a, turns: [{txt: typo}]}]", "txt"),
        ("agents: [{name: a, turns: [{}]}]", "at least one of"),
        ("agents: [{name: a, turns: [{text: x, error: {status: 400}}]}]", "cannot also"),
        ("agents: [{name: a}, {name: a}]", "unique"),
        ("agents: [{name: a, after_last: loop}]", "after_last"),
        ("agents: [{name: a, turns: [{text: x, fail: [200]}]}]", "fail"),
        ("agents: [: bad yaml", "s.yaml"),
    ],
)
def test_invalid_scripts(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ScriptError) as error:
        load_script(path)
    assert fragment in str(error.value)


def test_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("{}")
    with pytest.raises(ScriptError, match="yaml"):
        load_script(path)


def test_error_spec_defaults() -> None:
    assert ErrorSpec.model_validate(529).error_type == "overloaded_error"
    assert ErrorSpec.model_validate(413).error_type == "request_too_large"
    assert ErrorSpec.model_validate(503).error_type == "api_error"
    assert "529" in ErrorSpec.model_validate(529).error_message


def test_substitute_recurses_and_reports_unknown_names() -> None:
    value = {"a": ["{{x}}/y", {"b": "{{ x }}-{{z}}"}], "n": 3}
    assert substitute(value, {"x": "1", "z": "{{x}}"}) == {"a": ["1/y", {"b": "1-{{x}}"}], "n": 3}
    with pytest.raises(UnknownVariable) as error:
        substitute(value, {"x": "1"})
    assert error.value.name == "z" and error.value.known == ["x"]


def test_render_turn_keeps_fail_entries_out() -> None:
    script = load_script({"agents": [{"name": "a", "turns": [{"fail": [500], "text": "{{who}}"}]}]})
    rendered = render_turn(script.agents[0].turns[0], {"who": "me"})
    assert rendered.text == "me" and rendered.fail == []


def test_cwd_from_system() -> None:
    system = (
        "Intro\n<env>\nWorking directory: /a/b c\nPlatform: linux\n</env>\nWorking directory: /x"
    )
    assert cwd_from_system(system) == "/a/b c"
    assert cwd_from_system("no such line") is None


def test_parse_variables() -> None:
    assert parse_variables(["A=1", "B=x=y", "C="]) == {"A": "1", "B": "x=y", "C": ""}
    with pytest.raises(ValueError):
        parse_variables(["novalue"])


def test_a_port_in_use_is_named_with_what_to_do(tmp_path, capsys):
    """It said only `error: [Errno 98] Address already in use` (a user test, 2026-12-07)."""
    import socket

    from outlast.scripted_model.__main__ import main

    script = tmp_path / "s.yaml"
    script.write_text("agents:\n  - name: main\n    turns:\n      - text: hi\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["--script", str(script), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2 and f"error: cannot listen on 127.0.0.1:{port}: " in err, err
    assert "choose another --port (0 picks a free one)" in err, err


def test_a_misspelt_key_is_named_with_the_one_meant():
    """pydantic's report read `tool_usee ... Extra inputs are not permitted [type=...]` with a
    link (a user test, 2026-12-07)."""
    data = {"agents": [{"name": "main", "turns": [{"tool_usee": {"name": "Read"}}]}]}
    with pytest.raises(ScriptError) as raised:
        parse_script(data, source="s.yaml")
    assert str(raised.value) == (
        "s.yaml: invalid script:\n  agents.0.turns.0.tool_usee: no such key; did you mean "
        "'tool_use'?"
    )
