from agents.config import Features, OutlastConfig
from workflows.agent_types import off_where, refusal, unknown_types

KNOWN = ["general-purpose", "Explore", "Plan", "verification"]


def test_only_the_types_no_definition_has_are_unknown_in_their_order():
    named = [("stage a", "Explore"), ("stage b", "Reveiw"), ("stage c", "Plan"), ("stage d", "x")]
    assert unknown_types(named, KNOWN) == [("stage b", "Reveiw"), ("stage d", "x")]
    assert unknown_types([("verifier_type", "verification")], KNOWN) == []


def test_a_built_in_behind_a_flag_that_is_off_is_not_there_for_a_child_that_gets_it_off():
    """A verified task's implementer gets the verification agent only with its flag: the
    check passed `implementer_type: verification` with it off, and the implementer failed
    at its start (a user test, 2026-12-05). The check asks with the flag on (so the names
    recorded are what a worker of the release before replays) and takes it off there."""
    roles = [("implementer_type", "verification"), ("verifier_type", "verification")]
    off = {"implementer_type": ["verification"]}
    assert unknown_types(roles, KNOWN) == []
    assert unknown_types(roles, KNOWN, off) == [("implementer_type", "verification")]
    text = refusal("X", [("implementer_type", "verification")], KNOWN, [], off, "the implementer")
    assert text == (
        "X refused: agent type 'verification' (implementer_type; 'verification' is there only "
        "with features.verification_agent) not found. Available agents: general-purpose, "
        "Explore, Plan. A type the implementer defines while it runs goes in the input's "
        "`late_agent_types`"
    ), text
    # A near miss is not pointed at it either, but at the flag.
    text = refusal("X", [("implementer_type", "Verification")], KNOWN, [], off)
    assert "('implementer_type; 'verification' is there only with" not in text
    assert "(implementer_type; 'verification' is there only with features." in text, text


def test_the_refusal_names_where_each_unknown_type_is_and_the_types_there_are():
    text = refusal("PipelineWorkflow", [("stage b", "Reveiw")], KNOWN, [])
    assert text == (
        "PipelineWorkflow refused: agent type 'Reveiw' (stage b) not found. "
        "Available agents: general-purpose, Explore, Plan, verification. A type a stage "
        "defines while it runs goes in the input's `late_agent_types`"
    )
    two = refusal("X", [("a", "p"), ("b", "q")], KNOWN, ["bad.md: no name"])
    assert two.startswith("X refused: agent type 'p' (a) not found; nor 'q' (b). Available")
    assert ". Agent definitions that could not be loaded: bad.md: no name. A type" in two


def test_the_refusal_guesses_the_type_meant_and_keeps_a_file_error_to_one_line():
    text = refusal("X", [("stage a", "explore"), ("stage b", "Pln"), ("stage c", "zzz")], KNOWN, [])
    assert text.startswith(
        "X refused: agent type 'explore' (stage a; did you mean 'Explore'?) not found; nor "
        "'Pln' (stage b; did you mean 'Plan'?); nor 'zzz' (stage c). Available agents: "
    ), text
    yaml = "a.md: bad frontmatter: while parsing\n  in line 2\n    ^\n"
    text = refusal("X", [("a", "q")], KNOWN, [yaml])
    assert "could not be loaded: a.md: bad frontmatter: while parsing. A type" in text


def test_the_verification_agent_is_off_only_where_the_flag_is_and_no_file_defines_it():
    implementer = frozenset({"implementer_type"})
    off, on = OutlastConfig(), OutlastConfig(features=Features(verification_agent=True))
    assert off_where(off, ["Explore", "verification"], implementer) == {
        "implementer_type": ["verification"]
    }
    assert off_where(on, ["Explore", "verification"], implementer) == {}
    # A project's `verification.md` overrides the built-in: there without the flag.
    assert off_where(off, ["Explore"], implementer) == {}
