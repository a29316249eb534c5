"""Timestamps as pi writes them (JavaScript `Date.toISOString()`), read leniently."""

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import overload


def parse_iso(value: object) -> datetime | None:
    """An aware UTC datetime, or None when `value` is not an ISO-8601 timestamp.

    pi writes `2026-07-14T16:40:51.902Z`; values passed through from elsewhere may lack
    milliseconds or the offset (read as UTC), so parsing is lenient
    (docs/pi-host-data.md §0.4).
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    try:
        return utc_checked(parsed)
    except ValueError:
        return None


# ISO 8601 and PostgreSQL stop at ±18:00 (Python's own limit is ±24:00); PostgreSQL
# refuses anything past it with an error that would surface as a 500.
MAX_UTC_OFFSET = timedelta(hours=18)


def utc_checked(moment: datetime) -> datetime:
    """`moment` in UTC (naive read as UTC); ValueError when its offset is past ±18:00
    or it leaves the calendar once converted (0001-01-01T00:00+01:00)."""
    offset = moment.utcoffset()
    if offset is None:
        return moment.replace(tzinfo=UTC)
    if abs(offset) > MAX_UTC_OFFSET:
        raise ValueError("the time-zone offset is past ±18:00")
    try:
        return moment.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("the moment is out of range once converted to UTC") from exc


def hour_floor(moment: datetime) -> datetime:
    """The start of the moment's hour, in UTC (aware `moment` only).

    Computed from the epoch hour and remembered: ingest asks this of every line,
    and a thousand lines span a handful of hours (datetime.replace costs 3 times
    as much).
    """
    return _hour_start(int(moment.timestamp() // 3600))


@lru_cache(maxsize=4096)
def _hour_start(epoch_hour: int) -> datetime:
    return datetime.fromtimestamp(epoch_hour * 3600, UTC)


@overload
def iso(moment: datetime) -> str: ...
@overload
def iso(moment: None) -> None: ...
def iso(moment: datetime | None) -> str | None:
    """`Date.toISOString()` form: UTC, milliseconds, `Z`."""
    if moment is None:
        return None
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
