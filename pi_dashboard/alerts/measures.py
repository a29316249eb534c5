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
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db.models import Count, Q, Sum
from django.urls import reverse

from pi_dashboard.alerts import liveness
from pi_dashboard.alerts.models import Signal
from pi_dashboard.alerts.selectors import host_model_url, host_url
from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Agent, Change, ChangeKind, Host, HostModel, Model
from pi_dashboard.ingest.models import Dimension, Rollup
from pi_dashboard.probes.models import Drift, Endpoint

EXECUTION_FAILURE_KEYS = ("execution:failed", "execution:rejected")
# Contract: `snap` adds `reverted`; until then no command has that state.
COMMAND_TROUBLE_STATES = ("failed", "expired", "reverted")


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
    """pi ids and model keys for the ids rollups hold (two queries per cycle)."""

    def __init__(self) -> None:
        self.hosts: dict[int, str] = dict(Host.objects.values_list("pk", "pi_id"))
        self.models: dict[int, str] = dict(Model.objects.values_list("pk", "key"))


def _pair(
    names: Names, host_id: int, model_id: int | None, value: float, w: Window
) -> Observation:
    pi_id = names.hosts.get(host_id, str(host_id))
    key = names.models.get(model_id, "") if model_id else ""
    url = host_model_url(pi_id, key) if key else host_url(pi_id)
    return Observation(
        subject=f"host:{pi_id}|model:{key}",
        label=f"{pi_id} × {key}" if key else pi_id,
        value=value,
        url=f"{url}?range={w.range_param()}",
        host_id=host_id,
        model_key=key,
    )


def _failure_cells(w: Window) -> Any:
    """Rollup cells of execution failures in the window, narrowed by `param`."""
    cells = Rollup.objects.filter(bucket__gte=w.first_bucket, bucket__lte=w.now)
    if w.param.startswith("code:"):
        return cells.filter(dimension=Dimension.FAILURE_CODE, key=w.param[5:])
    if w.param:
        return cells.filter(dimension=Dimension.PHASE, key=w.param)
    return cells.filter(dimension=Dimension.OUTCOME, key__in=EXECUTION_FAILURE_KEYS)


def failure_rate(w: Window, names: Names) -> list[Observation]:
    rows = _failure_cells(w).values("host_id", "model_id").annotate(n=Sum("count"))
    return [_pair(names, r["host_id"], r["model_id"], r["n"], w) for r in rows]


def failure_rate_model(w: Window, names: Names) -> list[Observation]:
    rows = _failure_cells(w).values("model_id").annotate(n=Sum("count"))
    out = []
    for r in rows:
        key = names.models.get(r["model_id"], "") if r["model_id"] else ""
        out.append(
            Observation(
                subject=f"model:{key}",
                label=key or "(no model)",
                value=r["n"],
                url=(reverse("fleet:model", args=[key]) if key else "")
                + f"?range={w.range_param()}",
                model_key=key,
            )
        )
    return out


def bounce_rate(w: Window, names: Names) -> list[Observation]:
    """Bounced / all validations of each host × model, 0..1."""
    rows = (
        Rollup.objects.filter(
            bucket__gte=w.first_bucket,
            bucket__lte=w.now,
            dimension=Dimension.OUTCOME,
            key__in=("validation:bounced", "validation:repaired"),
        )
        .values("host_id", "model_id")
        .annotate(
            bounced=Sum("count", filter=Q(key="validation:bounced")),
            total=Sum("count"),
        )
    )
    return [
        _pair(names, r["host_id"], r["model_id"], (r["bounced"] or 0) / r["total"], w)
        for r in rows
        if r["total"]
    ]


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
    # pi demotes a text protocol that stopped parsing to `none` (reference §7.7).
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
    rows = (
        Command.objects.filter(state__in=COMMAND_TROUBLE_STATES)
        .filter(Q(finished_at__gte=w.since) | Q(expires_at__gte=w.since))
        .values("host_id", "model_id")
        .annotate(n=Count("id"))
    )
    return [_pair(names, r["host_id"], r["model_id"], r["n"], w) for r in rows]


def _agent_field(name: str) -> bool:
    try:
        Agent._meta.get_field(name)
    except FieldDoesNotExist:
        return False
    return True


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


def ingest_trouble(w: Window, names: Names) -> list[Observation]:
    """The agent's `ingest` report (contract: stored by `snap`) shows a problem
    within the window. A no-op until Agent has that field."""
    if not _agent_field("ingest"):
        return []
    out = []
    for agent in _agents_with("ingest"):
        report = getattr(agent, "ingest", None) or {}
        at = report.get("last_problem_at")
        recent = bool(at) and str(at) >= w.since.isoformat()[:19]
        why = f": {report.get('last_problem')}" if recent else ""
        out.append(_agent_obs(agent, float(recent), why))
    return out


def store_unreadable(w: Window, names: Names) -> list[Observation]:
    """pi's model-adaptation.json unreadable (contract `store.status`): pi's next
    write drops every other host's data. A no-op until Agent has `store`."""
    if not _agent_field("store"):
        return []
    out = []
    for agent in _agents_with("store"):
        report = getattr(agent, "store", None) or {}
        bad = report.get("status") == "unreadable"
        why = f": {report.get('reason', '')}" if bad else ""
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
