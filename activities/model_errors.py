"""Which Messages API failures pass and which do not: the typed error for an HTTP error answer
(or an `error` event inside an accepted stream), with the delay the server asks for. Pure;
`activities/llm.py` applies it to what the SDK raises."""

from __future__ import annotations

import contextlib
import math
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from activities.errors import ModelRequestRejected, ModelUnavailable, OutlastError

_RETRYABLE_STATUS = {408, 409, 429, 529}
# Error types the API uses for conditions that pass; decisive when an error arrives inside a
# stream, where the HTTP status is already 200.
_RETRYABLE_TYPES = {"api_error", "overloaded_error", "rate_limit_error", "timeout_error"}

MAX_RETRY_AFTER = timedelta(minutes=10)
"""The longest wait a server's header can ask for (it replaces the retry policy's interval)."""


def _seconds(text: str) -> float | None:
    with contextlib.suppress(ValueError):
        value = float(text)
        if math.isfinite(value):
            return value
    return None


def retry_after(headers: Any) -> timedelta | None:
    """The delay a 429/529 asks for: `retry-after-ms`, `retry-after` seconds or HTTP date,
    between 0 and MAX_RETRY_AFTER (a negative, "inf" or huge value failed the activity with
    an error of its own, or set a retry days away)."""
    if headers is None:
        return None
    asked: timedelta | None = None
    if (ms := _seconds(headers.get("retry-after-ms") or "")) is not None:
        asked = timedelta(seconds=min(ms / 1000, MAX_RETRY_AFTER.total_seconds()))
    elif value := headers.get("retry-after"):
        if (seconds := _seconds(value)) is not None:
            asked = timedelta(seconds=min(seconds, MAX_RETRY_AFTER.total_seconds()))
        else:
            with contextlib.suppress(TypeError, ValueError, OverflowError):
                asked = parsedate_to_datetime(value) - datetime.now(UTC)
    return None if asked is None else min(max(timedelta(0), asked), MAX_RETRY_AFTER)


_WAIT_STATUS = {429, 529}
"""Statuses that mean "later", whatever `x-should-retry` says: the API sends `false` on a 429
of exhausted usage, with a `retry-after` of hours, which a durable agent waits out (Temporal
paces the retry by it) where an interactive client gives up."""


def _should_retry_header(status: int, headers: Any) -> bool | None:
    """The API's own verdict, `x-should-retry: true|false` (exactly, as the SDK reads it),
    which overrides the status as it does in the SDK's retry loop (off here: Temporal
    retries); not for a mid-stream error (its headers are the accepted request's) or a
    `_WAIT_STATUS`."""
    if status < 400 or status in _WAIT_STATUS or headers is None:
        return None
    value = headers.get("x-should-retry")
    return True if value == "true" else False if value == "false" else None


def classify_status(
    status: int, error_type: str | None, api_message: str, headers: Any, request_id: str | None
) -> OutlastError:
    """The typed error for an HTTP error answer from the Messages API."""
    fields = {
        "status": status,
        "error_type": error_type,
        "api_message": api_message,
        "request_id": request_id,
    }
    transient = _should_retry_header(status, headers)
    if transient is None:
        transient = (
            status in _RETRYABLE_STATUS
            or status >= 500
            or error_type in _RETRYABLE_TYPES
            or status < 400  # an `error` event mid-stream: the request itself was accepted
        )
    if transient:
        return ModelUnavailable(
            f"Model API answered {status} ({error_type or 'error'}): {api_message}",
            next_retry_delay=retry_after(headers),
            **fields,
        )
    return ModelRequestRejected(
        f"Model API rejected the request with {status} ({error_type or 'error'}): {api_message}",
        **fields,
    )
