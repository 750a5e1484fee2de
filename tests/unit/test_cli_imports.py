"""What the `outlast` command imports before it knows which command runs: `ls`, `show`, a
stop or a refused argument should not wait seconds for the agent loop and the model SDK
(issue 9; `outlast resume` once pulled them in through a module-level import, and every
command took 2.0 s and 136 MB instead of 0.7 s and 80 MB)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("anthropic", "workflows.agent_loop", "workflows.carry", "activities.llm")


def test_the_cli_module_imports_neither_the_model_sdk_nor_the_agent_loop():
    probe = (
        "import json, sys; import outlast.cli; "
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == []
