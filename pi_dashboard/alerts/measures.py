"""What each alert signal measures, per subject, over a window.

Counts come from rollups (hourly cells), current state (HostModel, Agent) and the
change/drift/command tables, never from raw event lines, so one evaluation costs the
same whatever the number of events stored. Each function returns every subject with
a value; the rule's threshold decides what breaches.
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from django.db import connection
from django.db.models import Count, Q
from django.urls import reverse

from pi_dashboard.alerts import liveness
from pi_dashboard.alerts.models import Signal
from pi_dashboard.alerts.selectors import host_url
from pi_dashboard.control.models import Command, CommandState
from pi_dashboard.fleet.models import Agent, Change, ChangeKind, Host, HostModel, Model
from pi_dashboard.ingest.models import Dimension, Rollup
from pi_dashboard.lib.isotime import parse_iso
from pi_dashboard.probes.models import Drift, Endpoint

EXECUTION_FAILURE_KEYS = ("execution:failed", "execution:rejected")
VALIDATION_KEYS = ("validation:bounced", "validation:repaired")
# Command trouble (contract): failed, expired or reverted.
FINISHED_TROUBLE_STATES = (CommandState.FAILED, CommandState.EXPIRED)
# An agent's clock a little ahead of ours still counts as now.
CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class Observation:
    subject: str
    label: str
    value: float
    url: str
    host_id: int | None = None
    model_key: str = ""


@dataclass(frozen=True)
class Window:
    now: datetime
    minutes: int
    param: str
    # The lowest threshold of the rules reading this measure: a rollup measure
    # builds no Observation under it (thousands of quiet cells per cycle cost
    # more than the scan that summed them).
    floor: float = float("-inf")

    @property
    def since(self) -> datetime:
        return self.now - timedelta(minutes=self.minutes)

    @property
    def first_bucket(self) -> datetime:
        # Hour cells that overlap the window (a cell is stamped with its hour).
        return self.since.replace(minute=0, second=0, microsecond=0)

    def range_param(self) -> str:
        hours = max(1, -(-self.minutes // 60))
        return "24h" if hours <= 24 else ("7d" if hours <= 168 else "30d")


class Names:
    """pi ids and model keys for the ids rollups hold (two queries per cycle), and
    the cycle's rollup sums (`rollups`, one scan for every window; see Sums)."""

    def __init__(self) -> None:
        self.hosts: dict[int, str] = dict(Host.objects.values_list("pk", "pi_id"))
        self.models: dict[int, str] = dict(Model.objects.values_list("pk", "key"))
        self.rollups: Sums | None = None

    def sums(self, w: Window, dimension: str, keys: tuple[str, ...]) -> Any:
        if self.rollups is None or not self.rollups.covers(w, dimension, keys):
            # Called outside a cycle (or for a window it did not plan): read just this.
            return Sums(w.now, [w.minutes], {dimension: set(keys)}).of(
                w, dimension, keys
            )
        return self.rollups.of(w, dimension, keys)


Cell = tuple[int, int | None]


class Sums:
    """Hourly rollup counts per host × model × (dimension, key), summed for every
    window a cycle needs in one scan: one FILTER column per distinct window start.

    The scan reads the rollup cells of the longest window only, so its cost is
    bounded by hosts × models × hours, never by the number of events.
    """

    def __init__(
        self, now: datetime, minutes: list[int], wanted: dict[str, set[str]]
    ) -> None:
        self.now = now
        self.starts = sorted({Window(now, m, "").first_bucket for m in minutes})
        self.wanted = wanted
        self.cells: dict[tuple[str, str], dict[Cell, list[int]]] = defaultdict(dict)
        if not self.starts or not wanted:
            return
        columns = ", ".join(
            "coalesce(sum(count) FILTER (WHERE bucket >= %s), 0)::bigint"
            for _ in self.starts
        )
        # One branch per dimension, each an index-only scan of rollup_alerts_scan
        # (dimension, key, bucket) INCLUDE (host, model, count): only the wanted
        # keys' cells of the window are read (an OR of dimensions would not use it).
        branch = (
            f"SELECT dimension, key, host_id, model_id, {columns} "  # noqa: S608
            f"FROM {Rollup._meta.db_table} "
            "WHERE dimension = %s AND key = ANY(%s) AND bucket >= %s AND bucket <= %s "
            "GROUP BY 1, 2, 3, 4"
        )
        sql = " UNION ALL ".join(branch for _ in wanted)
        params: list[Any] = []
        for dimension, keys in wanted.items():
            params += [*self.starts, dimension, sorted(keys), self.starts[0], now]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            for dimension, key, host_id, model_id, *sums in cursor.fetchall():
                self.cells[(dimension, key)][(host_id, model_id)] = sums

    def covers(self, w: Window, dimension: str, keys: tuple[str, ...]) -> bool:
        return w.first_bucket in self.starts and set(keys) <= self.wanted.get(
            dimension, set()
        )

    def of(self, w: Window, dimension: str, keys: tuple[str, ...]) -> dict[Cell, int]:
        i = self.starts.index(w.first_bucket)
        out: dict[Cell, int] = defaultdict(int)
        for key in keys:
            for cell, sums in self.cells.get((dimension, key), {}).items():
                if sums[i]:
                    out[cell] += sums[i]
        return out


def rollup_reads(signal: str, param: str) -> tuple[str, tuple[str, ...]] | None:
    """The (dimension, keys) a rollup signal reads; None for the other signals."""
    if signal in (Signal.FAILURE_RATE, Signal.FAILURE_RATE_MODEL):
        if param.startswith("code:"):
            return Dimension.FAILURE_CODE.value, (param[5:],)
        if param:
            return Dimension.PHASE.value, (param,)
        return Dimension.OUTCOME.value, EXECUTION_FAILURE_KEYS
    if signal == Signal.BOUNCE_RATE:
        return Dimension.OUTCOME.value, VALIDATION_KEYS
    return None


@lru_cache(maxsize=1)
def _hosts_prefix() -> str:
    return reverse("fleet:hosts")


def _pair(
    names: Names, host_id: int, model_id: int | None, value: float, w: Window
) -> Observation:
    pi_id = names.hosts.get(host_id, str(host_id))
    key = names.models.get(model_id, "") if model_id else ""
    # selectors.host_model_url / host_url without a reverse() per cell.
    url = f"{_hosts_prefix()}{quote(pi_id, safe='')}/"
    if key:
        url += f"models/{quote(key)}/"
    return Observation(
        subject=f"host:{pi_id}|model:{key}",
        label=f"{pi_id} × {key}" if key else pi_id,
        value=value,
        url=f"{url}?range={w.range_param()}",
        host_id=host_id,
        model_key=key,
    )


def _failures(w: Window, names: Names, signal: str) -> dict[Cell, int]:
    reads = rollup_reads(signal, w.param)
    assert reads is not None
    return dict(names.sums(w, *reads))


def failure_rate(w: Window, names: Names) -> list[Observation]:
    cells = _failures(w, names, Signal.FAILURE_RATE)
    return [_pair(names, h, m, n, w) for (h, m), n in cells.items() if n >= w.floor]


def failure_rate_model(w: Window, names: Names) -> list[Observation]:
    per_model: dict[int | None, int] = defaultdict(int)
    for (_host, model_id), n in _failures(w, names, Signal.FAILURE_RATE_MODEL).items():
        per_model[model_id] += n
    out = []
    for model_id, n in per_model.items():
        if n < w.floor:
            continue
        key = names.models.get(model_id, "") if model_id else ""
        out.append(
            Observation(
                subject=f"model:{key}",
                label=key or "(no model)",
                value=n,
                url=(reverse("fleet:model", args=[key]) if key else "")
                + f"?range={w.range_param()}",
                model_key=key,
            )
        )
    return out


# A rate of 1 bounce out of 1 validation says nothing: fewer are not measured.
MIN_VALIDATIONS = 10


def bounce_rate(w: Window, names: Names) -> list[Observation]:
    """Bounced / all validations of each host × model, 0..1 (at least
    MIN_VALIDATIONS in the window)."""
    bounced = names.sums(w, Dimension.OUTCOME.value, ("validation:bounced",))
    total = names.sums(w, Dimension.OUTCOME.value, VALIDATION_KEYS)
    rates = (
        (h, m, bounced.get((h, m), 0) / n)
        for (h, m), n in total.items()
        if n >= MIN_VALIDATIONS
    )
    return [_pair(names, h, m, rate, w) for h, m, rate in rates if rate >= w.floor]


def _changes(w: Window, names: Names, changes: Any) -> list[Observation]:
    rows = changes.filter(at__gte=w.since).values(
        "host_model__host_id", "host_model__model_id"
    )
    rows = rows.annotate(n=Count("id"))
    return [
        _pair(names, r["host_model__host_id"], r["host_model__model_id"], r["n"], w)
        for r in rows
    ]


def rule_learned(w: Window, names: Names) -> list[Observation]:
    return _changes(w, names, Change.objects.filter(kind=ChangeKind.RULE_ADDED))


def rule_evictions(w: Window, names: Names) -> list[Observation]:
    return _changes(w, names, Change.objects.filter(kind=ChangeKind.RULE_EVICTED))


def text_protocol_demoted(w: Window, names: Names) -> list[Observation]:
    # pi demotes a text protocol that stopped parsing to `none` (docs/pi-host-data.md
    # §7.7).
    demoted = Change.objects.filter(
        kind=ChangeKind.VERDICT_CHANGED, before__status="text-protocol"
    ).exclude(after__status="text-protocol")
    return _changes(w, names, demoted)


def probe_drift(w: Window, names: Names) -> list[Observation]:
    rows = (
        Drift.objects.filter(at__gte=w.since)
        .values("endpoint__name", "model_key")
        .annotate(n=Count("id"))
    )
    latest = {
        (d.endpoint.name, d.model_key): d
        for d in Drift.objects.filter(at__gte=w.since)
        .select_related("endpoint")
        .order_by("at")
    }
    out = []
    for r in rows:
        item = latest[(r["endpoint__name"], r["model_key"])]
        out.append(
            Observation(
                subject=f"endpoint:{r['endpoint__name']}|model:{r['model_key']}",
                label=f"{r['model_key']} via {r['endpoint__name']}: {item.summary}",
                value=r["n"],
                url=reverse("probes:run", args=[item.run_id]),
                model_key=r["model_key"],
            )
        )
    return out


def verdict_mismatch(w: Window, names: Names) -> list[Observation]:
    """A host's own probe verdict differs from the server's probe of the model."""
    server: dict[str, str] = {}
    for key, verdict in (
        Endpoint.objects.filter(is_enabled=True)
        .exclude(last_verdict="")
        .values_list("model_key", "last_verdict")
    ):
        server.setdefault(key, verdict)
    rows = (
        HostModel.objects.filter(model__key__in=server)
        .exclude(probe_status="")
        .values_list("host_id", "model_id", "model__key", "probe_status")
    )
    return [
        _pair(names, host_id, model_id, float(status != server[key]), w)
        for host_id, model_id, key, status in rows
    ]


def command_trouble(w: Window, names: Names) -> list[Observation]:
    """Commands that failed or expired (finished_at) or were reverted by a later
    snapshot (reverted_at: its finished_at is when it was applied) in the window."""
    rows = (
        Command.objects.filter(
            Q(state__in=FINISHED_TROUBLE_STATES, finished_at__gte=w.since)
            | Q(state=CommandState.REVERTED, reverted_at__gte=w.since)
        )
        .values("host_id", "model_id")
        .annotate(n=Count("id"))
    )
    return [_pair(names, r["host_id"], r["model_id"], r["n"], w) for r in rows]


def _agent_obs(agent: Agent, value: float, why: str) -> Observation:
    pi_id = agent.host.pi_id if agent.host else ""
    return Observation(
        subject=f"agent:{agent.pk}",
        label=f"agent {agent.name}" + (f" on {pi_id}" if pi_id else "") + why,
        value=value,
        url=host_url(pi_id) if pi_id else reverse("fleet:hosts"),
        host_id=agent.host_id,
    )


def _agents_with(field: str) -> Any:
    return (
        Agent.objects.filter(revoked_at__isnull=True)
        .select_related("host")
        .only("pk", "name", "host__pi_id", field)
    )


INGEST_COUNTERS = ("rejected_lines", "quarantined_lines", "spool_dropped")


def _count(report: dict[str, Any], name: str) -> int:
    value = report.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def ingest_trouble(w: Window, names: Names) -> list[Observation]:
    """The agent's heartbeat `ingest` report (contract): while its last problem
    (a rejected or quarantined line, a spool drop, a refused snapshot) is within
    the window, the value is its troubled lines so far (at least 1); else 0."""
    out = []
    for agent in _agents_with("ingest"):
        report = agent.ingest if isinstance(agent.ingest, dict) else {}
        at = parse_iso(report.get("last_problem_at"))
        if at is None or not w.since <= at <= w.now + CLOCK_SKEW:
            out.append(_agent_obs(agent, 0.0, ""))
            continue
        counts = {name: _count(report, name) for name in INGEST_COUNTERS}
        said = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items() if n)
        problem = str(report.get("last_problem") or "ingest trouble")[:300]
        why = f": {problem}" + (f" ({said})" if said else "")
        out.append(_agent_obs(agent, float(max(1, sum(counts.values()))), why))
    return out


def store_unreadable(w: Window, names: Names) -> list[Observation]:
    """pi's model-adaptation.json unreadable (heartbeat `store.status`): pi's next
    write replaces the file and drops every other host's data. Always urgent."""
    out = []
    for agent in _agents_with("store"):
        report = agent.store if isinstance(agent.store, dict) else {}
        bad = report.get("status") == "unreadable"
        why = (
            f": pi's store is unreadable ({report.get('reason') or 'no reason given'});"
            " pi's next write drops every other host's data"
            if bad
            else ""
        )
        out.append(_agent_obs(agent, float(bad), why))
    return out


def agent_down(w: Window, names: Names) -> list[Observation]:
    """1 for every host down (past its down grace), 0 for the others seen once."""
    policy = liveness.Policy()
    out = []
    for pk, pi_id, last in Host.objects.values_list("pk", "pi_id", "last_contact_at"):
        state = policy.of(pk, last, w.now)
        if state.status == liveness.NEVER:
            continue
        since = f" since {state.since:%Y-%m-%d %H:%M} UTC" if state.since else ""
        out.append(
            Observation(
                subject=f"host:{pi_id}",
                label=f"{pi_id} {state.label}{since}",
                value=float(state.status == liveness.DOWN),
                url=host_url(pi_id),
                host_id=pk,
            )
        )
    return out


MEASURES: dict[str, Callable[[Window, Names], list[Observation]]] = {
    Signal.AGENT_DOWN: agent_down,
    Signal.FAILURE_RATE: failure_rate,
    Signal.FAILURE_RATE_MODEL: failure_rate_model,
    Signal.BOUNCE_RATE: bounce_rate,
    Signal.RULE_LEARNED: rule_learned,
    Signal.RULE_EVICTIONS: rule_evictions,
    Signal.TEXT_PROTOCOL_DEMOTED: text_protocol_demoted,
    Signal.PROBE_DRIFT: probe_drift,
    Signal.VERDICT_MISMATCH: verdict_mismatch,
    Signal.COMMAND_TROUBLE: command_trouble,
    Signal.INGEST_TROUBLE: ingest_trouble,
    Signal.STORE_UNREADABLE: store_unreadable,
}


def host_tags() -> dict[int, set[str]]:
    from pi_dashboard.alerts.models import HostTag

    tags: dict[int, set[str]] = defaultdict(set)
    for host_id, tag in HostTag.objects.values_list("host_id", "tag"):
        tags[host_id].add(tag)
    return tags
