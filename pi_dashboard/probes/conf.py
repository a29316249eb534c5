"""Probe settings with their defaults (the settings module may override each)."""

from django.conf import settings


def allow_private() -> bool:
    return bool(getattr(settings, "PI_PROBES_ALLOW_PRIVATE", False))


def max_concurrency() -> int:
    """Probes in flight at once across all workers (the fan-out cap)."""
    return int(getattr(settings, "PI_PROBES_MAX_CONCURRENCY", 50))


def lease_grace_seconds() -> float:
    """Lease beyond one completion's timeout before another worker may take over."""
    return float(getattr(settings, "PI_PROBES_LEASE_GRACE_SECONDS", 30))


def max_attempts() -> int:
    """Claims of one run before it is given up (a probe that keeps killing workers)."""
    return int(getattr(settings, "PI_PROBES_MAX_ATTEMPTS", 4))


def stale_pending_seconds() -> float:
    """A run still pending this long lost its task message; the sweep re-sends it."""
    return float(getattr(settings, "PI_PROBES_STALE_PENDING_SECONDS", 300))


def key_env_allowed() -> list[str]:
    """Names and `PREFIX_*` patterns an endpoint's `api_key_env` may use."""
    return list(getattr(settings, "PI_PROBE_KEY_ENV_ALLOWED", ["PI_PROBE_KEY_*"]))


def key_env_is_allowed(name: str) -> bool:
    for pattern in key_env_allowed():
        if pattern.endswith("*"):
            if name.startswith(pattern[:-1]) and len(name) > len(pattern) - 1:
                return True
        elif name == pattern:
            return True
    return False
