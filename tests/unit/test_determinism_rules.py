"""Workflow code stays deterministic (design.md): no clock, randomness, env, files, threads
or prints, checked statically. Several workflow helper modules run outside the sandbox for
speed (worker.PASSTHROUGH), so this check, not the sandbox, is what guards them."""

from __future__ import annotations

import ast
from pathlib import Path

import worker

WORKFLOWS = Path(__file__).resolve().parents[2] / "workflows"
FORBIDDEN_MODULES = {
    "time",
    "random",
    "uuid",
    "os",
    "threading",
    "subprocess",
    "socket",
    "secrets",
    "multiprocessing",
    "requests",
    "httpx",
}
FORBIDDEN_CALLS = {
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
}
FORBIDDEN_NAMES = {"print", "open", "input"}


def violations(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in FORBIDDEN_MODULES:
                found.append(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_NAMES:
                found.append(f"{func.id}() at line {node.lineno}")
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and (func.value.id, func.attr) in FORBIDDEN_CALLS
            ):
                found.append(f"{func.value.id}.{func.attr}() at line {node.lineno}")
    return found


def test_workflow_modules_are_deterministic():
    bad = {p.name: v for p in WORKFLOWS.glob("*.py") if (v := violations(p))}
    assert bad == {}


def test_every_workflow_helper_is_passed_through_and_defn_modules_are_not():
    modules = {f"workflows.{p.stem}" for p in WORKFLOWS.glob("*.py") if p.stem != "__init__"}
    defining = {m for m in modules if "@workflow.defn" in (WORKFLOWS / f"{m[10:]}.py").read_text()}
    assert defining == {
        "workflows.agent",
        "workflows.fork_join",
        "workflows.coordinator",
        "workflows.pipeline",
        "workflows.team",
        "workflows.verified_task",
    }
    assert modules - defining <= set(worker.PASSTHROUGH)
    assert not defining & set(worker.PASSTHROUGH)
