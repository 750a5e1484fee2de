"""The Temporal Web UI, in headless Chromium: a coordinator session is found by its Pattern
search attribute, and its page shows the live current-details markdown (turn, tokens, the
workers' table). A screenshot of that page is kept as a test artifact."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from rich.console import Console

from outlast.client import connect
from outlast.demo.patterns import run_pattern_demo
from tests.support import Queues, free_port, local_dev_server, running_workers
from worker import host_id
from workflows.contracts import host_task_queue

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(
    os.environ.get("OUTLAST_TEST_ARTIFACTS") or Path(__file__).parents[2] / "test-artifacts"
)


@pytest.fixture(scope="module")
def ui_server(state_root: Path):
    with local_dev_server(state_root / "ui", headless=False, ui_port=free_port()) as server:
        yield server


def chromium(url: str, profile: Path, *args: str) -> str:
    """Load `url` in headless Chromium until its scripts settle; what it printed."""
    assert CHROMIUM, "the Web UI test needs chromium: apt-get install chromium (.ci/run does)"
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",  # root in CI; the page is our own local UI
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--window-size=1440,1100",
            "--virtual-time-budget=20000",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout


def listing_url(ui: str, pattern: str) -> str:
    query = quote('Pattern="%s"' % pattern)  # noqa: UP031 - f-string quotes need 3.12
    return f"{ui}/namespaces/default/workflows?query={query}"


def rendered_markdown(html: str) -> list[str]:
    """The markdown the UI renders in its sandboxed iframes (`/render?content=...`)."""
    found = re.findall(r'src="/render\?content=([^"&]*)', html)
    return [unquote(m).replace("&amp;", "&") for m in found]


async def test_coordinator_session_in_the_web_ui(ui_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TEMPORAL_ADDRESS", ui_server.address)
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
    console = Console(record=True, width=200)
    assert await run_pattern_demo(console, "coordinator", latency_ms=0), console.export_text()
    wid = re.search(r"workflow (outlast-demo-coordinator-\S+)", console.export_text()).group(1)
    ui = ui_server.ui_url
    profile = tmp_path / "chromium"

    client = await connect(ui_server.address)
    # Current details are read by a query: a worker must be there to answer it, on the run's
    # queue (a demo's is its own).
    queue = (await client.get_workflow_handle(wid).describe()).task_queue
    async with running_workers(client, queues=Queues(queue, host_task_queue(host_id()))):
        listing = await asyncio.to_thread(
            chromium, listing_url(ui, "coordinator"), profile, "--dump-dom"
        )
        run_path = rf"/namespaces/default/workflows/{re.escape(wid)}/[0-9a-f-]+"
        link = re.search(rf'href="({run_path})/', listing)
        assert link, "the coordinator is not in the list filtered by Pattern"
        # Its workers carry the session's pattern too, so the same filter lists them.
        assert listing.count(f"{quote(wid, safe='')}%2F") >= 4
        other = await asyncio.to_thread(
            chromium, listing_url(ui, "pipeline"), profile, "--dump-dom"
        )
        assert wid not in other

        page = f"{ui}{link.group(1)}/user-metadata"
        html = await asyncio.to_thread(chromium, page, profile, "--dump-dom")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "web-ui-coordinator-details.png"
        shot.unlink(missing_ok=True)
        await asyncio.to_thread(chromium, page, profile, f"--screenshot={shot}")

    markdown = rendered_markdown(html)
    summary = next(m for m in markdown if m.startswith("coordinator: "))
    assert "failing tests" in summary
    details = next(m for m in markdown if m.startswith("**coordinator**"))
    assert "tokens" in details and "cache read" in details
    assert "**Sub-agents** (0 running of " in details and "| worker | completed |" in details
    assert shot.stat().st_size > 20_000, "the screenshot is missing or blank"
