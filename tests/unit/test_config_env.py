"""`OUTLAST_CONTINUE_AS_NEW_EVENTS`: where a run starts, how long its history may grow before
it continues as new (an agent's, a team's)."""

import pytest

from agents.config import ConfigError, from_env


def test_it_sets_the_hand_on_point():
    assert (
        from_env({"OUTLAST_CONTINUE_AS_NEW_EVENTS": " 500 "}).agents.continue_as_new_events == 500
    )
    assert from_env({}).agents.continue_as_new_events == 10_000


@pytest.mark.parametrize("value", ["99", "-1", "ten", "1e4"])
def test_a_value_it_cannot_take_is_refused_by_name(value):
    with pytest.raises(ConfigError, match=f"OUTLAST_CONTINUE_AS_NEW_EVENTS={value}: give a whole"):
        from_env({"OUTLAST_CONTINUE_AS_NEW_EVENTS": value})
