"""Counters for /metrics, kept in Redis (one hash per metric, a field per label set).

Requests, ingest and Celery tasks run in many processes and /metrics is answered by
any one of them, so each process adds here and the scrape reads the sums. Ground
floor: ingest counts without depending on the alerts app that serves /metrics.
"""

import json
import logging
from functools import lru_cache

import redis
from django.conf import settings

log = logging.getLogger(__name__)

COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pi_dashboard_http_requests": (
        "HTTP requests answered, by method and status class.",
        ("method", "status"),
    ),
    "pi_dashboard_ingest_lines": (
        "Lines received by ingest, by kind and result.",
        ("kind", "result"),
    ),
    "pi_dashboard_celery_tasks": (
        "Celery tasks finished, by task and outcome.",
        ("task", "outcome"),
    ),
}


@lru_cache(maxsize=1)
def redis_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)


def count(name: str, labels: dict[str, str], n: int = 1) -> None:
    """Add n to a counter; never fails the caller (metrics are best effort)."""
    if n <= 0:
        return
    try:
        redis_client().hincrby(f"metrics:{name}", json.dumps(labels, sort_keys=True), n)
    except redis.RedisError:
        log.debug("metric %s not counted", name)


def task_outcome(task: str, state: str) -> None:
    count("pi_dashboard_celery_tasks", {"task": task, "outcome": state.lower()})


def ingest_batch(*, kind: str, stored: int, duplicate: int, rejected: int) -> None:
    """One ingest batch's lines by result, in one round trip."""
    counts = {"stored": stored, "duplicate": duplicate, "rejected": rejected}
    try:
        with redis_client().pipeline(transaction=False) as pipe:
            for result, n in counts.items():
                if n:
                    field = json.dumps({"kind": kind, "result": result}, sort_keys=True)
                    pipe.hincrby("metrics:pi_dashboard_ingest_lines", field, n)
            pipe.execute()
    except redis.RedisError:
        log.debug("ingest lines not counted")
