"""Which of an ended run's mail went unread (`activities.run_history._mail_texts`), decoded
with Temporal's own default converter: a continued run's carried mail counts first, and only
while no model call of the run had read it (a review, 2026-12-07)."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.converter import DataConverter

from activities.run_history import RunRecord, _mail_texts


@dataclass
class Client:
    data_converter: DataConverter = DataConverter.default


def record(carried: list[dict], own: list[tuple[int, dict]], coordinator=False):
    convert = DataConverter.default.payload_converter.to_payloads
    agent = {"prompt": "", "carry": {"mailbox": carried}}
    start = {"task": "t", "agent": agent} if coordinator else agent
    return RunRecord(
        last={},
        patches=set(),
        mail=[convert([m]) for _, m in own],
        mail_events=[e for e, _ in own],
        start_input=convert([start]),
    )


async def test_carried_mail_comes_first_until_a_model_call_of_the_run_read_it():
    run = record(
        [{"text": "CARRIED", "sender": "user", "id": "m1"}],
        [(7, {"text": "OWN-EARLY"}), (12, {"text": "OWN-LATE", "sender": "b"})],
    )
    assert await _mail_texts(Client(), run, -1) == [
        "CARRIED",
        "OWN-EARLY",
        "Message from b:\nOWN-LATE",
    ]
    assert await _mail_texts(Client(), run, 9) == ["Message from b:\nOWN-LATE"]


async def test_a_coordinator_s_carry_is_its_agent_s_and_a_repeated_id_counts_once():
    run = record([{"text": "CARRIED", "id": "m1"}], [(5, {"text": "CARRIED", "id": "m1"})], True)
    assert await _mail_texts(Client(), run, -1) == ["CARRIED"]


async def test_a_run_with_no_carry_or_an_odd_input_has_only_its_own_mail():
    plain = RunRecord(
        last={},
        patches=set(),
        mail=[DataConverter.default.payload_converter.to_payloads(["not an object"])],
        mail_events=[3],
        start_input=DataConverter.default.payload_converter.to_payloads([["a", "list"]]),
    )
    assert await _mail_texts(Client(), plain, -1) == []
