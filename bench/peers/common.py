"""Shared, framework-neutral pieces of the peer benchmark (any venv may import this).

Copied from shared/bench-peers and changed in one way: the tool is no longer `echo(i)` but
`Read(file_path)` on a small file of a real git repo, the tool Outlast runs, so every
configuration moves the same bytes through history. The scripted model is still
*stateless*: it decides only from the conversation it is given (tool results so far versus
the turn count in the first user message), which keeps it valid inside activities.

    turn k (k = 0..N-1): model -> Read(file_path); tool -> the file's text
    final turn:          model -> text "done"

so N+1 model calls and N tool executions per agent run, for Outlast and every peer.
"""

from __future__ import annotations

import os
import re
from typing import Any

SYSTEM_PROMPT = "You are a benchmark agent. Follow the user's instructions exactly."
TOOL_NAME = "Read"
TOOL_DESCRIPTION = "Read a file and return its text."
FINAL_TEXT = "done"

# The markers are what the scripted HTTP model (outlast fake-model) matches on, with
# `prompt_contains`, so one server process answers every turn count and the fan-out parent.
_SEQ_RE = re.compile(r"\[bench-turns=(\d+)\] Read the file (\S+) ")
_FAN_RE = re.compile(r"\[bench-fanout=(\d+)x(\d+)\] .* each reading (\S+) ")


def turns_marker(n_turns: int) -> str:
    return f"[bench-turns={n_turns}]"


def fanout_marker(n_children: int, child_turns: int) -> str:
    return f"[bench-fanout={n_children}x{child_turns}]"


def user_prompt(n_turns: int, path: str, worker: int | None = None) -> str:
    # `worker` makes sibling prompts differ: the scripted HTTP model keys tool ids and
    # attempt counts on the first user message, and siblings should not share them.
    who = f" (worker {worker})" if worker is not None else ""
    return f"{turns_marker(n_turns)} Read the file {path} {n_turns} times, then say done.{who}"


def fanout_prompt(n_children: int, child_turns: int, path: str) -> str:
    return (
        f"{fanout_marker(n_children, child_turns)} Delegate to sub_agent {n_children} times, "
        f"each reading {path} {child_turns} times, then say done."
    )


def oai_fanout_marker(n_children: int, child_turns: int) -> str:
    return f"[bench-oai-fanout={n_children}x{child_turns}]"


def oai_fanout_prompt(n_children: int, child_turns: int, path: str) -> str:
    """The openai-agents orchestrator's prompt when the scripted HTTP model answers it: a
    marker of its own, because its answer calls `sub_agent` where Outlast's calls `Agent`."""
    return (
        f"{oai_fanout_marker(n_children, child_turns)} Delegate to sub_agent {n_children} "
        f"times, each reading {path} {child_turns} times, then say done."
    )


def parse_prompt(text: str) -> tuple[int, str]:
    """(turns, file path) of a sequential prompt."""
    m = _SEQ_RE.search(text)
    if not m:
        raise ValueError(f"cannot parse turn count from prompt: {text!r}")
    return int(m.group(1)), m.group(2)


def parse_fanout(text: str) -> tuple[int, int, str] | None:
    """(children, turns per child, file path) of a fan-out prompt, or None."""
    m = _FAN_RE.search(text)
    return (int(m.group(1)), int(m.group(2)), m.group(3)) if m else None


def read_impl(file_path: str) -> str:
    with open(file_path, encoding="utf-8") as f:
        return f.read()


_client: Any = None


def anthropic_client() -> Any:
    """The HTTP-model rows' `AsyncAnthropic`: one per worker process, so connections are
    pooled, on the transport Outlast's activity uses (OUTLAST_MODEL_HTTP) and configured as
    Outlast's is (no retries, none of the SDK's own spans): the same model path.
    Read here, not imported from Outlast, so a peer's worker stays its own; `anthropic` is
    imported only when a row calls the model over HTTP."""
    global _client
    if _client is None:
        import anthropic

        backend = os.environ.get("OUTLAST_MODEL_HTTP", "").strip().lower() or "aiohttp"
        if backend not in ("aiohttp", "httpx"):
            raise ValueError(f"OUTLAST_MODEL_HTTP={backend!r}: use aiohttp or httpx")
        http = anthropic.DefaultAioHttpClient() if backend == "aiohttp" else None
        _client = anthropic.AsyncAnthropic(max_retries=0, http_client=http, open_telemetry=False)
    return _client
