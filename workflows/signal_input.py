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

A field the input's model does not have is refused too (patched `signal-unknown-fields`):
pydantic would drop it, so `background {"agentid": "a1"}` moved every sync sub-agent to the
background and `reject_plan {"feedbak": "..."}` sent the plan back with no feedback. Inputs
that Outlast's own workflows send as well (`stop`, `send_message`) are lenient about it, so
that a field added in a later release does not lose a message on the way to a worker of this
one during a deploy.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import workflow

from workflows import versions

M = TypeVar("M", bound=BaseModel)

UNKNOWN_FIELDS = "signal-unknown-fields"
"""Patch: an input with a field its model does not have is refused (it was dropped)."""

KEPT = 20
"""Refusals kept: the latest, which say what the sender has to fix (5 let a few bad
signals in a row push out the one a person was looking for; each is logged as well)."""


def why(error: ValidationError) -> str:
    """Each problem as `field: message`, on one line."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in error.errors()
    )


def _unknown(model: type[BaseModel], value: Any) -> list[str]:
    if not isinstance(value, dict):
        return []
    return sorted(str(k) for k in value if k not in model.model_fields)


def fields_of(model: type[BaseModel]) -> list[str]:
    """The fields a sender gives: not the ones a model keeps for itself (excluded from its
    dump, such as `ClientInput.unknown_input_fields`), which a refusal listed as its fields
    (a user test, 2026-12-07)."""
    return [name for name, field in model.model_fields.items() if not field.exclude]


def _named(unknown: list[str], model: type[BaseModel]) -> str:
    """`unknown field nam (did you mean name?)`: the field each one was probably meant to be."""
    fields = fields_of(model)
    named = []
    for name in unknown:
        close = difflib.get_close_matches(name, fields, n=1)
        named.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(named)}"


def unknown_fields(signal: str, model: type[M], value: Any) -> str | None:
    """The sentence that refuses fields `model` does not have, if `value` has any."""
    unknown = _unknown(model, value)
    if not unknown:
        return None
    return (
        f"signal `{signal}` refused: {_named(unknown, model)}; its fields are "
        f"{', '.join(fields_of(model))}"
    )


OUTLAST_OWN_SIGNALS = frozenset(
    {
        "agent_notification",
        "shell_notification",
        "team_members",
        "set_backgrounded",
        "member_state",
        "shutdown_response",
    }
)
"""Signals Outlast's workflows send each other (a sub-agent its parent, a team its members)."""


def unknown_signal(workflow_type: str, name: str, known: Sequence[str], hint: str = "") -> str:
    """The sentence that refuses a signal of a name `workflow_type` has no handler for, with
    the name probably meant and the signals it takes (`known`, a person's first)."""
    close = difflib.get_close_matches(name, list(known), n=1)
    meant = f" (did you mean {close[0]}?)" if close else ""
    # Outlast's own go last and apart: they read as a person's to send (a user test).
    people = [k for k in known if k not in OUTLAST_OWN_SIGNALS]
    own = [k for k in known if k in OUTLAST_OWN_SIGNALS]
    theirs = f" (and Outlast's own workflows': {', '.join(own)})" if own else ""
    text = (
        f"signal `{name}` refused: {workflow_type} has no such signal{meant}; "
        f"the signals it takes: {', '.join(people)}{theirs}"
    )
    if not known:
        text = f"signal `{name}` refused: {workflow_type} takes no signals"
    return f"{text}; {hint}" if hint else text


def check(signal: str, model: type[M], value: Any) -> M | str:
    """`value` as `model`, or the sentence that refuses it; with the fields it does not have
    named too (a lenient input's `{"txt": ...}` was refused as `text: Field required` only)."""
    try:
        return model.model_validate(value)
    except ValidationError as e:
        unknown = _unknown(model, value)
        also = f"; {_named(unknown, model)}" if unknown else ""
        return f"signal `{signal}` refused: {why(e)}{also}"


class Refusals:
    """The signals a workflow refused, newest last."""

    def __init__(
        self,
        log: Callable[[str], object] | None = None,
        patched: Callable[[str], bool] | None = None,
    ) -> None:
        self.texts: list[str] = []
        self._log = log
        """Where a refusal is logged; the workflow's logger by default."""
        self._patched = patched
        """Stands in for `versions.patched` outside a workflow (unit tests)."""

    def _refuses_unknown_fields(self) -> bool:
        if self._patched is not None:
            return self._patched(UNKNOWN_FIELDS)
        return versions.patched(UNKNOWN_FIELDS)

    def keep(self, text: str) -> None:
        """Log a refusal and keep it (the oldest kept goes)."""
        (self._log or workflow.logger.warning)(text)
        self.texts = [*self.texts[-(KEPT - 1) :], text]

    def reword(self, text: str, instead: str | None) -> None:
        """Take back the newest refusal that reads `text` (None: what it refused was taken
        after all, later in the same workflow task), or say `instead`."""
        for i in range(len(self.texts) - 1, -1, -1):
            if self.texts[i] == text:
                if instead is None:
                    del self.texts[i]
                else:
                    self.texts[i] = instead
                return

    def unknown_signal(
        self, workflow_type: str, name: str, known: Sequence[str], hint: str = ""
    ) -> None:
        """A signal no handler has: Temporal buffered it for one that never came, so it was
        lost and nothing said so (`temporal workflow signal --name stopp` reported success;
        a user test, 2026-12-05). Its workflow's dynamic handler refuses it here instead.
        No command depends on it: a run that buffered one replays the same."""
        self.keep(unknown_signal(workflow_type, name, known, hint))

    def checked(
        self,
        signal: str,
        model: type[M],
        value: Any,
        extra: tuple[Any, ...] = (),
        default: dict[str, Any] | None = None,
        strict: bool = True,
    ) -> M | None:
        """`value` as `model`, or None once it is refused (logged and kept). `extra`: any
        further inputs the signal came with (one is taken); `default`: what a missing input
        (None) stands for, where the input is optional; `strict`: a field `model` does not
        have is refused (not for inputs Outlast's own workflows send, see above)."""
        unknown = unknown_fields(signal, model, value) if strict else None
        if extra:
            given = 1 + len(extra)
            result: M | str = f"signal `{signal}` refused: it takes one input, {given} were given"
        elif unknown is not None and self._refuses_unknown_fields():
            result = unknown
        else:
            result = check(
                signal, model, default if value is None and default is not None else value
            )
        if isinstance(result, str):
            self.keep(result)
            return None
        return result
