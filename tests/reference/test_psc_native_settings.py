"""Spec §5, §6, §12, §18: native token settings, their validation and their display."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from math import floor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.api.events import CompactionSettings
from pi_continuity_harness.reference.psc.native_settings import (
    PI_DEFAULT_COMPACTION,
    NativeCompactionSettings,
    NativeSettingsError,
    PercentInputError,
    derive_native_tokens,
    effective_percents,
    format_approximately,
    format_percent,
    js_round,
    percent_for_frontmatter,
    read_native_settings,
    validate_native_settings,
)

SPEC = NativeCompactionSettings(True, 93000, 55800)


# ------------------------------------------------------------------ reading Pi's settings


def test_absent_compaction_settings_fall_back_to_pi_defaults() -> None:
    assert read_native_settings({}) == NativeCompactionSettings(True, 16384, 20000)
    assert read_native_settings({"compaction": {}}) == PI_DEFAULT_COMPACTION


def test_partial_compaction_settings_keep_pi_defaults_for_the_rest() -> None:
    assert read_native_settings({"compaction": {"reserveTokens": 93000}}) == NativeCompactionSettings(
        True, 93000, 20000
    )


def test_explicit_project_settings_are_read() -> None:
    pi = {"compaction": {"enabled": True, "reserveTokens": 93000, "keepRecentTokens": 55800}}
    assert read_native_settings(pi) == SPEC


def test_model_overrides_win_for_the_active_model_only() -> None:
    pi = {
        "compaction": {
            "enabled": True,
            "reserveTokens": 93000,
            "keepRecentTokens": 55800,
            "modelOverrides": {"fake/fake-model": {"reserveTokens": 10000}},
        }
    }
    assert read_native_settings(pi, "fake/fake-model") == NativeCompactionSettings(True, 10000, 55800)
    assert read_native_settings(pi, "fake/other") == SPEC
    assert read_native_settings(pi) == SPEC


def test_disabled_flag_is_read_globally() -> None:
    assert read_native_settings({"compaction": {"enabled": False}}).enabled is False


@pytest.mark.parametrize("value", [-5, "93000", 1.5, True, None, 2**53])
def test_token_values_pi_would_refuse_raise_a_native_settings_error(value: object) -> None:
    with pytest.raises(NativeSettingsError, match="Expected a non-negative safe integer"):
        read_native_settings({"compaction": {"reserveTokens": value}})


def test_an_invalid_model_override_token_raises_naming_the_override() -> None:
    pi = {"compaction": {"modelOverrides": {"fake/m": {"keepRecentTokens": -1}}}}
    with pytest.raises(NativeSettingsError) as caught:
        read_native_settings(pi, "fake/m")
    assert caught.value.problems == [
        'Invalid compaction.modelOverrides["fake/m"].keepRecentTokens setting: -1. '
        "Expected a non-negative safe integer."
    ]
    assert read_native_settings(pi, "fake/other") == PI_DEFAULT_COMPACTION


def test_an_invalid_ordinary_token_raises_even_when_a_model_override_replaces_it() -> None:
    # Pi validates compaction.reserveTokens before it looks at the override, and throws.
    pi = {"compaction": {"reserveTokens": "93000", "modelOverrides": {"fake/m": {"reserveTokens": 10000}}}}
    with pytest.raises(NativeSettingsError, match=r"Invalid compaction\.reserveTokens setting: '93000'"):
        read_native_settings(pi, "fake/m")


@pytest.mark.parametrize("entry", [5, "fast", None, [1]])
def test_a_model_override_entry_that_is_not_an_object_raises(entry: object) -> None:
    pi = {"compaction": {"modelOverrides": {"fake/m": entry}}}
    with pytest.raises(
        NativeSettingsError, match=r'compaction\.modelOverrides\["fake/m"\] setting: .*Expected an object'
    ):
        read_native_settings(pi, "fake/m")
    assert read_native_settings(pi, "fake/other") == PI_DEFAULT_COMPACTION


def test_integral_json_float_tokens_are_accepted_like_javascript_numbers() -> None:
    assert read_native_settings({"compaction": {"reserveTokens": 93000.0}}).reserve_tokens == 93000


def test_non_boolean_enabled_is_refused() -> None:
    with pytest.raises(NativeSettingsError, match=r"compaction\.enabled"):
        read_native_settings({"compaction": {"enabled": "yes"}})


def test_non_object_compaction_setting_is_refused() -> None:
    with pytest.raises(NativeSettingsError):
        read_native_settings({"compaction": 5})


def test_preparation_settings_are_taken_verbatim() -> None:
    prepared = CompactionSettings(enabled=True, reserve_tokens=4000, keep_recent_tokens=100)
    settings = NativeCompactionSettings.from_preparation(prepared)
    assert settings == NativeCompactionSettings(True, 4000, 100)
    assert settings.to_json() == prepared.to_json()


# ------------------------------------------------------------------ validation


def test_spec_example_settings_are_valid_for_a_372000_window() -> None:
    assert validate_native_settings(SPEC, 372000) == []


def test_reserve_tokens_must_be_positive() -> None:
    problems = validate_native_settings(NativeCompactionSettings(True, 0, 100), 20000)
    assert problems == ["reserveTokens (0) must be positive"]


def test_reserve_tokens_must_be_lower_than_the_context_window() -> None:
    problems = validate_native_settings(NativeCompactionSettings(True, 20000, 100), 20000)
    assert problems == ["reserveTokens (20000) must be lower than the context window (20000)"]
    assert validate_native_settings(NativeCompactionSettings(True, 19999, 0 + 1), 20000) == [
        "keepRecentTokens (1) must be lower than contextWindow - reserveTokens (20000 - 19999 = 1)"
    ]


def test_keep_recent_tokens_must_be_positive() -> None:
    assert validate_native_settings(NativeCompactionSettings(True, 4000, 0), 20000) == [
        "keepRecentTokens (0) must be positive"
    ]


def test_keep_recent_tokens_must_be_lower_than_window_minus_reserve() -> None:
    assert validate_native_settings(NativeCompactionSettings(True, 4000, 16000), 20000) == [
        "keepRecentTokens (16000) must be lower than contextWindow - reserveTokens (20000 - 4000 = 16000)"
    ]
    assert validate_native_settings(NativeCompactionSettings(True, 4000, 15999), 20000) == []


def test_disabled_native_auto_compaction_is_a_refused_state() -> None:
    problems = validate_native_settings(NativeCompactionSettings(False, 93000, 55800), 372000)
    assert problems == ["native auto-compaction is disabled (compaction.enabled is false)"]


def test_a_model_without_a_context_window_is_refused() -> None:
    assert validate_native_settings(SPEC, 0) == [
        "the active model has no usable context window (contextWindow 0)"
    ]


def test_switching_to_a_smaller_model_can_invalidate_fixed_tokens() -> None:
    # 93,000 reserve is fine at 372k but not at 128k: keep must stay below 35,000.
    assert validate_native_settings(SPEC, 372000) == []
    assert validate_native_settings(SPEC, 128000) == [
        "keepRecentTokens (55800) must be lower than contextWindow - reserveTokens (128000 - 93000 = 35000)"
    ]
    assert validate_native_settings(SPEC, 80000) == [
        "reserveTokens (93000) must be lower than the context window (80000)"
    ]


def test_switching_to_a_larger_model_keeps_tokens_valid_and_fixed() -> None:
    assert validate_native_settings(SPEC, 1_000_000) == []
    view = effective_percents(1_000_000, SPEC)
    assert view.trigger_tokens == 907000
    assert format_percent(view.trigger_percent) == "90.7%"


# ------------------------------------------------------------------ percent -> tokens


def test_spec_example_percentages_derive_the_spec_tokens() -> None:
    assert derive_native_tokens(372000, 75, 15) == (93000, 55800)


def test_percentages_may_be_entered_as_text_or_decimals() -> None:
    assert derive_native_tokens(372000, "75%", "15") == (93000, 55800)
    assert derive_native_tokens(200000, Decimal("80.5"), 0.1) == (39000, 200)


def test_derivation_rounds_halves_up_like_javascript_math_round() -> None:
    # 10 x 45% = 4.5 -> 5 (Python's round would give 4); 10 x 25% = 2.5 -> 3 (Python: 2).
    assert derive_native_tokens(10, 45, 25) == (5, 3)
    assert js_round(Decimal("2.5")) == 3
    assert js_round(Decimal("-2.5")) == -2
    assert js_round(Decimal("0.49999999999999999")) == 0


def test_derivation_uses_exact_decimal_arithmetic_not_binary_floats() -> None:
    # 1000 x 0.15% = 1.5 exactly; binary float 1000 * 0.15 / 100 would give 1.4999999999999998.
    assert derive_native_tokens(1000, 50, 0.15) == (500, 2)


@pytest.mark.parametrize(
    ("trigger", "keep", "message"),
    [
        (0, 10, "trigger percent must be greater than 0 and lower than 100"),
        (100, 10, "trigger percent must be greater than 0 and lower than 100"),
        (75, 0, "keep-recent percent must be greater than 0 and lower than 100"),
        (75, -1, "keep-recent percent must be greater than 0"),
        (50, 50, "keep-recent percent (50) must be lower than the trigger percent (50)"),
        (50, 60, "must be lower than the trigger percent"),
        ("abc", 10, "trigger percent must be a number"),
        ("NaN", 10, "trigger percent must be a finite number"),
    ],
)
def test_out_of_range_percentages_are_refused_with_a_clear_message(
    trigger: object, keep: object, message: str
) -> None:
    with pytest.raises(PercentInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        derive_native_tokens(372000, trigger, keep)  # type: ignore[arg-type]


def test_percentages_that_round_to_invalid_tokens_are_refused() -> None:
    with pytest.raises(PercentInputError, match="reserveTokens 0"):
        derive_native_tokens(10, "99.9", 10)


def test_derivation_needs_a_usable_context_window() -> None:
    with pytest.raises(PercentInputError, match="no usable context window"):
        derive_native_tokens(0, 75, 15)


def _reference_round(value: Fraction) -> int:
    return floor(value + Fraction(1, 2))


@given(
    window=st.integers(min_value=1000, max_value=4_000_000),
    trigger_tenths=st.integers(min_value=2, max_value=999),
    data=st.data(),
)
def test_percent_to_token_conversion_matches_the_spec_formulas(
    window: int, trigger_tenths: int, data: st.DataObject
) -> None:
    keep_tenths = data.draw(st.integers(min_value=1, max_value=trigger_tenths - 1))
    trigger = Decimal(trigger_tenths) / 10
    keep = Decimal(keep_tenths) / 10
    reserve, keep_tokens = derive_native_tokens(window, trigger, keep)
    assert reserve == window - _reference_round(Fraction(window) * Fraction(trigger_tenths, 1000))
    assert keep_tokens == _reference_round(Fraction(window) * Fraction(keep_tenths, 1000))
    settings = NativeCompactionSettings(True, reserve, keep_tokens)
    assert validate_native_settings(settings, window) == []
    # The inverse display: the shown percentage is the entered one within rounding.
    view = effective_percents(window, settings)
    tolerance = Decimal(50) / window + Decimal("0.05")
    shown_trigger = Decimal(format_percent(view.trigger_percent)[:-1])
    shown_keep = Decimal(format_percent(view.keep_percent)[:-1])
    assert abs(shown_trigger - trigger) <= tolerance
    assert abs(shown_keep - keep) <= tolerance


# ------------------------------------------------------------------ display


def test_effective_percentages_of_the_spec_example() -> None:
    view = effective_percents(372000, SPEC)
    assert view.trigger_tokens == 279000
    assert format_approximately(view.trigger_percent) == "approximately 75.0%"
    assert format_approximately(view.keep_percent) == "approximately 15.0%"


def test_model_change_changes_displayed_percentages_but_not_tokens() -> None:
    small, large = effective_percents(200000, SPEC), effective_percents(400000, SPEC)
    assert format_percent(small.trigger_percent) == "53.5%"
    assert format_percent(large.trigger_percent) == "76.8%"
    assert NativeCompactionSettings(True, 93000, 55800) == SPEC


def test_percent_display_rounds_half_up_to_one_decimal() -> None:
    assert format_percent(Decimal("74.95")) == "75.0%"
    assert format_percent(Decimal("74.949")) == "74.9%"
    assert format_percent(Decimal(-10)) == "-10.0%"


def test_frontmatter_percent_is_one_decimal() -> None:
    assert percent_for_frontmatter(Decimal(279000) * 100 / 372001) == 75.0
    assert percent_for_frontmatter(Decimal("74.96")) == 75.0
    assert percent_for_frontmatter(Decimal("33.333")) == 33.3


def test_effective_percents_needs_a_window() -> None:
    with pytest.raises(ValueError, match="no usable context window"):
        effective_percents(0, SPEC)


def test_live_settings_read_per_model_again_and_again() -> None:
    """``LiveSettings.native_for`` keeps what it read per model id: every call, in any order,
    gives what reading the snapshot's text gives for that model, and an error every time."""
    from pi_continuity_harness.api.extension_api import Model  # noqa: PLC0415
    from pi_continuity_harness.reference.psc.state import LiveSettings  # noqa: PLC0415

    settings = {
        "compaction": {
            "reserveTokens": 9000,
            "keepRecentTokens": 8000,
            "modelOverrides": {"p/a": {"reserveTokens": 1000}, "p/c": "not an object"},
        }
    }
    live = LiveSettings.capture(settings)
    a, b, c = (Model(provider="p", id=name, context_window=100_000, max_tokens=1) for name in "abc")
    for model in (a, b, None, a, None, b, a):
        expected = read_native_settings(settings, model.full_id if model is not None else None)
        assert live.native_for(model) == expected
    assert live.native_for(a) == NativeCompactionSettings(True, 1000, 8000)
    assert live.native_for(b) == live.native_for(None) == NativeCompactionSettings(True, 9000, 8000)
    for _ in range(2):
        with pytest.raises(NativeSettingsError, match=r'modelOverrides\["p/c"\]'):
            live.native_for(c)
    assert live == LiveSettings.capture(settings) and repr(live) == repr(LiveSettings.capture(settings))
    unreadable = LiveSettings.capture({"compaction": [1]})
    for _ in range(2):
        with pytest.raises(NativeSettingsError, match="Expected an object"):
            unreadable.native_for(a)
