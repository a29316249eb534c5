"""How many ingest requests this server process runs at once (429 past the limit).

The limit is per process, so N gunicorn workers admit at most N × the setting; it
keeps a burst of agents from queueing every worker behind database writes.
"""

import contextlib
import threading
from collections.abc import Iterator

from django.conf import settings

from pi_dashboard.lib.errors import DomainError

RETRY_AFTER_SECONDS = 5

_lock = threading.Lock()
_active = 0


class Overloaded(DomainError):
    status = 429
    code = "overloaded"


@contextlib.contextmanager
def ingest_slot() -> Iterator[None]:
    """Hold one of the process's ingest slots, or raise Overloaded."""
    global _active
    with _lock:
        if _active >= settings.PI_INGEST_MAX_CONCURRENT:
            raise Overloaded(
                "Too many ingest requests at once; retry after the Retry-After delay."
            )
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
