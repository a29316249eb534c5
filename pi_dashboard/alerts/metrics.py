"""Prometheus metrics for /metrics.

Counters are kept in Redis (one hash per metric, a field per label set), because
requests, ingest and Celery tasks run in many processes and /metrics is answered by
any one of them. Fleet gauges are computed at scrape time from current state and
the last hour's rollups.
"""

import json
import logging
from collections.abc import Iterator
from datetime import timedelta
from functools import lru_cache
from typing import Any

import redis
from django.conf import settings
from django.db.models import Count, Sum
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

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
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)


def count(name: str, labels: dict[str, str], n: int = 1) -> None:
    """Add n to a counter; never fails the caller (metrics are best effort)."""
    if n <= 0:
        return
    try:
        _redis().hincrby(f"metrics:{name}", json.dumps(labels, sort_keys=True), n)
    except redis.RedisError:
        log.debug("metric %s not counted", name)


def task_outcome(task: str, state: str) -> None:
    count("pi_dashboard_celery_tasks", {"task": task, "outcome": state.lower()})


def ingest_batch(*, kind: str, stored: int, duplicate: int, rejected: int) -> None:
    """One ingest batch's lines by result, in one round trip."""
    counts = {"stored": stored, "duplicate": duplicate, "rejected": rejected}
    try:
        with _redis().pipeline(transaction=False) as pipe:
            for result, n in counts.items():
                if n:
                    field = json.dumps({"kind": kind, "result": result}, sort_keys=True)
                    pipe.hincrby("metrics:pi_dashboard_ingest_lines", field, n)
            pipe.execute()
    except redis.RedisError:
        log.debug("ingest lines not counted")


class DashboardCollector(Collector):
    def collect(self) -> Iterator[Any]:
        yield from self._counters()
        yield from self._fleet()

    def _counters(self) -> Iterator[Any]:
        for name, (doc, label_names) in COUNTERS.items():
            family = CounterMetricFamily(name, doc, labels=list(label_names))
            for field, value in _redis().hgetall(f"metrics:{name}").items():
                labels = json.loads(field)
                family.add_metric([labels.get(k, "") for k in label_names], int(value))
            yield family

    def _fleet(self) -> Iterator[Any]:
        from pi_dashboard.alerts import selectors
        from pi_dashboard.alerts.models import Alert, AlertState
        from pi_dashboard.fleet.models import HostModel
        from pi_dashboard.ingest.models import Dimension, Rollup

        hosts = GaugeMetricFamily(
            "pi_dashboard_hosts", "Hosts by liveness.", labels=["liveness"]
        )
        for state, items in selectors.hosts_by_liveness().items():
            hosts.add_metric([state], len(items))
        yield hosts
        pairs = GaugeMetricFamily(
            "pi_dashboard_pairs", "Host × model pairs by verdict.", labels=["verdict"]
        )
        for row in HostModel.objects.values("probe_status").annotate(n=Count("id")):
            pairs.add_metric([row["probe_status"] or "unprobed"], row["n"])
        yield pairs
        rules = HostModel.objects.aggregate(n=Sum("rule_count"))["n"] or 0
        yield GaugeMetricFamily(
            "pi_dashboard_standing_rules", "Standing rules across the fleet.", rules
        )
        since = (timezone.now() - timedelta(hours=1)).replace(
            minute=0, second=0, microsecond=0
        )
        phases = GaugeMetricFamily(
            "pi_dashboard_failures_last_hour",
            "Execution failures by phase in the current and previous hour cells.",
            labels=["phase"],
        )
        for row in (
            Rollup.objects.filter(dimension=Dimension.PHASE, bucket__gte=since)
            .values("key")
            .annotate(n=Sum("count"))
        ):
            phases.add_metric([row["key"]], row["n"])
        yield phases
        yield GaugeMetricFamily(
            "pi_dashboard_alerts_firing",
            "Alerts firing now.",
            Alert.objects.filter(state=AlertState.FIRING).count(),
        )
