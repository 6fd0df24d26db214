"""Settings: presets from the paper, environment handling, invalid values named."""

import pytest

from playground import errors
from playground.settings import PRESETS, load_settings


def test_presets_match_the_user_study_and_simulation():
    got = {
        k: (v.system1_prob, v.im_threshold, v.proactive_tone, v.interrupt_threshold)
        for k, v in PRESETS.items()
    }
    assert got == {
        "simulation": (0.1, 3.95, False, 4.8),
        "non-stop-chatter": (0.7, 4.49, False, 4.8),
        "active-contributor": (0.2, 3.59, True, 4.8),
        "selective-participant": (0.0, 4.09, False, 5.0),
    }
    assert (PRESETS["simulation"].system1_count, PRESETS["simulation"].system2_count) == (1, 2)


def test_engine_is_offline_without_key_or_url_and_openai_with_either():
    assert load_settings({}).engine.engine == "offline"
    assert load_settings({"OPENAI_API_KEY": "k"}).engine.engine == "openai"
    s = load_settings({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"})
    assert s.engine.engine == "openai"
    assert s.llm.base_url == "http://127.0.0.1:11434/v1"
    assert load_settings({"OPENAI_API_KEY": "k"}, {"engine": "offline"}).engine.engine == "offline"


def test_snapshot_never_contains_the_key():
    s = load_settings({"OPENAI_API_KEY": "sk-secret"})
    assert s.llm.api_key is not None
    assert s.llm.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in str(s.snapshot())
    assert "sk-secret" not in repr(s)


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"max_turns": 0}, "max_turns"),
        ({"timeout": -1}, "timeout"),
        ({"evaluation_mode": "sometimes"}, "evaluation_mode"),
        ({"preset": "shouty"}, "preset: unknown preset 'shouty'"),
        ({"pause_seconds": 0}, "pause_seconds"),
    ],
)
def test_invalid_settings_name_the_setting(overrides, fragment):
    with pytest.raises(errors.SettingsError, match=fragment):
        load_settings({}, overrides)


def test_unset_timeout_waits_longer_for_a_server_on_this_machine():
    from playground.settings import LLMSettings

    assert LLMSettings().call_timeout() == 60.0  # api.openai.com
    assert LLMSettings(base_url="https://api.example.com/v1").call_timeout() == 60.0
    assert LLMSettings(base_url="http://127.0.0.1:8080/v1").call_timeout() == 300.0
    assert LLMSettings(base_url="http://192.168.1.20:11434/v1").call_timeout() == 300.0
    assert LLMSettings(base_url="http://127.0.0.1:8080/v1", timeout=20).call_timeout() == 20.0
