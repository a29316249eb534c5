"""jsonlimits through jsonsafe.loads: depth and number limits, counted the way
JSON nests (brackets inside strings do not count), each with its own code."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from pi_dashboard.lib import isotime, jsonlimits, jsonsafe


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_depth_up_to_the_limit_parses_and_past_it_is_too_deep() -> None:
    value, _ = jsonsafe.loads(nested(jsonlimits.MAX_DEPTH))
    assert isinstance(value, list)
    for depth in (jsonlimits.MAX_DEPTH + 1, 5_000, 100_000):
        with pytest.raises(jsonlimits.TooDeep) as caught:
            jsonsafe.loads(nested(depth))
        assert caught.value.code == "too_deep"


def test_brackets_inside_strings_do_not_nest() -> None:
    text = b'{"a": "' + b"[{" * 1000 + b'\\"]", "b": [1]}'
    value, _ = jsonsafe.loads(text)
    assert value["b"] == [1]


def test_deep_text_with_a_lone_surrogate_is_still_too_deep() -> None:
    # orjson refuses the surrogate; the standard library must not be reached.
    with pytest.raises(jsonlimits.TooDeep):
        jsonsafe.loads(b'["\\ud83d",' + nested(3_000) + b"]")


@pytest.mark.parametrize(
    "text",
    [
        b'{"n":' + b"9" * 5_000 + b"}",
        b'{"n":' + b"9" * 400 + b"}",
        b'{"n":1e400}',
        b'{"n":-1e400}',
        # orjson refuses the lone surrogate, so the standard library reads these:
        b'{"s":"\\ud83d","n":' + b"9" * 101 + b"}",
    ],
)
def test_huge_numbers_are_number_too_large(text: bytes) -> None:
    with pytest.raises(jsonlimits.NumberTooLarge) as caught:
        jsonsafe.loads(text)
    assert caught.value.code == "number_too_large"


def test_numbers_pi_can_write_parse() -> None:
    value, _ = jsonsafe.loads(b'{"n":1.7976931348623157e+308,"i":' + b"9" * 30 + b"}")
    assert value["n"] == 1.7976931348623157e308
    assert value["i"] == 1e30  # orjson reads integers past 64 bits as doubles, as JS
    value, safe = jsonsafe.loads(b'{"s":"\\ud83d","i":' + b"9" * 30 + b"}")
    assert (value["i"], safe) == (int("9" * 30), False)


def test_loads_strict_refuses_nul_and_lone_surrogates() -> None:
    for text in (b'{"a":"x\\u0000"}', b'{"a":"\\ud83d"}'):
        with pytest.raises(jsonsafe.UnsafeText):
            jsonsafe.loads_strict(text)
    assert jsonsafe.loads_strict(b'{"a":"ok"}') == {"a": "ok"}


def test_utc_checked_refuses_offsets_past_18_hours() -> None:
    at = datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=18)))
    assert isotime.utc_checked(at) == datetime(2025, 12, 31, 6, tzinfo=UTC)
    with pytest.raises(ValueError, match="18:00"):
        isotime.utc_checked(at.replace(tzinfo=timezone(timedelta(hours=19))))
    with pytest.raises(ValueError, match="out of range"):
        isotime.utc_checked(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))))
    assert isotime.parse_iso("0001-01-01T00:00:00+01:00") is None
