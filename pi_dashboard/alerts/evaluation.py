"""One evaluation cycle: every enabled rule against what its signal measures now.

Hysteresis as Gatus does it: a subject must breach `fire_after` consecutive cycles
to fire and clear `resolve_after` consecutive cycles to resolve; a pending alert that
clears before firing is dropped (it never existed for anyone). Each measure is read
once per cycle whatever the number of rules that share it.
"""

import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from pi_dashboard.alerts import measures, notifying
from pi_dashboard.alerts.models import (
    OPEN_ALERT_STATES,
    Alert,
    AlertEvent,
    AlertEventKind,
    AlertRule,
    AlertState,
    NotificationKind,
)
from pi_dashboard.alerts.scopes import Subject, scope_covers
from pi_dashboard.ingest import store

# pg advisory lock key of the evaluation cycle ("alerts" in ASCII).
EVALUATION_LOCK = 0x616C65727473


@dataclass
class CycleResult:
    rules: int = 0
    fired: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    reminded: list[int] = field(default_factory=list)
    seconds: float = 0.0
    skipped: bool = False  # another cycle was running
    timings: dict[tuple[str, int, str], float] = field(default_factory=dict)


class Cycle:
    """Shared reads of one cycle: names, tags, and each measure once."""

    def __init__(self, now: datetime, rules: list[AlertRule]) -> None:
        self.now = now
        self.names = measures.Names()
        self._measured: dict[tuple[str, int, str], list[measures.Observation]] = {}
        # Seconds each measure took (the benchmark prints the slowest).
        self.timings: dict[tuple[str, int, str], float] = {}
        # Every rollup signal of every rule, every window: one scan (measures.Sums).
        wanted: dict[str, set[str]] = defaultdict(set)
        minutes = []
        for rule in rules:
            reads = measures.rollup_reads(rule.signal, rule.param)
            if reads is not None:
                wanted[reads[0]].update(reads[1])
                minutes.append(rule.window_minutes)
        started = time.perf_counter()
        self.names.rollups = measures.Sums(now, minutes, dict(wanted))
        self.timings[("rollup scan", max(minutes, default=0), "")] = (
            time.perf_counter() - started
        )
        self.suppressions = notifying.Suppressions(now)
        self.tags = measures.host_tags()
        # Each measure's lowest threshold among the rules that read it.
        self.floors: dict[tuple[str, int, str], float] = {}
        for rule in rules:
            key = (rule.signal, rule.window_minutes, rule.param)
            self.floors[key] = min(self.floors.get(key, rule.threshold), rule.threshold)
        self.writes = Writes()

    def observe(self, rule: AlertRule) -> list[measures.Observation]:
        key = (rule.signal, rule.window_minutes, rule.param)
        if key not in self._measured:
            started = time.perf_counter()
            window = measures.Window(
                self.now,
                rule.window_minutes,
                rule.param,
                self.floors.get(key, float("-inf")),
            )
            self._measured[key] = measures.MEASURES[rule.signal](window, self.names)
            self.timings[key] = time.perf_counter() - started
        return self._measured[key]

    def notify(self, alert: Alert, rule: AlertRule, kind: str) -> None:
        self.writes.outgoing.append(
            notifying.Outgoing(
                alert=alert,
                kind=kind,
                subject=self.subject(alert.host_id, alert.model_key),
                channels=list(rule.channels.all()),  # prefetched with the rules
            )
        )

    def subject(self, host_id: int | None, model_key: str) -> Subject:
        return Subject(
            host_pi_id=self.names.hosts.get(host_id, "") if host_id else "",
            host_tags=frozenset(self.tags.get(host_id, ())) if host_id else frozenset(),
            model_key=model_key,
        )


# Fields a cycle changes on an alert it already had, with their SQL array types.
ALERT_FIELDS = {
    "state": "text",
    "value": "float8",
    "breaches": "int",
    "clears": "int",
    "label": "text",
    "evidence_url": "text",
    "fired_at": "timestamptz",
    "resolved_at": "timestamptz",
}


def _alerts_update(alerts: list[Alert]) -> None:
    """One UPDATE … FROM unnest(arrays) for every changed alert. Django's
    bulk_update writes a CASE per field with a WHEN per row, quadratic in rows:
    seconds for the thousands of alerts a storm resolves."""
    if not alerts:
        return
    names = list(ALERT_FIELDS)
    rows = [[a.pk, *(getattr(a, n) for n in names)] for a in alerts]
    for row in rows:
        row[2] = float(row[2])  # value: a measure may give an int or a Decimal
    arrays = ", ".join(f"%s::{t}[]" for t in ("bigint", *ALERT_FIELDS.values()))
    sets = ", ".join(f"{n} = v.{n}" for n in names)
    table = Alert._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS a SET {sets} "  # noqa: S608
            f"FROM unnest({arrays}) AS v(id, {', '.join(names)}) WHERE a.id = v.id",
            store.columns(rows, len(names) + 1),
        )


@dataclass
class Writes:
    """What a cycle writes, flushed in a few bulk statements at its end: the first
    cycle of an alert storm creates thousands of alerts at the cost of a handful of
    queries (one per table), not of one round trip per alert."""

    created: list[Alert] = field(default_factory=list)
    changed: list[Alert] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    events: list[tuple[Alert, str]] = field(default_factory=list)
    outgoing: list[notifying.Outgoing] = field(default_factory=list)

    def flush(self, now: datetime, suppressions: notifying.Suppressions) -> None:
        if self.dropped:
            Alert.objects.filter(pk__in=self.dropped).delete()
        # Pending alerts first get their ids: events and notifications point at them.
        Alert.objects.bulk_create(self.created, batch_size=2000)
        _alerts_update(self.changed)
        AlertEvent.objects.bulk_create(
            (
                AlertEvent(alert=alert, kind=kind, at=now, value=alert.value)
                for alert, kind in self.events
            ),
            batch_size=2000,
        )
        if self.outgoing:
            notifying.notifications_queue_many(
                outgoing=self.outgoing, suppressions=suppressions
            )


@transaction.atomic
def alerts_evaluate(*, now: datetime | None = None) -> CycleResult:
    """Evaluate every enabled rule once; notifications are queued on commit."""
    started = time.perf_counter()
    now = now or timezone.now()
    # One cycle at a time: a slow cycle and the next beat tick must not both create
    # the same alert. The lock ends with the transaction.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [EVALUATION_LOCK])
        if not cursor.fetchone()[0]:
            return CycleResult(skipped=True)
    rules = list(
        AlertRule.objects.filter(is_enabled=True)
        .prefetch_related("channels")
        .order_by("pk")
    )
    cycle = Cycle(now, rules)
    result = CycleResult()
    by_pk = {r.pk: r for r in rules}
    open_by_rule: dict[int, dict[str, Alert]] = {r.pk: {} for r in rules}
    for alert in Alert.objects.filter(
        rule__in=rules, state__in=OPEN_ALERT_STATES
    ).select_for_update():
        alert.rule = by_pk[alert.rule_id]  # messages read it: no query per alert
        open_by_rule[alert.rule_id][alert.subject] = alert
    for rule in rules:
        result.rules += 1
        _rule_evaluate(rule, cycle, open_by_rule[rule.pk])
    cycle.writes.flush(now, cycle.suppressions)
    by_kind: dict[str, list[int]] = {
        AlertEventKind.FIRED: result.fired,
        AlertEventKind.REMINDED: result.reminded,
        AlertEventKind.RESOLVED: result.resolved,
    }
    for alert, kind in cycle.writes.events:
        by_kind[kind].append(alert.pk)
    result.seconds = time.perf_counter() - started
    result.timings = cycle.timings
    return result


def _rule_evaluate(
    rule: AlertRule, cycle: Cycle, open_alerts: dict[str, Alert]
) -> None:
    now, writes = cycle.now, cycle.writes
    breached = {}
    for obs in cycle.observe(rule):
        if obs.value < rule.threshold:
            continue
        if not scope_covers(
            rule.scope_kind, rule.scope_value, cycle.subject(obs.host_id, obs.model_key)
        ):
            continue
        breached[obs.subject] = obs
    for subject, obs in breached.items():
        alert = open_alerts.get(subject)
        is_new = alert is None
        if alert is None:
            alert = Alert(
                rule=rule,
                subject=subject,
                state=AlertState.PENDING,
                started_at=now,
                host_id=obs.host_id,
                model_key=obs.model_key,
            )
        # A firing alert that still breaches with the same value and no clear
        # cycle in between changes nothing: no write (an alert storm stays cheap).
        steady = (
            alert.state == AlertState.FIRING
            and alert.clears == 0
            and alert.value == obs.value
            and alert.label == obs.label[:900]
        )
        alert.breaches += 1
        alert.clears = 0
        alert.value = obs.value
        alert.label = obs.label[:900]
        alert.evidence_url = obs.url[:1200]
        kind = None
        if alert.state == AlertState.PENDING and alert.breaches >= rule.fire_after:
            alert.state = AlertState.FIRING
            alert.fired_at = now
            kind = NotificationKind.FIRING
        elif alert.state == AlertState.FIRING and _reminder_due(rule, alert, now):
            kind = NotificationKind.REMINDER
        if is_new:
            writes.created.append(alert)
        elif kind is not None or not steady:
            writes.changed.append(alert)
        if kind == NotificationKind.FIRING:
            writes.events.append((alert, AlertEventKind.FIRED))
        elif kind == NotificationKind.REMINDER:
            writes.events.append((alert, AlertEventKind.REMINDED))
        if kind is not None:
            cycle.notify(alert, rule, kind)
    for subject, alert in open_alerts.items():
        if subject in breached:
            continue
        if alert.state == AlertState.PENDING:
            writes.dropped.append(alert.pk)
            continue
        alert.clears += 1
        alert.breaches = 0
        writes.changed.append(alert)
        if alert.clears >= rule.resolve_after:
            alert.state = AlertState.RESOLVED
            alert.resolved_at = now
            writes.events.append((alert, AlertEventKind.RESOLVED))
            cycle.notify(alert, rule, NotificationKind.RESOLVED)


def _reminder_due(rule: AlertRule, alert: Alert, now: datetime) -> bool:
    if not rule.remind_minutes:
        return False
    last = alert.last_notified_at or alert.fired_at or now
    return now - last >= timedelta(minutes=rule.remind_minutes)
