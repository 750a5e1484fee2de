"""How Messages API failures are classified (retry or not), as pure functions."""

import logging
from datetime import timedelta

import pytest
from temporalio.exceptions import ApplicationErrorCategory

from activities.errors import (
    NON_RETRYABLE,
    LocalModelCallTimedOut,
    ModelRequestRejected,
    ModelUnavailable,
    OutlastError,
)
from activities.llm import _local_timeout
from activities.model_errors import MAX_RETRY_AFTER, classify_status, retry_after


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [
        (408, None, True),
        (409, None, True),
        (429, "rate_limit_error", True),
        (500, "api_error", True),
        (503, None, True),
        (529, "overloaded_error", True),
        (400, "invalid_request_error", False),
        (401, "authentication_error", False),
        (403, "permission_error", False),
        (404, "not_found_error", False),
        (413, "request_too_large", False),
        (422, None, False),
        # An `error` event inside a stream arrives with HTTP 200: the request was accepted,
        # so what failed is the service, not the request.
        (200, "api_error", True),
        (200, "overloaded_error", True),
        (200, None, True),
    ],
)
def test_classification(status, error_type, retryable):
    error = classify_status(status, error_type, "msg", {}, "req_1")
    assert isinstance(error, ModelUnavailable if retryable else ModelRequestRejected)
    assert error.non_retryable is (not retryable)
    assert error.details[0] == {
        "status": status,
        "error_type": error_type,
        "api_message": "msg",
        "request_id": "req_1",
    }


@pytest.mark.parametrize(
    ("status", "header", "retryable"),
    [
        (500, "false", False),
        (503, "false", False),
        (400, "true", True),
        (422, "true", True),
        # Not a verdict (the SDK reads the exact words): the status decides.
        (400, "TRUE", False),
        (500, "maybe", True),
        (503, "", True),
        # "Later" whatever the header says: an exhausted quota's 429 says `false`, with a
        # retry-after of hours that a durable agent waits out.
        (429, "false", True),
        (529, "false", True),
        # Mid-stream errors come on a 200 whose headers were for the accepted request.
        (200, "false", True),
    ],
)
def test_the_apis_should_retry_header_overrides_the_status(status, header, retryable):
    error = classify_status(status, None, "msg", {"x-should-retry": header}, None)
    assert isinstance(error, ModelUnavailable if retryable else ModelRequestRejected)
    assert error.non_retryable is (not retryable)


def test_retry_after_forms():
    assert retry_after({"retry-after": "3"}) == timedelta(seconds=3)
    assert retry_after({"retry-after-ms": "1500"}) == timedelta(milliseconds=1500)
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == timedelta(0)
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None and retry_after(None) is None
    # Out of bounds: never negative, never past MAX_RETRY_AFTER, never an error of its own.
    assert retry_after({"retry-after-ms": "-5"}) == timedelta(0)
    assert retry_after({"retry-after-ms": "inf", "retry-after": "2"}) == timedelta(seconds=2)
    assert retry_after({"retry-after": "1e12"}) == MAX_RETRY_AFTER
    assert retry_after({"retry-after": "nan"}) is None
    assert retry_after({"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"}) == MAX_RETRY_AFTER


def test_every_non_retryable_type_says_so_itself():
    # The model call's retry policy lists no types: each error must carry the flag.
    classes = {c.__name__: c for c in OutlastError.__subclasses__()}
    for name in NON_RETRYABLE:
        assert classes[name]("x").non_retryable, name
    assert not ModelUnavailable("x").non_retryable


@pytest.mark.parametrize(
    ("limit_s", "level", "regular_next"),
    [(5, logging.INFO, True), (600, logging.WARNING, False)],
)
def test_a_local_call_past_its_limit_is_logged_once_and_raised_as_benign(
    caplog, limit_s, level, regular_next
):
    """`auto`'s 5 s try is given up by design (INFO); a `local_activity: true` call past its
    whole call timeout is worth a warning. Either way the SDK's own log of the error is DEBUG,
    with no traceback at warning level (ApplicationErrorCategory.BENIGN)."""
    caplog.set_level(logging.INFO)
    error = _local_timeout(limit_s, attempt=2)
    assert isinstance(error, LocalModelCallTimedOut)
    assert error.category == ApplicationErrorCategory.BENIGN and not error.non_retryable
    (record,) = caplog.records
    assert record.levelno == level
    assert f"ran past its {limit_s} s limit (attempt 2)" in record.getMessage()
    resent = "auto the workflow sends it again as a regular activity"
    assert (resent in record.getMessage()) == regular_next
