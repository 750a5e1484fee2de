import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from workflows.carry import only_unknown_fields, read_carry


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


def error_of(data: dict) -> ValidationError:
    with pytest.raises(ValidationError) as e:
        Strict.model_validate(data)
    return e.value


def test_a_carry_that_fails_only_for_fields_it_does_not_know_is_newer_codes():
    assert only_unknown_fields(error_of({"a": 1, "b": 2}))
    assert not only_unknown_fields(error_of({"a": "x", "b": 2}))
    assert not only_unknown_fields(error_of({}))


def test_a_bad_carry_is_refused_at_a_client_start_and_in_a_cron_run_and_raises_otherwise():
    """A cron's later runs are continued runs with the client's input: the first refused the
    carry and the second failed its workflow task for good (a user test, 2026-12-05)."""
    bad = {"runs": "many"}
    for client_start, cron in ((True, False), (False, True)):
        carry, refusal = read_carry(bad, client_start=client_start, cron=cron)
        assert carry is None and refusal is not None
        assert refusal.startswith("carry is set only by an agent's own continue-as-new")
    with pytest.raises(ValidationError):
        read_carry(bad, client_start=False)
    assert read_carry({}, client_start=True) == (None, None)
