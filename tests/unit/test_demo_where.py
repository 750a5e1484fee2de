"""Where the demo says to look at its run, and `outlast server-stop` away from the server's
state directory."""

from __future__ import annotations

import socket
from contextlib import closing

from rich.console import Console
from typer.testing import CliRunner

from outlast.cli import app
from outlast.demo import where_to_look
from outlast.devserver import DevServer


def said(ui: str | None, tmp_path, keep_server: bool = True) -> str:
    console = Console(record=True, width=200)
    where_to_look(console, "wf-1", ui, DevServer(state_dir=tmp_path), keep_server)
    return console.export_text()


def test_the_demo_says_its_embedded_server_keeps_running_and_how_to_stop_it(tmp_path):
    out = said("http://localhost:8233", tmp_path)
    assert "Web UI:      http://localhost:8233/namespaces/default/workflows/wf-1" in out
    assert "keeps running on localhost:7233 for that: `outlast server-stop` stops it" in out
    assert "workflow show -w wf-1" in out


def test_on_a_server_of_its_own_the_demo_names_no_embedded_one(tmp_path):
    out = said(None, tmp_path)
    assert "Web UI" not in out and "server-stop" not in out and "workflow show -w wf-1" in out


def test_server_stop_elsewhere_says_whose_server_listens(tmp_path):
    """No pid file in this state directory, but something on the port: not `no server`."""
    listener = socket.socket()
    try:
        listener.bind(("localhost", 7233))
        listener.listen()
    except OSError:
        pass  # something listens there already, which is the case under test
    with closing(listener):
        done = CliRunner().invoke(app, ["server-stop"], env={"OUTLAST_HOME": str(tmp_path)})
    assert done.exit_code == 0, done.output  # nothing of this directory's runs: no error
    text = " ".join(done.output.split())
    assert "something listens on localhost:7233" in text and str(tmp_path) in text, text
    assert "no embedded server was started with the state in" in text, text
    assert "where it was started, or with its OUTLAST_HOME" in text, text


def test_the_demo_says_which_worker_answers_for_its_run_after_it_ends(tmp_path):
    """Its run is on a queue of its own: plain `outlast worker` does not answer the Web UI's
    query for its current details."""
    console = Console(record=True, width=200)
    where_to_look(
        console, "wf-1", "http://localhost:8233", DevServer(state_dir=tmp_path), True, "q-1"
    )
    out = console.export_text()
    hint = "a worker on its queue answers: `OUTLAST_TASK_QUEUE=q-1 outlast worker --no-model`"
    assert hint in out, out


def test_the_demo_s_commands_name_a_server_and_namespace_other_than_the_defaults(
    tmp_path, monkeypatch
):
    """Run as `TEMPORAL_ADDRESS=localhost:7455 outlast demo`, its history command and its
    worker hint went to localhost:7233, where the run is not (a user test, 2026-12-07)."""
    monkeypatch.setenv("TEMPORAL_ADDRESS", "localhost:7455")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "agents")
    console = Console(record=True, width=300)
    where_to_look(
        console, "wf-1", "http://localhost:8455", DevServer(state_dir=tmp_path), True, "q-1"
    )
    out = console.export_text()
    assert "Web UI:      http://localhost:8455/namespaces/agents/workflows/wf-1" in out, out
    assert "workflow show --address localhost:7455 --namespace agents -w wf-1" in out, out
    worker = "TEMPORAL_ADDRESS=localhost:7455 TEMPORAL_NAMESPACE=agents OUTLAST_TASK_QUEUE=q-1"
    assert f"`{worker} outlast worker --no-model`" in out, out
    # The defaults, spelt either way, are left out.
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "default")
    console = Console(record=True, width=300)
    where_to_look(
        console, "wf-1", "http://localhost:8233", DevServer(state_dir=tmp_path), True, "q-1"
    )
    out = console.export_text()
    assert "workflow show -w wf-1" in out and "`OUTLAST_TASK_QUEUE=q-1 outlast worker" in out, out
