"""A workflow input with a field its model does not have is refused at the start.

Any Temporal client can start a workflow (`temporal workflow start --input '{...}'`, a
TypeScript client, a script). pydantic drops a field the input's model does not have, so a
misspelt one ran as if it had not been given: `{"max_turn": 5}` with no turn limit. A run a
client started now fails at once with the names (`ClientInput.unknown_input_fields`) and the
fields the input does have, before it spends anything. Its own fields, and those of the
inputs nested in it that are `ClientInput`s too (a team's members: `lead.plan_mode_requird`
would have let a teammate change things without asking). A typo inside the config, a stage,
a task, a definition or hooks, which their models forbid, is taken out by path before it can
fail the decoding (`workflows/nested_unknowns.py`) and refused the same way, with the field
it probably meant; so is one inside the lenient models nested in it (the workspace, the
lineage), which pydantic would drop.

A client newer than the worker gets the same answer for a field it sets that the worker does
not know yet, rather than a run without it. Outlast's clients send every field, so a field a
later release adds would reach older workers at its default; one whose default is empty
(null, false, [], ...) is let through (`ClientInput`), one with any other default is refused:
deploy the workers before the clients when an input gains such a field.

Only a client's start is checked. Inputs Outlast's own workflows build (children, resumed
runs, continue-as-new) stay lenient, as the signals they send do (`signal_input.py`): a field
added in a later release must not fail a child that a worker of this one picks up during a
deploy. A run with no unknown field asks for no patch, so it records nothing more. (A refused
run whose field a later release adds to the model will not replay on that release: it no
longer asks for the patch. Closed runs only; Temporal replays them only for a query.)
"""

from __future__ import annotations

import difflib
from typing import TypeVar, get_args

from pydantic import BaseModel
from temporalio import workflow

from agents.definition import PermissionMode
from workflows import versions
from workflows.contracts import BOOKKEEPING, AgentInput, ClientInput

with workflow.unsafe.imports_passed_through():
    from activities.errors import InvalidAgentInput

INPUT_UNKNOWN_FIELDS = "input-unknown-fields"
"""Patch: a client's start with an unknown field fails (the field was dropped before)."""

INPUT_LENIENT_UNKNOWN = "input-lenient-unknown-fields"
"""Patch: a client's start whose only unknown fields are inside its lenient nested models
(the workspace, the lineage) fails; they were dropped. An id of its own, after the
baseline: under `INPUT_UNKNOWN_FIELDS`, which the baseline bundles, a run that went on
with such a field on earlier code would replay as refused."""

INPUT_VALUES = "input-values-checked"
"""Patch: a client's start whose prompt is blank, whose permission mode is none of the modes
or whose workspace names no host queue fails at once; it ran (a misspelt `Plan` without plan
mode: free to write), or failed later (the model refusing a blank prompt, a host step on a
queue no worker serves)."""

MODES = get_args(PermissionMode)
M = TypeVar("M", bound=BaseModel)


def client_start(inp: AgentInput) -> bool:
    """Whether a client started this agent, not one of Outlast's workflows (a child, a stage,
    a teammate, a resume). A continued run is told apart by its carry, in the workflow."""
    return inp.resume_from is None and inp.parent is None and inp.lineage.parent_workflow_id is None


def refusal(what: str, inp: ClientInput) -> str | None:
    """The sentence that refuses `inp`'s unknown fields, its own or those of an input nested
    in it (a team's `lead.plan_mode_requird`), if it has any; `what` names the input
    (`AgentWorkflow input`, ``update `decide_stage` ``)."""
    found = unknown_paths(inp)
    if not found:
        return None
    named = ", ".join(f"{path}{with_guess(name, known)}" for path, name, known in found)
    text = (
        f"{what} refused: unknown field{'s' if len(found) > 1 else ''} {named} (misspelt, or "
        f"sent by a client newer than this worker)"
    )
    # The fields of each input that has an unknown one: a team's `lead.plan_mode_requird`
    # listed the team's (a user test, 2026-12-07). Its nested strict models' come with their
    # guesses (their `known` is empty).
    owners: dict[str, list[str]] = {}
    for path, _, known in found:
        if known:
            owners.setdefault(path, known)
    said = [f"{_owner(path)} fields are {', '.join(known)}" for path, known in owners.items()]
    return "; ".join([text, *said])


def _owner(path: str) -> str:
    """`its`, or `lead's` for the input at `lead.`."""
    return f"{path.removesuffix('.')}'s" if path else "its"


def unknown_paths(inp: ClientInput, prefix: str = "") -> list[tuple[str, str, list[str]]]:
    """Each unknown field of `inp` and of the inputs nested in it: (where, its name, the
    fields it could have meant)."""
    known = fields_of(type(inp))
    found = [(prefix, name, known) for name in inp.unknown_input_fields]
    # Inside its nested models: the path and the likely meaning are worked out already.
    nested = [*inp.unknown_nested_fields, *inp.unknown_lenient_fields]
    found += [(prefix, name, []) for name in nested]
    for where, item in nested_inputs(inp):
        found += unknown_paths(item, f"{prefix}{where}.")
    return found


def nested_inputs(inp: ClientInput) -> list[tuple[str, ClientInput]]:
    """The inputs nested in `inp` (a team's lead and teammates), each with its field's path
    (`teammates[0]`)."""
    found = []
    for field in fields_of(type(inp)):
        value = getattr(inp, field)
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, ClientInput):
                found.append((f"{field}[{i}]" if isinstance(value, list) else field, item))
    return found


def fields_of(model: type[ClientInput]) -> list[str]:
    return [name for name in model.model_fields if name not in BOOKKEEPING]


def named_unknown(unknown: list[str], known: list[str]) -> str:
    """`unknown field x (did you mean y?), z`."""
    named = ", ".join(with_guess(name, known) for name in unknown)
    return f"unknown field{'s' if len(unknown) > 1 else ''} {named}"


def with_guess(name: str, known: list[str]) -> str:
    if any(c in name for c in ".[("):
        return name  # a nested field's path, guessed from its own model already
    close = difflib.get_close_matches(name, known, n=1)
    return f"{name} (did you mean {close[0]}?)" if close else name


def given_input(workflow_type: str, inp: M | None, model: type[M]) -> M:
    """`inp`, or a refusal of a run started without an input (`temporal workflow start
    --type AgentWorkflow` with no `--input`). Its run and init take their input as optional
    for this: called without its argument, an init's or a run's TypeError failed the
    workflow task on every attempt, and the workflow hung as Running (a user test,
    2026-12-05). No patch: such a run never completed a workflow task, so it has no history
    to replay.

    Raises:
        InvalidAgentInput: not retryable, so the workflow fails with the sentence.
    """
    if inp is None:
        required = [n for n, f in model.model_fields.items() if f.is_required()]
        raise InvalidAgentInput(
            f"{workflow_type} refused: it was started without an input; it needs a JSON "
            f"object with {', '.join(required)}"
        )
    return inp


def refuse_unknown_fields(workflow_type: str, inp: ClientInput) -> None:
    """Fail a run a client started with an input that has unknown fields.

    Raises:
        InvalidAgentInput: not retryable, so the workflow fails with the sentence.
    """
    text = refusal(f"{workflow_type} input", inp)
    if text is None:
        return
    if _lenient_only(inp):
        refused = versions.patched(INPUT_LENIENT_UNKNOWN)
    else:
        refused = versions.patched(INPUT_UNKNOWN_FIELDS)
    if refused:
        unknown = [f"{path}{name.split(' (')[0]}" for path, name, _ in unknown_paths(inp)]
        raise InvalidAgentInput(text, unknown_fields=unknown)


def _lenient_only(inp: ClientInput) -> bool:
    """Whether every unknown field of `inp` (and of the inputs nested in it) is inside a
    lenient model: what the code before `INPUT_LENIENT_UNKNOWN` let through."""
    if inp.unknown_input_fields or inp.unknown_nested_fields:
        return False
    return all(_lenient_only(item) for _, item in nested_inputs(inp))


def value_problem(inp: AgentInput) -> str | None:
    """What is wrong with the values of an agent's start a client sent, if anything."""
    mode = inp.permission_mode
    if mode is not None and mode not in MODES:
        same = [m for m in MODES if m.lower() == mode.lower()]
        guess = same or difflib.get_close_matches(mode, MODES, n=1)
        meant = f" (did you mean {guess[0]}?)" if guess else ""
        return f"permission_mode {mode!r} is no mode{meant}: one of {', '.join(MODES)}"
    if not inp.prompt.strip() and inp.fork is None and inp.resume_from is None:
        return "prompt is empty: say what the agent should do"
    if not inp.workspace.host_queue.strip():
        return (
            "workspace.host_queue is empty: name the task queue of the worker on the machine "
            "that holds the checkout (`outlast-host-<host id>`)"
        )
    return None


def refuse_bad_values(workflow_type: str, inp: AgentInput) -> None:
    """Fail a run a client started with a value no run can go on with (`value_problem`).

    Raises:
        InvalidAgentInput: not retryable, so the workflow fails with the sentence.
    """
    problem = value_problem(inp)
    # Asked only for such an input: every other run's history stays as it was.
    if problem is not None and versions.patched(INPUT_VALUES):
        raise InvalidAgentInput(f"{workflow_type} input refused: {problem}")


def wait_for_a_newer_worker(inp: ClientInput) -> None:
    """An input Outlast's own workflows built (a child, a stage, a teammate) with fields this
    worker's strict models do not have comes from newer code (a rolling deploy): fail the
    workflow task, which Temporal retries until a worker that knows them takes it, as the
    converter does with any such payload. Never for a client's start: that is refused.

    Raises:
        RuntimeError: not a workflow failure; the task is retried.
    """
    if strict := _strict_unknowns(inp):
        raise RuntimeError(
            f"input fields this worker does not know: {', '.join(strict)}"
            " (a newer release's; a worker that knows them will take this task)"
        )


def _strict_unknowns(inp: ClientInput, prefix: str = "") -> list[str]:
    """The unknown fields inside `inp`'s strict models, and those of the inputs nested in
    it (a team's members), by path."""
    found = [f"{prefix}{name}" for name in inp.unknown_nested_fields]
    for where, item in nested_inputs(inp):
        found += _strict_unknowns(item, f"{prefix}{where}.")
    return found


def require_update_input(update: str, given: object, model: type[BaseModel]) -> None:
    """For an update's validator: refuse an update sent with no input (`temporal workflow
    update execute` without `--input`). Let through, its handler would be called without its
    argument, and that TypeError fails the workflow task, not the update: the workflow stops
    until the update is gone (a user test, 2026-12-05).

    Raises:
        ValueError: the sentence, as the update's failure.
    """
    if given is None:
        required = [n for n, f in model.model_fields.items() if f.is_required()]
        what = f"with {', '.join(required)}" if required else "(its fields are all optional)"
        raise ValueError(f"update `{update}` refused: it needs an input, a JSON object {what}")


def check_update_fields(update: str, inp: ClientInput) -> None:
    """For an update's validator: refuse an input with unknown fields. A validator runs only
    when the update comes, never on replay, and a refused update leaves no history: no patch.

    Raises:
        ValueError: the sentence, as the update's failure.
    """
    if (text := refusal(f"update `{update}`", inp)) is not None:
        raise ValueError(text)
