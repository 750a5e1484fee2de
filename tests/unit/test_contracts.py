"""Names persisted in histories never change, and imports form the documented DAG."""

import ast
from pathlib import Path

from temporalio import activity, workflow

import worker
from activities.host_steps import host_step_activities
from activities.local_tools import local_tool_activities
from workflows.agent import AgentWorkflow

ROOT = Path(__file__).resolve().parents[2]

PERMANENT_ACTIVITIES = {
    "llm.call_model",
    "llm.compact",
    "prompt.render_context",
    "agents.load_definitions",
    "agents.definition_names",
    "agents.find_earlier",
    "tool.read",
    "tool.write",
    "tool.edit",
    "tool.glob",
    "tool.grep",
    "tool.bash",
    "tool.bash_kill",
    "tool.skill",
    "tool.web_fetch",
    "tool.web_search",
    "workspace.create_worktree",
    "workspace.cleanup_worktree",
    "workspace.snapshot",
    "workspace.remove_snapshot",
    "workspace.changed_files",
    "workspace.head",
    "verification.spot_check",
    "classifier.classify_handoff",
    "transcript.repair",
    "agents.resume_agent",
    "agents.describe_agents",
    "agents.await_closed",
    "transcript.append",
    "transcript.export",
    "resume.read_state",
    "hooks.run_command",
}


def test_activity_names_are_permanent():

    registered = {
        activity._Definition.must_from_callable(fn).name
        for fn in [*worker.model_activities(None), *worker.HOST_ACTIVITIES]  # type: ignore[arg-type]
    }
    assert PERMANENT_ACTIVITIES <= registered


PERMANENT_LOCAL_ACTIVITIES = {
    "tool.read.local",
    "tool.glob.local",
    "tool.grep.local",
    "prompt.render_context.local",
    "classifier.classify_handoff.local",
    "transcript.export.local",
    "agents.definition_names.local",
}
"""Recorded in local-activity markers, which replay matches by name."""


def test_local_activity_names_are_permanent():
    local = [
        *local_tool_activities("outlast-host-x"),
        *host_step_activities("outlast-host-x", worker.HOST_ACTIVITIES),
    ]
    registered = {activity._Definition.must_from_callable(fn).name for fn in local}
    assert PERMANENT_LOCAL_ACTIVITIES == registered


def test_workflow_signal_and_query_names_are_permanent():
    defn = workflow._Definition.must_from_class(AgentWorkflow)
    assert defn.name == "AgentWorkflow"
    assert {"stop", "send_message", "agent_notification", "set_backgrounded", "background"} <= set(
        defn.signals
    )
    assert {"status", "transcript", "tasks", "plan", "question"} <= set(defn.queries)
    assert {"answer_question"} <= set(defn.updates)


def _imports(package: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
    return found


def test_imports_form_a_dag():
    ours = {"agents", "activities", "workflows", "outlast", "worker"}
    assert _imports("agents") & ours <= {"agents"}
    assert _imports("activities") & ours <= {"agents", "activities"}
    assert _imports("workflows") & ours <= {"agents", "activities", "workflows"}


def test_only_the_model_activity_and_its_transport_import_anthropic():
    users = sorted(
        p.relative_to(ROOT).as_posix()
        for pkg in ("agents", "activities", "workflows")
        for p in (ROOT / pkg).rglob("*.py")
        if "anthropic"
        in {
            n.split(".")[0]
            for node in ast.walk(ast.parse(p.read_text()))
            for n in (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
        }
    )
    assert users == ["activities/llm.py", "activities/model_http.py"]


def test_agents_package_imports_only_stdlib_pydantic_yaml():
    allowed = {
        "agents",
        "pydantic",
        "yaml",
        "__future__",
        "typing",
        "collections",
        "re",
        "hashlib",
        "json",
        "posixpath",
        "dataclasses",
        "ipaddress",
        "shlex",
        "urllib",
        "difflib",  # the CLI's guess of a misspelt agent type; deterministic
    }
    assert _imports("agents") <= allowed
