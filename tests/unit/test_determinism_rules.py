"""Workflow code stays deterministic (design.md): no clock, randomness, env, files, threads
or prints, checked statically; and no state shared between runs. Every workflow module is
imported once, outside the sandbox, for speed (worker.PASSTHROUGH), so these checks, not the
sandbox's proxies or its fresh import per run, are what guard them."""

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


def shared_state(path: Path) -> list[str]:
    """What one run could leave behind for the next in a module imported once: `global`
    rebinding, and attributes on a workflow class (instances keep their own state)."""
    found = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"global {', '.join(node.names)} at line {node.lineno}")
        if isinstance(node, ast.ClassDef) and any(
            "workflow.defn" in ast.unparse(d) for d in node.decorator_list
        ):
            for b in node.body:
                if isinstance(b, ast.Assign | ast.AnnAssign):
                    name = ast.unparse(b.targets[0] if isinstance(b, ast.Assign) else b.target)
                    found.append(f"{node.name}.{name} at line {b.lineno}")
    return found


def test_workflow_modules_share_no_state_between_runs():
    bad = {p.name: v for p in WORKFLOWS.glob("*.py") if (v := shared_state(p))}
    assert bad == {}


def test_the_rules_see_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import time\n"
        "COUNT = 0\n"
        "@workflow.defn(name='X')\n"
        "class X:\n"
        "    seen: list = []\n"
        "    def bump(self):\n"
        "        global COUNT\n"
        "        print(datetime.now())\n"
    )
    assert violations(sample) == ["time", "print() at line 8", "datetime.now() at line 8"]
    assert shared_state(sample) == ["X.seen at line 5", "global COUNT at line 7"]


def test_every_workflow_module_is_passed_through():
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
    assert "workflows" in worker.PASSTHROUGH
