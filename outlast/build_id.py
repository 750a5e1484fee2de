"""The build id Outlast's workers report: a short hash of the code that decides what they do.

Temporal records the worker's build id in every workflow task and activity it runs, three
times in each agent turn's history. The SDK's default hashes the bytecode of every module the
process has loaded (about 4,200 here, most of them the `anthropic` SDK's types, each read from
disk when the first worker is built: 0.3-0.6 s) into 32 characters. This one hashes Outlast's
own sources and the two SDKs' versions, what changes a workflow's commands or an activity's
work, into 12: deployments are told apart as well, and each turn's history is 60 bytes
shorter (issue 9).

It goes to `Worker(build_id=...)`, which temporalio marks deprecated in favour of
`deployment_config`. A deployment without versioning records the same id plus its name (10
bytes more per turn, measured) and has the server keep a Worker Deployment for it, which
Outlast does not use; a user who runs deployments passes their own `deployment_config` in
the worker options, and this id steps aside (`worker.build_id_option`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from importlib import metadata
from pathlib import Path

PACKAGES = ("activities", "agents", "outlast", "workflows")
"""Outlast's top-level packages; `worker.py` sits beside them."""
SDKS = ("temporalio", "anthropic")
LENGTH = 12
"""Hex characters: 48 bits, against a handful of builds running at once."""


@functools.cache
def code_build_id() -> str | None:
    """Outlast's build id, computed once per process; None where its sources are not files
    (a zip or frozen install): the SDK's default then."""
    return build_id_of(Path(__file__).resolve().parents[1], sdk_versions())


def sdk_versions() -> dict[str, str]:
    versions = {}
    for name in SDKS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # a bundle without the distribution's metadata
            versions[name] = str(getattr(importlib.import_module(name), "__version__", "?"))
    return versions


def build_id_of(root: Path, versions: dict[str, str]) -> str | None:
    """The build id of the sources under `root` (Outlast's packages and `worker.py`) with
    these SDK versions; None if there are none."""
    digest = hashlib.sha256()
    files = [root / "worker.py", *(p for pkg in PACKAGES for p in (root / pkg).rglob("*.py"))]
    sources = sorted(f for f in files if f.is_file())
    if not sources:
        return None
    for path in sources:
        # The path too: moving code between modules changes what the sandbox loads.
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for name, version in sorted(versions.items()):
        digest.update(f"{name}=={version}\0".encode())
    return digest.hexdigest()[:LENGTH]
