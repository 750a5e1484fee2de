"""One payload walk per workflow task each way instead of three, when there is no codec.

temporalio 1.35 walks every workflow activation three times on its way in (codec-encoded
storage references, external storage, the codec) and every completion three times on its way
out (the codec, external storage, storage references), visiting each payload of each job and
command and rewriting every payload list it visits. Without a payload codec the first and
third walk of each direction leave every payload as it is: only the external-storage walk has
work to do (Outlast's claim-check of large payloads, activities/payload_store.py). The walks
were ~12% of the worker's busy time in a 20-agent fan-out (bench/RESULTS.md, "What is left").

`install()` replaces the SDK's two functions with ones that, for a converter without a codec,
make only the external-storage walk, exactly as the SDK makes it, and that only where it can
change something: on the way out when the completion is at least the store's threshold in size
(a smaller one holds no payload the store would take), on the way in when the activation's
bytes hold a storage reference's marks (most hold none). With a codec (`OUTLAST_PAYLOAD_KEY`,
outlast/codec.py) the SDK's own run. On the way in the walk runs whenever the activation holds
a reference's marks, with or without a store, so a claim-check reference reaching a worker
without one is still refused (TMPRL1105). What a
skipped walk would still have done: refuse (TMPRL1106) a codec-encoded storage reference
reaching a worker without the codec; the payload converter then fails on it instead, less
clearly. temporalio 1.35 writes no such references. A data converter that changes payloads in
the SDK's private `_decode_payload_sequence` and siblings without a `payload_codec` would be
skipped too; Outlast's does not, and `OUTLAST_PAYLOAD_VISITS=full` is there for one that does.

The SDK calls both functions through their module (`temporalio.bridge.worker`), which is what
is replaced. `install` checks that the functions and the pieces it uses are the ones it was
written for and leaves the SDK alone otherwise; tests/unit/test_payload_visits.py fails if a
new temporalio changes them. `OUTLAST_PAYLOAD_VISITS=full` keeps the SDK's walks.
"""

from __future__ import annotations

import inspect
from inspect import Parameter
from typing import Any

import temporalio.bridge.worker as bridge_worker
from temporalio.converter import DataConverter
from temporalio.converter._extstore import (
    _REFERENCE_ENCODING,
    _REFERENCE_MARKER_KEY,
    _REFERENCE_MESSAGE_TYPE,
    ExternalStorage,
    StorageOperationMetrics,
)

EXPECTED = {
    "decode_activation": [
        "activation",
        "data_converter",
        "decode_headers",
        "storage_concurrency_limit",
    ],
    "encode_completion": [
        "completion",
        "data_converter",
        "encode_headers",
        "storage_concurrency_limit",
    ],
}
WALKS = {
    "decode_activation": "_external_retrieve_payload_sequence",
    "encode_completion": "_external_store_payload_sequence",
}
"""The converter method of the one walk that has work to do without a codec."""
REFERENCE_MARKS = (_REFERENCE_ENCODING, _REFERENCE_MESSAGE_TYPE, _REFERENCE_MARKER_KEY.encode())
"""Bytes every storage reference payload carries in its metadata (temporalio's own test for
one, `_is_reference_payload` / `_has_reference_marker`, looks for these)."""
_ORIGINAL: dict[str, Any] = {}
POSITIONAL_OR_KEYWORD = Parameter.POSITIONAL_OR_KEYWORD


def parameters(fn: Any) -> list[tuple[str, Any]]:
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]


def _usable() -> bool:
    for name, params in EXPECTED.items():
        fn = getattr(bridge_worker, name, None)
        if fn is None or parameters(fn) != [(n, POSITIONAL_OR_KEYWORD) for n in params]:
            return False
    visitor = getattr(bridge_worker, "CommandAwarePayloadVisitor", None)
    if visitor is None or not hasattr(bridge_worker, "_Visitor"):
        return False
    wanted = {"skip_search_attributes", "skip_headers", "concurrency_limit"}
    if not wanted <= set(inspect.signature(visitor).parameters):
        return False
    if not hasattr(ExternalStorage, "payload_size_threshold"):
        return False
    return all(hasattr(DataConverter, method) for method in WALKS.values())


def _nothing_to_store(completion: Any, converter: DataConverter) -> bool:
    """No payload of the completion can go to the store: the store takes a payload only from
    its threshold up (`ExternalStorage._select_driver`), and none is larger than the whole."""
    storage = converter.external_storage
    return storage is None or completion.ByteSize() < storage.payload_size_threshold


def _no_reference(activation: Any) -> bool:
    """No payload of the activation is a storage reference, marked or not: the bytes that make
    one (its encoding, its message type, the marker's key) appear nowhere in it. Searching the
    serialised activation is far cheaper than visiting its payloads one by one in Python."""
    data = activation.SerializeToString()
    return not any(mark in data for mark in REFERENCE_MARKS)


async def _external_walk(
    target: Any, converter: DataConverter, headers: bool, limit: int, method: str
) -> StorageOperationMetrics:
    """The SDK's external-storage walk, as it makes it (the middle of its three), unless it
    cannot change anything."""
    metrics = StorageOperationMetrics()
    if method == WALKS["encode_completion"]:
        if _nothing_to_store(target, converter):
            return metrics
    elif _no_reference(target):
        return metrics  # (with a reference and no store, the walk refuses it: TMPRL1105)
    with metrics.track():
        await bridge_worker.CommandAwarePayloadVisitor(
            skip_search_attributes=True, skip_headers=not headers, concurrency_limit=limit
        ).visit(bridge_worker._Visitor(getattr(converter, method)), target)
    return metrics


def _one_walk(name: str, original: Any) -> Any:
    # The SDK's worker passes the first two arguments by position and the rest by keyword:
    # the names are theirs.
    if name == "decode_activation":

        async def decode_activation(
            activation: Any,
            data_converter: DataConverter,
            decode_headers: bool,
            storage_concurrency_limit: int,
        ) -> StorageOperationMetrics:
            if data_converter.payload_codec is not None:
                return await original(
                    activation,
                    data_converter=data_converter,
                    decode_headers=decode_headers,
                    storage_concurrency_limit=storage_concurrency_limit,
                )
            return await _external_walk(
                activation, data_converter, decode_headers, storage_concurrency_limit, WALKS[name]
            )

        walk = decode_activation
    else:

        async def encode_completion(
            completion: Any,
            data_converter: DataConverter,
            encode_headers: bool,
            storage_concurrency_limit: int,
        ) -> StorageOperationMetrics:
            if data_converter.payload_codec is not None:
                return await original(
                    completion,
                    data_converter=data_converter,
                    encode_headers=encode_headers,
                    storage_concurrency_limit=storage_concurrency_limit,
                )
            return await _external_walk(
                completion, data_converter, encode_headers, storage_concurrency_limit, WALKS[name]
            )

        walk = encode_completion
    walk.__doc__ = original.__doc__
    return walk


def install() -> bool:
    """Put the one-walk functions in place; True if they are (now or before), False if the
    SDK's are not the ones this was written for (then nothing changes)."""
    if _ORIGINAL:
        return True
    if not _usable():
        return False
    for name in EXPECTED:
        _ORIGINAL[name] = getattr(bridge_worker, name)
        setattr(bridge_worker, name, _one_walk(name, _ORIGINAL[name]))
    return True


def uninstall() -> None:
    """The SDK's own walks again."""
    for name, original in _ORIGINAL.items():
        setattr(bridge_worker, name, original)
    _ORIGINAL.clear()
