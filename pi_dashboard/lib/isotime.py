"""Timestamps as pi writes them (JavaScript `Date.toISOString()`), read leniently."""

from datetime import UTC, datetime
from functools import lru_cache
from typing import overload


def parse_iso(value: object) -> datetime | None:
    """An aware UTC datetime, or None when `value` is not an ISO-8601 timestamp.

    pi writes `2026-07-14T16:40:51.902Z`; values passed through from elsewhere may lack
    milliseconds or the offset (read as UTC), so parsing is lenient (reference §0.4).
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


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
