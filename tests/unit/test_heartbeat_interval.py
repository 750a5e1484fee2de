"""How often a tool heartbeats: rarely (each beat is a billed action), never too late."""

from datetime import timedelta

from activities.heartbeats import HEARTBEAT_INTERVAL_S, heartbeat_interval


def test_spec_default_of_five_seconds_under_the_default_timeout():
    assert HEARTBEAT_INTERVAL_S == 5.0  # R93
    assert heartbeat_interval(timedelta(seconds=30)) == 5.0
    assert heartbeat_interval(None) == 5.0


def test_a_short_heartbeat_timeout_gets_three_beats_within_it():
    # tools.heartbeat_timeout_s may be as low as 5 s: one beat every 5 s would time it out.
    assert heartbeat_interval(timedelta(seconds=5)) == 5 / 3
    assert heartbeat_interval(timedelta(seconds=12)) == 4.0
