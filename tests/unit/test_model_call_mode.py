"""How a model call runs (`model.local_activity`, issue 9): the pure decision and its settings."""

import pytest
from pydantic import ValidationError

from activities.llm import ModelResponse
from agents.config import ConfigError, ModelSettings, OutlastConfig, from_env
from agents.messages import Message, TextBlock, Usage
from agents.transcript import TranscriptRef
from outlast.patterns import PatternArgs, build_pattern_input
from outlast.runner import StartError, build_input
from workflows.model_call import ModelCalls, after_call, wants_local

AUTO = ModelSettings(local_activity="auto")


def response(elapsed_ms: int | None) -> ModelResponse:
    return ModelResponse(
        message=Message(role="assistant", content=[TextBlock(text="ok")]),
        stop_reason="end_turn",
        usage=Usage(),
        transcript=TranscriptRef(),
        model="m",
        elapsed_ms=elapsed_ms,
    )


def test_a_regular_activity_is_the_default():
    assert ModelSettings().local_activity is False
    assert not wants_local(ModelSettings(), ModelCalls(last_ms=5))


def test_auto_keeps_a_first_call_regular():
    assert not wants_local(AUTO, ModelCalls())


def test_auto_makes_a_call_after_a_quick_one_local():
    assert wants_local(AUTO, ModelCalls(last_ms=0))
    assert wants_local(AUTO, ModelCalls(last_ms=999))


def test_auto_keeps_a_call_after_a_slow_one_regular():
    assert not wants_local(AUTO, ModelCalls(last_ms=1000))
    assert not wants_local(AUTO, ModelCalls(last_ms=45_000))


def test_auto_calls_regular_for_good_once_a_local_call_was_given_up():
    calls = after_call(ModelCalls(last_ms=10), response(6000), gave_up=True)
    assert calls == ModelCalls(last_ms=6000, local_gave_up=True)
    later = after_call(calls, response(20), gave_up=False)
    assert later.local_gave_up and not wants_local(AUTO, later)


def test_a_call_that_needed_retries_counts_as_unknown():
    calls = after_call(ModelCalls(last_ms=10), response(None), gave_up=False)
    assert not wants_local(AUTO, calls)


def test_the_threshold_is_configurable():
    quick = ModelSettings(local_activity="auto", auto_local_under_s=0.2)
    assert wants_local(quick, ModelCalls(last_ms=150))
    assert not wants_local(quick, ModelCalls(last_ms=250))


@pytest.mark.parametrize("last_ms", [None, 0, 50_000])
def test_a_forced_mode_ignores_the_previous_call(last_ms):
    gave_up = ModelCalls(last_ms=last_ms, local_gave_up=True)
    assert wants_local(ModelSettings(local_activity=True), gave_up)
    assert not wants_local(ModelSettings(local_activity=False), gave_up)


def test_config_files_spell_the_mode_as_they_did():
    parsed = OutlastConfig.model_validate({"model": {"local_activity": True}})
    assert parsed.model.local_activity is True
    parsed = OutlastConfig.model_validate({"model": {"local_activity": "auto"}})
    assert parsed.model.local_activity == "auto"


@pytest.mark.parametrize(
    "bad", [{"local_activity": "sometimes"}, {"auto_local_under_s": 0}, {"auto_local_under_s": 9}]
)
def test_a_bad_mode_or_threshold_is_refused(bad):
    with pytest.raises(ValidationError):
        ModelSettings.model_validate(bad)


@pytest.mark.parametrize(
    ("value", "mode"), [("regular", False), ("local", True), ("auto", "auto"), (" Auto ", "auto")]
)
def test_the_environment_picks_the_mode(value, mode):
    config = from_env({"OUTLAST_MODEL_CALL": value})
    assert config.model.local_activity == mode
    assert type(config.model.local_activity) is type(mode)


def test_without_the_variable_the_base_config_keeps_its_mode():
    base = OutlastConfig(model=ModelSettings(local_activity="auto"))
    assert from_env({}, base).model.local_activity == "auto"
    assert from_env({"OUTLAST_MODEL_CALL": ""}).model.local_activity is False
    assert from_env({"OUTLAST_MODEL_CALL": "  "}).model.local_activity is False


@pytest.mark.parametrize("bad", ["fast", "true", "1"])
def test_a_mode_the_environment_misspells_is_refused_by_name(bad):
    with pytest.raises(ConfigError) as e:
        from_env({"OUTLAST_MODEL_CALL": bad})
    assert str(e.value) == f"OUTLAST_MODEL_CALL={bad}: choose one of regular, local, auto."


def test_a_starter_reports_a_misspelt_mode_as_a_start_error(monkeypatch, tmp_path):
    """`start_task` and `build_input` promise StartError for what stops a start."""
    monkeypatch.setenv("OUTLAST_MODEL_CALL", "fast")
    args = PatternArgs(pattern="pipeline", task="fix it", repo=tmp_path, host_id="h")
    with pytest.raises(StartError, match="OUTLAST_MODEL_CALL=fast: choose one of"):
        build_pattern_input(args)
    with pytest.raises(StartError, match="OUTLAST_MODEL_CALL=fast: choose one of"):
        build_input("fix it", tmp_path, host_id="h")
