"""How long a waiting agent goes between checks that its children still run."""

from __future__ import annotations

from workflows.child_endings import LIVENESS_CHECK_MAX_S, liveness_interval


def test_checks_come_twice_as_far_apart_up_to_fifteen_minutes():
    waits = [liveness_interval(120, n) for n in range(6)]
    assert waits == [120, 240, 480, 900, 900, 900]
    assert liveness_interval(120, 10_000) == LIVENESS_CHECK_MAX_S  # no overflow


def test_a_configured_interval_longer_than_the_cap_is_kept():
    assert liveness_interval(3600, 0) == 3600
    assert liveness_interval(3600, 5) == 3600
