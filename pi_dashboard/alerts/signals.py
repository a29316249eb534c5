"""Celery signals: a worker heartbeat for /readyz and task outcomes for /metrics."""

import logging
import threading
import time
from typing import Any

from celery.signals import task_postrun, worker_ready

HEARTBEAT_SECONDS = 15


@worker_ready.connect
def _worker_ready(**kwargs: Any) -> None:
    """Beat the worker key from a daemon thread: an idle worker is still alive."""
    from pi_dashboard.alerts import health

    def beat() -> None:
        while True:
            try:
                health.worker_seen()
            except Exception:  # Redis away: /readyz will say so; keep trying
                logging.getLogger(__name__).warning("worker heartbeat not written")
            time.sleep(HEARTBEAT_SECONDS)

    threading.Thread(target=beat, name="pi-health-beat", daemon=True).start()


@task_postrun.connect
def _task_done(state: str | None = None, task: Any = None, **kwargs: Any) -> None:
    from pi_dashboard.alerts import health
    from pi_dashboard.lib import counters

    health.worker_seen()
    counters.task_outcome(getattr(task, "name", "?"), state or "UNKNOWN")
