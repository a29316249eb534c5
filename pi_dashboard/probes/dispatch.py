"""Hand probe work to the Celery worker, by task name.

By name, not by importing `probes/tasks.py`: the tasks call the services, so the
services sending tasks through that module would close an import circle.
"""

from typing import Any

from pi_dashboard.celery import send_by_name
from pi_dashboard.probes import conf, semaphore
from pi_dashboard.probes.models import Endpoint

PROBE_RUN_TASK = "pi_dashboard.probes.tasks.probe_run"


def run_budget_seconds(endpoint: Endpoint) -> float:
    """Longest a probe of `endpoint` can take: 10 completions per trial round."""
    return 10 * endpoint.trials * endpoint.timeout_seconds + conf.lease_grace_seconds()


def server_limit(endpoint: Endpoint) -> tuple[str, int] | None:
    """(semaphore key, cap) of the endpoint's server, when it sets a limit.

    Sent with the task, so a busy server defers the task before it claims the run
    (a claim counts an attempt) and without reading the endpoint first.
    """
    cap = endpoint.max_concurrent_probes
    return (semaphore.server_key(endpoint.base_url), cap) if cap else None


def run_send(
    run_id: int,
    budget: float,
    countdown: float = 0,
    producer: Any = None,
    *,
    server: tuple[str, int] | None = None,
) -> None:
    """Send the probe task; its time limits (and semaphore lease) are the budget."""
    # countdown 0 sends no ETA: the message is not held back by the worker.
    send_by_name(
        PROBE_RUN_TASK,
        (run_id, list(server) if server else None),
        countdown=countdown,
        soft_time_limit=int(budget),
        time_limit=int(budget) + 15,
        producer=producer,
    )
