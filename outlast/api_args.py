"""`start_task`'s arguments checked for their types before anything is built or sent."""

from __future__ import annotations

from agents.config import OutlastConfig


def check_argument_types(task: object, workflow_id: object, options: dict) -> None:
    """`start_task`'s arguments of a wrong type, refused by name: they failed deep inside as
    an AttributeError (`'NoneType' object has no attribute 'strip'`), or were taken as
    something else (`b"hi"` as the task "hi"; a user test, 2026-12-07).

    A flag given as None is dropped from `options` (it meant False, the default).

    Raises:
        TypeError: the first argument of a wrong type."""
    if not isinstance(task, str):
        raise TypeError(f"start_task() task: a string, not {type(task).__name__}")
    if workflow_id is not None and (not isinstance(workflow_id, str) or not workflow_id.strip()):
        raise TypeError(
            f"start_task() workflow_id: a non-empty string or None, not {workflow_id!r}"
        )
    for name in ("teammates", "team_tasks", "forks"):
        given = options.get(name)
        if given is not None and (
            not isinstance(given, list | tuple) or not all(isinstance(g, str) for g in given)
        ):
            raise TypeError(f"start_task() {name}: a list of strings, not {given!r}")
    for name in ("max_turns", "max_rounds"):
        given = options.get(name)
        # "3" was taken as 3 and True as 1 (a user test, 2026-12-07): a count is an int.
        if given is not None and (not isinstance(given, int) or isinstance(given, bool)):
            raise TypeError(f"start_task() {name}: a whole number or None, not {given!r}")
    for name in ("approve", "plan_first"):
        given = options.get(name)
        if given is not None and not isinstance(given, bool):
            raise TypeError(f"start_task() {name}: True, False or None, not {given!r}")
        if given is None:
            options.pop(name, None)  # None meant False, as the dataclass's default
    for name in ("agent_type", "model", "team_name"):
        given = options.get(name)
        if given is not None and not isinstance(given, str):
            raise TypeError(f"start_task() {name}: a string or None, not {given!r}")
    config = options.get("config")
    if config is not None and not isinstance(config, OutlastConfig | dict):
        raise TypeError(
            f"start_task() config: an OutlastConfig or a dict, not {type(config).__name__}"
        )
