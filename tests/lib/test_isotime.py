"""Timestamps as pi writes them, and the hour buckets rollups count them in."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from pi_dashboard.lib.isotime import hour_floor, iso, parse_iso


@pytest.mark.parametrize(
    ("text", "bucket"),
    [
        ("2026-07-14T16:40:51.902Z", "2026-07-14T16:00:00.000Z"),
        ("2026-07-14T16:00:00.000Z", "2026-07-14T16:00:00.000Z"),
        ("2026-07-14T16:59:59.999Z", "2026-07-14T16:00:00.000Z"),
        ("2026-07-14T16:40:51+05:30", "2026-07-14T11:00:00.000Z"),  # a UTC hour
        ("1969-12-31T23:59:59.500Z", "1969-12-31T23:00:00.000Z"),  # before the epoch
    ],
)
def test_hour_floor_is_the_start_of_the_utc_hour(text: str, bucket: str) -> None:
    moment = parse_iso(text)
    assert moment is not None
    floored = hour_floor(moment)
    assert iso(floored) == bucket
    assert floored.tzinfo is not None
    assert floored.utcoffset() == timedelta(0)


def test_hour_floor_matches_replace_over_a_day_of_minutes() -> None:
    start = datetime(2026, 3, 29, tzinfo=UTC)
    for minutes in range(0, 24 * 60, 7):
        moment = start + timedelta(minutes=minutes, seconds=13, microseconds=5)
        assert hour_floor(moment) == moment.replace(minute=0, second=0, microsecond=0)
    east = datetime(2026, 3, 29, 10, 45, tzinfo=timezone(timedelta(hours=2)))
    assert hour_floor(east) == datetime(2026, 3, 29, 8, tzinfo=UTC)


@pytest.mark.parametrize("value", [None, "", "yesterday", 5, "2026-13-01T00:00:00Z"])
def test_parse_iso_refuses_what_is_not_a_timestamp(value: object) -> None:
    assert parse_iso(value) is None


def test_parse_iso_reads_naive_times_as_utc() -> None:
    assert parse_iso("2026-07-14T16:40:51") == datetime(
        2026, 7, 14, 16, 40, 51, tzinfo=UTC
    )
