"""Every patch goes through workflows.versions, and the baseline bundles every patch the
committed histories recorded one by one."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from workflows.versions import BASELINE, BUNDLED

ROOT = Path(__file__).resolve().parents[2]


def recorded_patch_ids() -> set[str]:
    ids = set()
    for path in (ROOT / "tests/replay/histories").glob("*.json"):
        for event in json.loads(path.read_text())["events"]:
            marker = event.get("markerRecordedEventAttributes") or {}
            if marker.get("markerName") == "core_patch":
                data = marker["details"]["patch-data"]["payloads"][0]["data"]
                ids.add(json.loads(base64.b64decode(data))["id"])
    return ids


def test_only_versions_asks_temporal_for_a_patch():
    # A direct call would record its own marker and upsert in every run again.
    callers = {
        p.name
        for p in (ROOT / "workflows").glob("*.py")
        if re.search(r"workflow\.patched\(", p.read_text())
    }
    assert callers == {"versions.py"}


def test_the_baseline_bundles_every_patch_the_histories_took_one_by_one():
    assert recorded_patch_ids() - {BASELINE} <= BUNDLED
    assert BASELINE not in BUNDLED
