"""Run a transaction again when PostgreSQL chose it as a deadlock or serialization
victim. One lock order everywhere makes deadlocks rare, not impossible (foreign-key
checks, index pages); the loser's work is whole and safe to redo."""

import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError, connection
from psycopg import errors

ATTEMPTS = 4
BACKOFF_SECONDS = 0.05  # doubled after each failure: 50, 100, 200 ms

RETRYABLE = (errors.DeadlockDetected, errors.SerializationFailure)
T = TypeVar("T")


def is_retryable(exc: BaseException) -> bool:
    """A deadlock or serialization failure, however Django wrapped it."""
    return isinstance(exc, RETRYABLE) or isinstance(exc.__cause__, RETRYABLE)


def retry_on_conflict(work: Callable[[], T]) -> T:
    """`work()` (which opens its own transaction), retried on deadlock.

    Inside an outer transaction nothing is retried: the whole outer transaction was
    rolled back, so only its owner can run it again.
    """
    delay = BACKOFF_SECONDS
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return work()
        except OperationalError as exc:
            if (
                not is_retryable(exc)
                or connection.in_atomic_block
                or attempt == ATTEMPTS
            ):
                raise
        time.sleep(delay)
        delay *= 2
    raise AssertionError("unreachable")  # pragma: no cover
