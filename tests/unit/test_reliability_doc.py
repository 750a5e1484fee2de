"""docs/reliability.md names real tests, and those are the `reliability` suite."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import reliability_test_ids

ROOT = Path(__file__).parents[2]


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_cited_test_exists():
    cited = reliability_test_ids()
    assert len(cited) >= 50
    missing = []
    for test_id in sorted(cited):
        path, name = test_id.split("::")
        if not (ROOT / path).exists() or name not in defined_tests(ROOT / path):
            missing.append(test_id)
    assert not missing, f"docs/reliability.md cites tests that do not exist: {missing}"
