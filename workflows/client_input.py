"""A workflow input with a field its model does not have is refused at the start.

Any Temporal client can start a workflow (`temporal workflow start --input '{...}'`, a
TypeScript client, a script). pydantic drops a field the input's model does not have, so a
misspelt one ran as if it had not been given: `{"max_turn": 5}` with no turn limit. A run a
client started now fails at once with the names (`ClientInput.unknown_input_fields`) and the
fields the input does have, before it spends anything. A client newer than the worker gets
the same answer for a field the worker does not know yet, rather than a run without it.
(Fields nested in the config are forbidden by its model: `outlast/converter.py` retries such a
start's task until a worker that knows them takes it.)

Only a client's start is checked. Inputs Outlast's own workflows build (children, resumed
runs, continue-as-new) stay lenient, as the signals they send do (`signal_input.py`): a field
added in a later release must not fail a child that a worker of this one picks up during a
deploy. A run with no unknown field asks for no patch, so it records nothing more.
"""

from __future__ import annotations

import difflib

from temporalio import workflow

from workflows import versions
from workflows.contracts import ClientInput

with workflow.unsafe.imports_passed_through():
    from activities.errors import InvalidAgentInput

INPUT_UNKNOWN_FIELDS = "input-unknown-fields"
"""Patch: a client's start with an unknown field fails (the field was dropped before)."""


def refusal(workflow_type: str, inp: ClientInput) -> str | None:
    """The sentence that refuses `inp`'s unknown fields, if it has any."""
    unknown = inp.unknown_input_fields
    if not unknown:
        return None
    known = [name for name in type(inp).model_fields if name != "unknown_input_fields"]
    named = ", ".join(_with_guess(name, known) for name in unknown)
    return (
        f"{workflow_type} input refused: unknown field{'s' if len(unknown) > 1 else ''} "
        f"{named} (misspelt, or sent by a client newer than this worker); "
        f"its fields are {', '.join(known)}"
    )


def _with_guess(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"{name} (did you mean {close[0]}?)" if close else name


def refuse_unknown_fields(workflow_type: str, inp: ClientInput) -> None:
    """Fail a run a client started with an input that has unknown fields.

    Raises:
        InvalidAgentInput: not retryable, so the workflow fails with the sentence.
    """
    text = refusal(workflow_type, inp)
    if text is not None and versions.patched(INPUT_UNKNOWN_FIELDS):
        raise InvalidAgentInput(text)
