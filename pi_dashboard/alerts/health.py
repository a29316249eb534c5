"""Liveness of the dashboard itself: keys in Redis that /readyz reads.

A worker writes its heartbeat on start and every task; beat's evaluation task
writes the tick. Both are plain cache keys with a timestamp.
"""

import time

from django.core.cache import cache

WORKER_KEY = "health:worker-seen"
BEAT_KEY = "health:beat-tick"


def worker_seen() -> None:
    cache.set(WORKER_KEY, time.time(), timeout=None)


def beat_tick() -> None:
    cache.set(BEAT_KEY, time.time(), timeout=None)


def age_of(key: str) -> float | None:
    """Seconds since the key was written, None when never."""
    value = cache.get(key)
    return None if value is None else max(0.0, time.time() - float(value))
