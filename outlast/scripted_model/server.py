"""The HTTP server: stdlib `ThreadingHTTPServer` speaking the Messages API from a script.

Each request runs on its own thread. What to answer is decided by `matching.Responder`; the
handler here holds the response, writes it (JSON or SSE) and appends the log record.
"""

from __future__ import annotations

import json
import select
import socket
import socketserver
import threading
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

from outlast.scripted_model.matching import (
    Outcome,
    Plan,
    RequestFacts,
    Responder,
    failure,
    invalid,
    sha256_hex,
)
from outlast.scripted_model.script import (
    ErrorSpec,
    Script,
    load_script,
)
from outlast.scripted_model.wire import (
    Answer,
    error_body,
    error_headers,
    message_events,
    message_json,
    models_body,
)

DEFAULT_MODEL = "claude-scripted"
# Outlast's agent headers, the read timeout the SDK says it gives the request, and the
# request's trace context (when the caller exports traces).
LOGGED_HEADERS = ("x-outlast-", "x-stainless-timeout", "traceparent")
# A write to a peer that has gone away (or to a connection stop() shut down) fails with an
# OSError (BrokenPipe, ConnectionReset, ...); the request is then logged as `disconnected`.
_GONE = OSError


class RequestRecord(RequestFacts):
    """One line of the request log (see SCRIPT_FORMAT.md, "Request log")."""

    seq: int
    status: int
    outcome: Outcome
    duration_ms: int = 0


class RequestLog:
    """In-memory list of records plus an optional JSONL file, appended under one lock."""

    def __init__(self, path: str | Path | None, with_bodies: bool) -> None:
        self._path = Path(path) if path is not None else None
        self._with_bodies = with_bodies
        self._lock = threading.Lock()
        self._appended = threading.Condition(self._lock)
        self._sending = 0
        self._records: list[dict[str, Any]] = []

    def sending(self) -> None:
        """A response starts going out; its record follows through `append(sent=True)`."""
        with self._lock:
            self._sending += 1

    def append(
        self, facts: RequestFacts, status: int, outcome: Outcome, duration_ms: int, sent: bool
    ) -> None:
        with self._lock:
            record = RequestRecord(
                **dict(facts),
                seq=len(self._records) + 1,
                status=status,
                outcome=outcome,
                duration_ms=duration_ms,
            )
            # `seq` first so that the JSONL file reads naturally.
            data = {"seq": record.seq} | record.model_dump(mode="json", exclude={"body"})
            if self._with_bodies:
                data["body"] = record.body
            self._records.append(data)
            if self._path is not None:
                with self._path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(data, ensure_ascii=False) + "\n")
            if sent:
                self._sending -= 1
            self._appended.notify_all()

    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            # A client can read a response before the handler thread appends its record;
            # waiting for responses in flight keeps "answer received => record visible" true.
            self._appended.wait_for(lambda: self._sending == 0, timeout=2.0)
            return [dict(r) for r in self._records]


class ScriptedModelServer:
    """An Anthropic-compatible Messages API server that answers from a `Script`.

    Args:
        script: a `Script`, its dict form, or the path of a YAML/JSON script file.
        host: interface to bind.
        port: TCP port; 0 picks a free one (read it back from `url`).
        log_path: JSONL file to append one record per request to.
        variables: values for `{{NAME}}` placeholders (`cwd` comes from the request).
        log_bodies: also record each full request body in the log.
    """

    def __init__(
        self,
        script: Script | Mapping[str, Any] | str | Path,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | Path | None = None,
        variables: dict[str, str] | None = None,
        log_bodies: bool = False,
    ) -> None:
        self.script = load_script(script)
        self.responder = Responder(self.script, variables)
        self._log = RequestLog(log_path, log_bodies)
        self.stopping = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler, self)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def log(self) -> list[dict[str, Any]]:
        """A snapshot of the request log records, oldest first."""
        return self._log.records()

    def start(self) -> Self:
        """Serve on a background daemon thread; returns at once."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, args=(0.05,), name="scripted-model", daemon=True
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve on the calling thread until interrupted (the CLI's mode)."""
        try:
            self._httpd.serve_forever(0.05)
        finally:
            self._close()

    def stop(self) -> None:
        """Stop serving, release held responses and close every open connection."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._close()

    def _close(self) -> None:
        self.stopping.set()
        self._httpd.close_connections()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def sending(self) -> None:
        self._log.sending()

    def record(self, plan: Plan, outcome: Outcome, started: float) -> None:
        duration_ms = int((time.monotonic() - started) * 1000)
        self._log.append(plan.record, plan.status, outcome, duration_ms, sent=plan.sending)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # A fan-out's agents connect at once; socketserver's backlog of 5 let some of 20
    # simultaneous connections fail with a read error (bench/model_transport.py).
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type, app: ScriptedModelServer) -> None:
        self.app = app
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self.connections_closed = threading.Condition(self.connections_lock)
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN, a DNS lookup that can stall for
        # seconds on a machine without working DNS; the name is only used for CGI.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def close_connections(self) -> None:
        # Idle keep-alive connections would keep their handler threads (and the client's
        # pooled connection) alive after stop(); shutting them down ends both.
        with self.connections_lock:
            open_now = list(self.connections)
        for conn in open_now:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        # Handler threads log their request on the way out; wait so that the log is complete
        # when stop() returns. Bounded: a thread stuck in a write must not hang stop().
        with self.connections_lock:
            self.connections_closed.wait_for(lambda: not self.connections, timeout=2.0)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes on a kept-alive connection; with Nagle
        # the body would wait for the client's delayed ACK (~40 ms) before it is sent.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
            self.server.connections_closed.notify_all()
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        """Silenced: the JSONL request log is the record of traffic."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        try:
            if path == "/healthz":
                self._send(200, b"ok", "text/plain; charset=utf-8")
            elif path == "/v1/models":
                self._send_json(200, models_body(self.server.app.script.model or DEFAULT_MODEL))
            else:
                self._send_json(404, error_body("not_found_error", f"Not found: GET {path}"))
        except _GONE:
            self.close_connection = True

    def do_POST(self) -> None:
        started = time.monotonic()
        raw = self._read_body()
        path = urlsplit(self.path).path
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = RequestFacts(
            ts=datetime.now(UTC).isoformat(),
            path=path,
            request_sha256=sha256_hex(raw),
            headers={k: v for k, v in headers.items() if k.startswith(LOGGED_HEADERS)},
        )
        app = self.server.app
        plan = self._plan(path, raw, headers, record)
        outcome: Outcome = "disconnected"
        try:
            outcome = self._deliver(plan)
        finally:
            app.record(plan, outcome, started)

    def _plan(self, path: str, raw: bytes, headers: dict[str, str], record: RequestFacts) -> Plan:
        if path != "/v1/messages":
            return invalid(record, f"Not found: POST {path}", status=404)
        try:
            return self.server.app.responder.plan(raw, headers, record)
        except Exception as exc:  # a bug here must answer 500 and be logged, not drop the call
            message = f"scripted model internal error: {exc!r}"
            return failure(record, ErrorSpec(status=500, type="api_error", message=message), 0.0)

    def _deliver(self, plan: Plan) -> Outcome:
        """Hold, then write the planned response; the outcome to log."""
        if not self._hold(plan.delay_s):
            self.close_connection = True
            return "disconnected"
        plan.sending = True
        self.server.app.sending()
        try:
            if plan.answer is not None and plan.stream:
                self._send_stream(plan.answer)
            elif plan.answer is not None:
                self._send_json(200, message_json(plan.answer))
            else:
                self._send_error(plan.error)
        except _GONE:
            self.close_connection = True
            return "disconnected"
        return plan.outcome

    def _hold(self, seconds: float) -> bool:
        """Wait before answering; False if the client went away (or the server stops)."""
        deadline = time.monotonic() + seconds
        stopping = self.server.app.stopping
        while (remaining := deadline - time.monotonic()) > 0:
            if stopping.is_set():
                return False
            try:
                readable, _, _ = select.select([self.connection], [], [], min(remaining, 0.05))
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return False
            except OSError:
                return False
            if readable:
                # The client sent more bytes (pipelining); it is alive, so just wait.
                return not stopping.wait(max(0.0, deadline - time.monotonic()))
        return not stopping.is_set()

    def _read_body(self) -> bytes:
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = 0
        if length <= 0:
            # Without a length (e.g. a chunked body) the connection cannot be reused safely.
            self.close_connection = True
            return b""
        return self.rfile.read(length)

    def _send(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_json(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self._send(status, data, "application/json", headers)

    def _send_error(self, spec: ErrorSpec | None) -> None:
        assert spec is not None, "a plan without an answer carries an error"
        self._send_json(
            spec.status, error_body(spec.error_type, spec.error_message), error_headers(spec)
        )

    def _send_stream(self, answer: Answer) -> None:
        # Chunked, and the connection stays open for the next request, as the real API's
        # does: a client that had to reconnect for every streamed call would pay a TCP
        # connect per model call here and not in production.
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
        self.end_headers()
        framed = [b"%x\r\n%s\r\n" % (len(event), event) for event in message_events(answer)]
        self.wfile.write(b"".join([*framed, b"0\r\n\r\n"]))
