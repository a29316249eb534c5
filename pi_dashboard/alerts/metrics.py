"""Prometheus metrics for /metrics.

The counters are `lib/counters.py`'s (kept in Redis, counted by every process,
ingest among them). Fleet gauges are computed at scrape time from current state and
the last hour's rollups.
"""

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.db.models import Count, Sum
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from pi_dashboard.lib import counters


class DashboardCollector(Collector):
    def collect(self) -> Iterator[Any]:
        yield from self._counters()
        yield from self._fleet()

    def _counters(self) -> Iterator[Any]:
        for name, (doc, label_names) in counters.COUNTERS.items():
            family = CounterMetricFamily(name, doc, labels=list(label_names))
            for field, value in (
                counters.redis_client().hgetall(f"metrics:{name}").items()
            ):
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
