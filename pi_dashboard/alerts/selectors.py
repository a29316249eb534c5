"""Reads for the alerts pages, the API and the overview's attention header."""

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from django.db.models import Count, Q, QuerySet, Window
from django.urls import reverse
from django.utils import timezone

from pi_dashboard.alerts import liveness
from pi_dashboard.alerts.models import (
    OPEN_ALERT_STATES,
    Alert,
    AlertEvent,
    AlertRule,
    AlertState,
    Channel,
    HostTag,
    LivenessGrace,
    MaintenanceWindow,
    Notification,
    Silence,
)
from pi_dashboard.fleet.models import Host, HostModel, ProbeStatus, ProtocolStatus

ATTENTION_LIMIT = 10


@dataclass(frozen=True)
class Link:
    text: str
    url: str
    detail: str = ""


@dataclass
class Attention:
    hosts_down: list[Link]
    alerts_firing: list[Link]
    pairs_degraded: list[Link]
    counts: dict[str, int]

    @property
    def is_calm(self) -> bool:
        return not any(self.counts.values())


def host_url(pi_id: str) -> str:
    return reverse("fleet:host", args=[pi_id])


def host_model_url(pi_id: str, key: str) -> str:
    return f"{reverse('fleet:hosts')}{quote(pi_id, safe='')}/models/{quote(key)}/"


def hosts_by_liveness(
    now: datetime | None = None, policy: liveness.Policy | None = None
) -> dict[str, list[tuple[Host, liveness.Liveness]]]:
    now = now or timezone.now()
    policy = policy or liveness.Policy()
    out: dict[str, list[tuple[Host, liveness.Liveness]]] = {
        liveness.UP: [],
        liveness.LATE: [],
        liveness.DOWN: [],
        liveness.NEVER: [],
    }
    for host in Host.objects.only("pk", "pi_id", "last_contact_at"):
        state = policy.of(host.pk, host.last_contact_at, now)
        out[state.status].append((host, state))
    return out


def degraded_pairs() -> QuerySet[HostModel]:
    """Pairs pi cannot call tools on well: no tool calling, or calibration failed."""
    return HostModel.objects.filter(
        Q(probe_status=ProbeStatus.NONE) | Q(protocol_status=ProtocolStatus.FAILED)
    ).select_related("host", "model")


def firing_alerts() -> QuerySet[Alert]:
    return Alert.objects.filter(state=AlertState.FIRING).select_related("rule")


def attention_now(policy: liveness.Policy | None = None) -> Attention:
    """Hosts down, alerts firing, pairs degraded: four queries whatever the fleet."""
    by_state = hosts_by_liveness(policy=policy)
    down = sorted(by_state[liveness.DOWN], key=lambda hs: hs[1].since or timezone.now())
    firing = list(firing_alerts().order_by("-rule__is_urgent", "-fired_at"))
    # The total rides along each row (a window count): no second query.
    degraded = list(
        degraded_pairs()
        .annotate(total=Window(Count("id")))
        .order_by("host__pi_id", "model__key")[:ATTENTION_LIMIT]
    )
    alerts_url = reverse("alerts:list")
    return Attention(
        hosts_down=[
            Link(h.pi_id, host_url(h.pi_id), f"down since {s.since:%Y-%m-%d %H:%M} UTC")
            for h, s in down[:ATTENTION_LIMIT]
        ],
        alerts_firing=[
            Link(
                f"{a.rule.name}: {a.label}",
                a.evidence_url or f"{alerts_url}#alert-{a.pk}",
                "urgent" if a.rule.is_urgent else "",
            )
            for a in firing[:ATTENTION_LIMIT]
        ],
        pairs_degraded=[
            Link(
                f"{hm.host.pi_id} × {hm.model.key}",
                host_model_url(hm.host.pi_id, hm.model.key),
                "no tool calling"
                if hm.probe_status == ProbeStatus.NONE
                else "calibration failed",
            )
            for hm in degraded
        ],
        counts={
            "hosts_down": len(down),
            "alerts_firing": len(firing),
            "pairs_degraded": degraded[0].total if degraded else 0,
        },
    )


def open_alerts() -> QuerySet[Alert]:
    return Alert.objects.filter(state__in=OPEN_ALERT_STATES).select_related(
        "rule", "acknowledged_by"
    )


def alerts_list(*, state: str = "", rule_id: int | None = None) -> QuerySet[Alert]:
    qs = Alert.objects.select_related("rule", "acknowledged_by")
    if state:
        qs = qs.filter(state=state)
    if rule_id is not None:
        qs = qs.filter(rule_id=rule_id)
    return qs


def alert_history(limit: int = 100) -> QuerySet[AlertEvent]:
    return AlertEvent.objects.select_related("alert", "alert__rule")[:limit]


def rules() -> QuerySet[AlertRule]:
    return AlertRule.objects.prefetch_related("channels")


def channels() -> QuerySet[Channel]:
    return Channel.objects.all()


def silences_active(now: datetime | None = None) -> QuerySet[Silence]:
    now = now or timezone.now()
    return Silence.objects.filter(starts_at__lte=now, ends_at__gt=now)


def silences_recent() -> QuerySet[Silence]:
    return Silence.objects.select_related("rule")[:50]


def maintenance_windows() -> QuerySet[MaintenanceWindow]:
    return MaintenanceWindow.objects.all()


def notifications_recent(limit: int = 50) -> QuerySet[Notification]:
    return Notification.objects.select_related("channel", "alert", "alert__rule")[
        :limit
    ]


def graces() -> QuerySet[LivenessGrace]:
    return LivenessGrace.objects.select_related("host").order_by("tag", "host__pi_id")


def host_tags() -> QuerySet[HostTag]:
    return HostTag.objects.select_related("host").order_by("tag", "host__pi_id")
