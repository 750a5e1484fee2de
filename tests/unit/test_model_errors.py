"""How Messages API failures are classified (retry or not), as pure functions."""

from datetime import timedelta

import pytest

from activities.errors import NON_RETRYABLE, ModelRequestRejected, ModelUnavailable, OutlastError
from activities.llm import classify_status, retry_after


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


def test_retry_after_forms():
    assert retry_after({"retry-after": "3"}) == timedelta(seconds=3)
    assert retry_after({"retry-after-ms": "1500"}) == timedelta(milliseconds=1500)
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == timedelta(0)
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None and retry_after(None) is None


def test_every_non_retryable_type_says_so_itself():
    # The model call's retry policy lists no types: each error must carry the flag.
    classes = {c.__name__: c for c in OutlastError.__subclasses__()}
    for name in NON_RETRYABLE:
        assert classes[name]("x").non_retryable, name
    assert not ModelUnavailable("x").non_retryable
