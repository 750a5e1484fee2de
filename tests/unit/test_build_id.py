"""Outlast's build id: a short hash of its own sources and the SDKs' versions."""

from pathlib import Path

from outlast.build_id import LENGTH, build_id_of, code_build_id
from worker import build_id_option

VERSIONS = {"temporalio": "1.0.0", "anthropic": "2.0.0"}


def tree(root: Path) -> Path:
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "agent.py").write_text("A = 1\n")
    (root / "worker.py").write_text("W = 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text("T = 1\n")
    return root


def test_the_id_changes_with_the_code_and_the_sdks_only(tmp_path):
    root = tree(tmp_path)
    first = build_id_of(root, VERSIONS)
    assert len(first) == LENGTH and first == build_id_of(root, dict(VERSIONS))
    (root / "tests" / "test_x.py").write_text("T = 2\n")  # not code a worker runs
    assert build_id_of(root, VERSIONS) == first
    assert build_id_of(root, {**VERSIONS, "temporalio": "1.0.1"}) != first
    (root / "workflows" / "agent.py").write_text("A = 2\n")
    changed = build_id_of(root, VERSIONS)
    assert changed != first
    (root / "workflows" / "agent.py").rename(root / "workflows" / "moved.py")
    assert build_id_of(root, VERSIONS) != changed
    # No source files (a zip or frozen install): no id of Outlast's, the SDK's default then.
    assert build_id_of(tmp_path / "nothing", VERSIONS) is None


def test_a_worker_deployment_brings_its_own_id():
    assert build_id_option({}) == {"build_id": code_build_id()}
    assert build_id_option({"deployment_config": object()}) == {}
