"""pi's own rules for a model's adaptation profile (`adaptation-store.ts`, pi 0.96.0).

Every pi mutation of a model (`mutateProfile`) first drops, by the clock, each rule
that is expired (no fire for 30 days) or ineffective (its mode recurred at least
twice after the rule and no less than before it), then applies the change. The
agent's file edit must do the same, or its answers and the file differ from pi's.
"""

import math
from datetime import UTC, datetime
from typing import Any

RETIRE_AFTER_MS = 30 * 24 * 60 * 60 * 1000
MIN_RECURRENCE_AFTER_FOR_EFFICACY = 2


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_rule(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(k), str)
        for k in ("mode", "text", "addedAt", "lastFiredAt")
    )


def is_protocol(value: Any) -> bool:
    """A calibration pi keeps: calibrated (status absent in legacy records) or a
    legacy failed one; anything else pi drops on read."""
    if not isinstance(value, dict) or not _is_number(value.get("version")):
        return False
    if value.get("status") == "failed":
        tried = value.get("variantsTried")
        return (
            isinstance(value.get("attemptedAt"), str)
            and isinstance(tried, list)
            and all(isinstance(v, str) for v in tried)
        )
    return (
        value.get("status", "calibrated") == "calibrated"
        and isinstance(value.get("variant"), str)
        and isinstance(value.get("calibratedAt"), str)
    )


def is_teach_stats(value: Any) -> bool:
    return isinstance(value, dict) and all(
        _is_number(value.get(k))
        for k in ("taught", "recurrenceBefore", "recurrenceAfter")
    )


def teach_stats(profile: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The profile's teach statistics as pi reads them (invalid ones dropped)."""
    raw = profile.get("teachStats")
    if not isinstance(raw, dict):
        return {}
    return {mode: s for mode, s in raw.items() if is_teach_stats(s)}


def js_date_ms(value: str) -> float:
    """`Date.parse` for the ISO forms pi writes; NaN when it is not a date."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return math.nan
    if parsed.tzinfo is None:
        # JavaScript reads a bare date as UTC and a date-time as local time.
        parsed = parsed.replace(tzinfo=UTC) if "T" not in value else parsed.astimezone()
    return parsed.timestamp() * 1000


def rule_recency(rule: dict[str, Any]) -> float:
    last = js_date_ms(rule["lastFiredAt"])
    if math.isfinite(last):
        return last
    added = js_date_ms(rule["addedAt"])
    return added if math.isfinite(added) else 0.0


def is_rule_effective(stats: dict[str, Any] | None) -> bool:
    if not stats or stats["recurrenceAfter"] < MIN_RECURRENCE_AFTER_FOR_EFFICACY:
        return True  # not enough post-rule evidence yet
    return bool(stats["recurrenceAfter"] < stats["recurrenceBefore"])


def rule_retained(
    rule: dict[str, Any], stats: dict[str, dict[str, Any]], now: datetime
) -> bool:
    """pi's `pruneRetiredRules` test for one (valid) rule."""
    cutoff = now.timestamp() * 1000 - RETIRE_AFTER_MS
    return rule_recency(rule) >= cutoff and is_rule_effective(stats.get(rule["mode"]))
