"""The input of a signal people send, checked by its handler, so a bad one is refused where
they look.

Temporal decodes a signal's input before any handler runs, and drops a signal whose input
does not fit the handler's type with a line in the worker's log and nothing else: `temporal
workflow signal --name send_message --input '{"txt": "hi"}'` reports success, and the agent
never hears of it. The handlers a person or a client's code calls take their input as plain
JSON instead and check it here. A refusal is logged, and kept (the last few) for the
workflow's `status` query and its details in the Web UI.

No command depends on it, so a handler that checks its input replays as one that did not.
A missing input is None, and a handler whose input is optional takes None (only None) as its
default: `false` or `0` is refused as any other input that does not fit, never read as
"nothing given". A handler whose input is required refuses None as it refuses a bad one. The
handlers also take `*extra` inputs, which Temporal would otherwise pass as arguments the
handler does not have, failing the workflow task on every attempt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import workflow

M = TypeVar("M", bound=BaseModel)

KEPT = 5
"""Refusals kept: the latest, which say what the sender has to fix."""


def why(error: ValidationError) -> str:
    """Each problem as `field: message`, on one line."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in error.errors()
    )


def check(signal: str, model: type[M], value: Any) -> M | str:
    """`value` as `model`, or the sentence that refuses it."""
    try:
        return model.model_validate(value)
    except ValidationError as e:
        return f"signal `{signal}` refused: {why(e)}"


class Refusals:
    """The signals a workflow refused, newest last."""

    def __init__(self, log: Callable[[str], object] | None = None) -> None:
        self.texts: list[str] = []
        self._log = log
        """Where a refusal is logged; the workflow's logger by default."""

    def keep(self, text: str) -> None:
        self.texts = [*self.texts[-(KEPT - 1) :], text]

    def checked(
        self,
        signal: str,
        model: type[M],
        value: Any,
        extra: tuple[Any, ...] = (),
        default: dict[str, Any] | None = None,
    ) -> M | None:
        """`value` as `model`, or None once it is refused (logged and kept). `extra`: any
        further inputs the signal came with (one is taken); `default`: what a missing input
        (None) stands for, where the input is optional."""
        if extra:
            given = 1 + len(extra)
            result: M | str = f"signal `{signal}` refused: it takes one input, {given} were given"
        else:
            result = check(
                signal, model, default if value is None and default is not None else value
            )
        if isinstance(result, str):
            (self._log or workflow.logger.warning)(result)
            self.keep(result)
            return None
        return result
