"""Timestamps as pi writes them (JavaScript `Date.toISOString()`).

The agent's own copy of `pi_dashboard.lib.isotime`: the agent imports nothing
outside its package (it is installed alone on pi hosts).
"""

from datetime import UTC, datetime


def iso(moment: datetime) -> str:
    """`Date.toISOString()` form: UTC, milliseconds, `Z`."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def utc_now_iso() -> str:
    return iso(datetime.now(UTC))


def iso_from_epoch(epoch: float) -> str:
    return iso(datetime.fromtimestamp(epoch, UTC))


def parse_iso(value: object) -> datetime | None:
    """An aware datetime, or None when `value` is not an ISO-8601 timestamp."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
