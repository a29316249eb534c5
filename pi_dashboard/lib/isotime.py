"""Timestamps as pi writes them (JavaScript `Date.toISOString()`), read leniently."""

from datetime import UTC, datetime
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
    return moment.replace(minute=0, second=0, microsecond=0)


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
