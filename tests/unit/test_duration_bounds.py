"""A duration a client sets is refused at the start when no timer could be made of it: an
infinite or astronomically long one failed the workflow task for good (OverflowError)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from agents.config import MAX_MS, MAX_SECONDS, AgentSettings, ModelSettings, ToolSettings

SECONDS = [
    (AgentSettings, "liveness_check_s"),
    (AgentSettings, "background_command_wait_s"),
    (ModelSettings, "call_timeout_s"),
    (ModelSettings, "heartbeat_timeout_s"),
    (ModelSettings, "retry_window_s"),
    (ToolSettings, "heartbeat_timeout_s"),
]
MILLISECONDS = [(AgentSettings, "auto_background_ms"), (AgentSettings, "background_hint_ms")]


@pytest.mark.parametrize(("section", "field"), SECONDS)
@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e14, MAX_SECONDS + 1])
def test_a_duration_no_timer_can_hold_is_refused(section, field, value):
    with pytest.raises(ValidationError, match=field):
        section(**{field: value})


@pytest.mark.parametrize(("section", "field"), MILLISECONDS)
@pytest.mark.parametrize("value", [10**20, MAX_MS + 1, -1])
def test_a_millisecond_setting_no_timer_can_hold_is_refused(section, field, value):
    with pytest.raises(ValidationError, match=field):
        section(**{field: value})


def test_the_longest_allowed_durations_make_timers():
    assert section_values_fit(MAX_SECONDS, timedelta(milliseconds=MAX_MS))
    assert AgentSettings(liveness_check_s=MAX_SECONDS).liveness_check_s == MAX_SECONDS


def section_values_fit(seconds: float, ms: timedelta) -> bool:
    now = datetime(2026, 12, 5, tzinfo=UTC)
    return now + timedelta(seconds=seconds) > now and now + ms > now
