"""Every patch goes through workflows.versions, and the baseline bundles every patch the
committed histories recorded one by one."""

from __future__ import annotations

import base64
import importlib
import itertools
import json
import re
from pathlib import Path

from workflows.versions import AFTER_BASELINE, BASELINE, BUNDLED, EARLIER

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


WORKFLOW_MODULES = sorted((ROOT / "workflows").glob("*.py"))


def asked_patch_ids() -> set[str]:
    """The ids the workflow code passes to `versions.patched`, or to `answer_held`, which
    asks for its own: literals, or module constants."""
    ids = set()
    asks = r"(?:versions\.patched|answer_held)\(\s*([A-Z_]+|\"[^\"]+\")"
    for path in WORKFLOW_MODULES:
        module = importlib.import_module(f"workflows.{path.stem}")
        for arg in re.findall(asks, path.read_text()):
            ids.add(json.loads(arg) if arg.startswith('"') else getattr(module, arg))
    return ids


def test_only_versions_asks_temporal_for_a_patch():
    # A direct call would record its own marker and upsert in every run again.
    callers = {
        p.name
        for p in WORKFLOW_MODULES
        if re.search(r"(?<!versions\.)\bpatched\(|deprecate_patch\(", p.read_text())
        and p.name != "versions.py"
    }
    assert callers == set()


def test_every_id_the_code_asks_is_bundled_or_listed_as_after_the_baseline():
    assert asked_patch_ids() == BUNDLED | AFTER_BASELINE
    assert not BUNDLED & AFTER_BASELINE


BASELINES = {BASELINE} | {baseline for baseline, _ in EARLIER}


def test_the_baseline_bundles_every_patch_the_histories_took_one_by_one():
    assert recorded_patch_ids() - BASELINES <= BUNDLED | AFTER_BASELINE
    assert not BASELINES & BUNDLED and len(BASELINES) == len(EARLIER) + 1


def test_a_later_baseline_bundles_every_id_of_an_earlier_one():
    # A run recorded under an earlier baseline answers its ids by that baseline; a run on
    # this code, by the newest: an id the newest left out would be asked on its own again.
    bundles = [BUNDLED, *(bundle for _, bundle in EARLIER)]
    assert all(later >= earlier for later, earlier in itertools.pairwise(bundles))


def test_every_baseline_is_in_the_committed_histories():
    # Each baseline's replay path (newest asked first, then the earlier ones) is held by a
    # history that recorded it.
    assert BASELINES <= recorded_patch_ids()


def test_a_closed_run_took_a_change_by_its_own_marker_or_a_baseline_that_bundles_it():
    # `workflows.resumed` asks this of a run's recorded ids (its `PermissionMode` attribute
    # is current only if the run took waits-marked).
    from workflows.versions import FIRST_BASELINE, FIRST_BUNDLED, SINCE_FIRST, took

    later = "waits-marked"
    assert later in SINCE_FIRST and later not in FIRST_BUNDLED
    assert took([BASELINE], later) and took([FIRST_BASELINE, later], later)
    assert not took([FIRST_BASELINE], later) and not took([], later)
    assert took([FIRST_BASELINE], "search-attributes") and took([BASELINE], "search-attributes")
    assert not took(["search-attributes"], later)
