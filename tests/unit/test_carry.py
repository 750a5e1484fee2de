from workflows.carry import from_client, read_carry


def test_a_carry_is_the_client_s_at_a_start_and_in_a_cron_run_it_was_not_handed_on_to():
    """A cron's later runs are continued runs with the client's input: the first refused the
    carry and the second failed its workflow task for good (a user test, 2026-12-05)."""
    ours = {"from_run": "run-1"}
    assert from_client(ours, None, cron=False)
    assert not from_client(ours, "run-1", cron=False)
    assert not from_client(ours, "run-1", cron=True)  # a cron agent's own continue-as-new
    assert from_client(ours, "run-2", cron=True)  # the cron's next run, the client's input
    assert from_client({"runs": "many"}, "run-1", cron=True)
    assert not from_client({"runs": "many"}, "run-1", cron=False)  # newer code's: it waits


def test_a_client_s_carry_that_does_not_fit_is_refused_and_one_handed_on_raises():
    import pytest
    from pydantic import ValidationError

    carry, refusal = read_carry({"runs": "many"}, client_start=True)
    assert carry is None and refusal is not None
    assert refusal.startswith("carry is set only by an agent's own continue-as-new")
    with pytest.raises(ValidationError):
        read_carry({"runs": "many"}, client_start=False)
    assert read_carry({}, client_start=True) == (None, None)
