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
CLOCK_METHODS = {"now", "utcnow", "today"}
"""Called on anything but `workflow` (`datetime.now()`, `datetime.datetime.now()`, an alias)."""
FORBIDDEN_NAMES = {"print", "open", "input", "setattr"}
CACHES = {"cache", "lru_cache"}
"""A cache on a function of a module imported once outlives the run that filled it."""
MUTATORS = {
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "popitem",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "sort",
    "reverse",
}
MUTABLE_FACTORIES = {"list", "dict", "set", "defaultdict", "deque", "OrderedDict", "Counter"}


def workflow_files() -> list[Path]:
    return sorted(WORKFLOWS.rglob("*.py"))


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
                and func.attr in CLOCK_METHODS
                and ast.unparse(func.value) != "workflow"
            ):
                found.append(f"{ast.unparse(func)}() at line {node.lineno}")
    return found


def _mutable(value: ast.expr | None) -> bool:
    if isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp):
        return True
    return isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in (
        MUTABLE_FACTORIES
    )


def _decorator_name(d: ast.expr) -> str:
    """`defn` for `@workflow.defn(name=...)` and `@defn`, `lru_cache` for `@functools.lru_cache`."""
    return ast.unparse(d).split("(")[0].split(".")[-1]


def _is_workflow_class(node: ast.ClassDef) -> bool:
    return any(_decorator_name(d) == "defn" for d in node.decorator_list)


def _module_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
    return names


def _local_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = func.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def _module_changes(func: ast.FunctionDef | ast.AsyncFunctionDef, module: set[str]) -> list[str]:
    """Where `func` changes a module-level name (an item, an attribute, a mutating method) or
    a class reached through a call (`type(self).x = ...`)."""
    own = _local_names(func)

    def global_root(node: ast.expr) -> bool:
        root = _root(node)
        return isinstance(root, ast.Name) and root.id in module and root.id not in own

    found = []
    for inner in (n for stmt in func.body for n in ast.walk(stmt)):
        if isinstance(inner, ast.Assign | ast.Delete):
            targets = inner.targets
        elif isinstance(inner, ast.AugAssign | ast.AnnAssign):
            targets = [inner.target]
        else:
            targets = []
        for t in targets:
            if isinstance(t, ast.Attribute | ast.Subscript) and (
                isinstance(_root(t), ast.Call) or global_root(t)
            ):
                found.append(f"{ast.unparse(t)} changed at line {inner.lineno}")
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr in MUTATORS
            and global_root(inner.func.value)
        ):
            found.append(f"{ast.unparse(inner.func)}() at line {inner.lineno}")
    return found


def shared_state(path: Path) -> list[str]:
    """What one run could leave behind for the next in a module imported once: `global`,
    a module-level name changed from a function, a mutable default argument, a cache, an
    attribute on a workflow class (instances keep their own state) or a mutable one on any
    class. Reading module-level tables is fine."""
    tree = ast.parse(path.read_text())
    module = _module_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"global {', '.join(node.names)} at line {node.lineno}")
        elif isinstance(node, ast.ClassDef):
            for b in node.body:
                if isinstance(b, ast.Assign | ast.AnnAssign) and (
                    _is_workflow_class(node) or _mutable(b.value)
                ):
                    name = ast.unparse(b.targets[0] if isinstance(b, ast.Assign) else b.target)
                    found.append(f"{node.name}.{name} at line {b.lineno}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for default in node.args.defaults + node.args.kw_defaults:
                if _mutable(default):
                    found.append(f"mutable default of {node.name} at line {default.lineno}")
            found += [
                f"cache on {node.name} at line {d.lineno}"
                for d in node.decorator_list
                if _decorator_name(d) in CACHES
            ]
            found += _module_changes(node, module)
    return found


def test_workflow_modules_are_deterministic():
    bad = {p.name: v for p in workflow_files() if (v := violations(p))}
    assert bad == {}


def test_workflow_modules_share_no_state_between_runs():
    bad = {p.name: v for p in workflow_files() if (v := shared_state(p))}
    assert bad == {}


SAMPLE = """\
import datetime
from datetime import datetime as DT
from functools import lru_cache
from temporalio.workflow import defn
SEEN = {}
LOG = []
COUNT = 0
class Base:
    shared = []
@defn(name="X")
class X(Base):
    count = 0
    def bump(self, acc=[]):
        global COUNT
        SEEN["k"] = 1
        LOG.append(DT.now())
        X.other = 2
        type(self).third = 3
        setattr(X, "fourth", 4)
        return datetime.datetime.now()
    def fine(self, seen):
        seen.append(1)
        table = dict(SEEN)
        table.update(a=1)
        return workflow.now()
@lru_cache
def cached(x):
    return x
"""


def test_the_rules_see_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE)
    assert sorted(violations(sample)) == sorted(
        [
            "setattr() at line 19",
            "DT.now() at line 16",
            "datetime.datetime.now() at line 20",
        ]
    )
    assert sorted(shared_state(sample)) == sorted(
        [
            "Base.shared at line 9",
            "X.count at line 12",
            "mutable default of bump at line 13",
            "global COUNT at line 14",
            "SEEN['k'] changed at line 15",
            "LOG.append() at line 16",
            "X.other changed at line 17",
            "type(self).third changed at line 18",
            "cache on cached at line 26",
        ]
    )


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
        "workflows.shell_task",
    }
    assert "workflows" in worker.PASSTHROUGH
