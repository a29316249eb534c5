"""Writes of the alerts app: rules, channels, silences, maintenance, grace, tags,
acknowledgements; each audits itself (`audit.audits`), whoever calls it.
Evaluation is `evaluation.alerts_evaluate`, delivery `notifying.notification_send`."""

from datetime import datetime, time
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from pi_dashboard.alerts import notifying
from pi_dashboard.alerts.models import (
    Alert,
    AlertEvent,
    AlertEventKind,
    AlertRule,
    AlertState,
    Channel,
    HostTag,
    LivenessGrace,
    MaintenanceWindow,
    ScopeKind,
    Signal,
    Silence,
)
from pi_dashboard.audit import audit
from pi_dashboard.fleet.models import Host
from pi_dashboard.lib.errors import Conflict, DomainError, NotFound
from pi_dashboard.probes import crypto

# Always urgent whatever the rule says: pi's next write of an unreadable store
# replaces it, dropping every other host's data.
URGENT_SIGNALS = frozenset({Signal.STORE_UNREADABLE.value})

RULE_FIELDS = (
    "name",
    "scope_kind",
    "scope_value",
    "signal",
    "param",
    "threshold",
    "window_minutes",
    "fire_after",
    "resolve_after",
    "remind_minutes",
    "is_urgent",
    "is_enabled",
)


def _scope_check(kind: str, value: str) -> None:
    if kind not in ScopeKind.values:
        raise DomainError(
            f"Unknown scope {kind!r}; one of {', '.join(ScopeKind.values)}.",
            code="invalid_scope",
        )
    if kind != ScopeKind.FLEET and not value.strip():
        raise DomainError(f"A {kind} scope needs a value.", code="invalid_scope")


def rule_validate(data: dict[str, Any]) -> None:
    if not str(data.get("name", "")).strip():
        raise DomainError("Give the rule a name.", code="invalid_name")
    if data.get("signal") not in Signal.values:
        raise DomainError(
            f"Unknown signal; one of {', '.join(Signal.values)}.",
            code="invalid_signal",
        )
    _scope_check(data.get("scope_kind", ScopeKind.FLEET), data.get("scope_value", ""))
    if not 1 <= int(data.get("window_minutes", 60)) <= 60 * 24 * 31:
        raise DomainError("The window is 1 minute to 31 days.", code="invalid_window")
    for name in ("fire_after", "resolve_after"):
        if not 1 <= int(data.get(name, 1)) <= 100:
            raise DomainError(f"{name} is 1 to 100.", code="invalid_hysteresis")
    if float(data.get("threshold", 1)) < 0:
        raise DomainError("The threshold cannot be negative.", code="invalid_threshold")


def host_get(host: Host | str) -> Host:
    """A Host, or the one a pi host id names; unknown_host when none does."""
    if isinstance(host, Host):
        return host
    found = Host.objects.filter(pi_id=host.strip()).first()
    if found is None:
        raise DomainError(f"No host {host!r}.", code="unknown_host")
    return found


def host_named(host: Host | str | None) -> str:
    """The pi host id for an audit entry, whether given as a Host or as its id."""
    return host.pi_id if isinstance(host, Host) else (host or "")


@audit.audits(
    "alerts.rule.save",
    lambda kw: {
        "name": kw["data"].get("name") or (kw["rule"].name if kw["rule"] else ""),
        "rule": kw["rule"].pk if kw["rule"] else None,
    },
    result_key="rule",
)
@transaction.atomic
def rule_save(
    *,
    rule: AlertRule | None,
    data: dict[str, Any],
    channel_ids: list[int] | None,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> AlertRule:
    """Create (rule None) or change a rule; channel_ids None keeps its channels."""
    merged = {f: getattr(rule, f) for f in RULE_FIELDS} if rule else {}
    merged.update({k: v for k, v in data.items() if k in RULE_FIELDS})
    rule_validate(merged)
    merged["name"] = str(merged["name"]).strip()
    if merged["signal"] in URGENT_SIGNALS:
        merged["is_urgent"] = True
    clash = AlertRule.objects.filter(name=merged["name"])
    if rule is not None:
        clash = clash.exclude(pk=rule.pk)
    if clash.exists():
        raise Conflict(
            f"A rule named {merged['name']!r} exists.", code="duplicate_name"
        )
    rule = rule or AlertRule()
    for k, v in merged.items():
        setattr(rule, k, v)
    rule.save()
    if channel_ids is not None:
        found = list(Channel.objects.filter(pk__in=channel_ids))
        if len(found) != len(set(channel_ids)):
            raise NotFound("Unknown channel id.", code="unknown_channel")
        rule.channels.set(found)
    return rule


@audit.audits(
    "alerts.rule.delete", lambda kw: {"rule": kw["rule"].pk, "name": kw["rule"].name}
)
@transaction.atomic
def rule_delete(
    *, rule: AlertRule, user: audit.Actor = None, ip_address: str | None = None
) -> None:
    rule.delete()


@audit.audits(
    "alerts.channel.save",
    lambda kw: {"name": kw["name"], "url_changed": bool(kw["url"])},
    result_key="channel",
)
@transaction.atomic
def channel_save(
    *,
    channel: Channel | None,
    name: str,
    url: str | None,
    is_enabled: bool,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> Channel:
    """Create or change a channel; url None keeps the stored one."""
    if not name.strip():
        raise DomainError("Give the channel a name.", code="invalid_name")
    if channel is None and not url:
        raise DomainError("Give the channel an Apprise URL.", code="invalid_url")
    if url:
        notifying.url_check(url.strip())
    clash = Channel.objects.filter(name=name.strip())
    if channel is not None:
        clash = clash.exclude(pk=channel.pk)
    if clash.exists():
        raise Conflict(f"A channel named {name!r} exists.", code="duplicate_name")
    channel = channel or Channel()
    channel.name = name.strip()
    channel.is_enabled = is_enabled
    if url:
        channel.url_encrypted = crypto.encrypt(url.strip())
        channel.url_hint = notifying.url_hint(url.strip())
    channel.save()
    return channel


@audit.audits(
    "alerts.channel.delete",
    lambda kw: {"channel": kw["channel"].pk, "name": kw["channel"].name},
)
@transaction.atomic
def channel_delete(
    *, channel: Channel, user: audit.Actor = None, ip_address: str | None = None
) -> None:
    channel.delete()


@audit.audits(
    "alerts.silence.create",
    lambda kw: {
        "rule": kw["rule"].pk if kw["rule"] else None,
        "scope_kind": kw["scope_kind"],
        "scope_value": kw["scope_value"],
        "ends_at": kw["ends_at"].isoformat(),
    },
    result_key="silence",
)
@transaction.atomic
def silence_create(
    *,
    rule: AlertRule | None,
    scope_kind: str,
    scope_value: str,
    ends_at: datetime,
    reason: str,
    actor: str,
    starts_at: datetime | None = None,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> Silence:
    _scope_check(scope_kind, scope_value)
    starts_at = starts_at or timezone.now()
    if ends_at <= starts_at:
        raise DomainError("A silence must end after it starts.", code="invalid_end")
    return Silence.objects.create(
        rule=rule,
        scope_kind=scope_kind,
        scope_value=scope_value.strip(),
        starts_at=starts_at,
        ends_at=ends_at,
        reason=reason[:500],
        created_by=actor[:200],
    )


@audit.audits("alerts.silence.end", lambda kw: {"silence": kw["silence"].pk})
@transaction.atomic
def silence_end(
    *, silence: Silence, user: audit.Actor = None, ip_address: str | None = None
) -> None:
    now = timezone.now()
    if silence.ends_at > now:
        silence.ends_at = max(now, silence.starts_at)
        silence.save(update_fields=["ends_at"])


@audit.audits(
    "alerts.maintenance.save", lambda kw: {"name": kw["name"]}, result_key="window"
)
@transaction.atomic
def maintenance_save(
    *,
    window: MaintenanceWindow | None,
    name: str,
    scope_kind: str,
    scope_value: str,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    weekdays: list[int] | None = None,
    start_time: time | None = None,
    duration_minutes: int = 0,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> MaintenanceWindow:
    if not name.strip():
        raise DomainError("Give the window a name.", code="invalid_name")
    _scope_check(scope_kind, scope_value)
    one_off = starts_at is not None or ends_at is not None
    recurring = bool(weekdays) or start_time is not None
    if one_off == recurring:
        raise DomainError(
            "A window is either one-off (start and end) or recurring (weekdays, "
            "start time, duration).",
            code="invalid_window",
        )
    if one_off and (starts_at is None or ends_at is None or ends_at <= starts_at):
        raise DomainError("A one-off window ends after it starts.", code="invalid_end")
    if recurring and (
        start_time is None
        or not weekdays
        or any(d not in range(1, 8) for d in weekdays)
        or not 1 <= duration_minutes <= 7 * 24 * 60
    ):
        raise DomainError(
            "A recurring window needs weekdays 1-7, a start time and a duration.",
            code="invalid_window",
        )
    window = window or MaintenanceWindow()
    window.name = name.strip()
    window.scope_kind, window.scope_value = scope_kind, scope_value.strip()
    window.starts_at, window.ends_at = starts_at, ends_at
    window.weekdays = sorted(set(weekdays or []))
    window.start_time, window.duration_minutes = start_time, duration_minutes
    window.save()
    return window


@audit.audits(
    "alerts.maintenance.delete",
    lambda kw: {"window": kw["window"].pk, "name": kw["window"].name},
)
@transaction.atomic
def maintenance_delete(
    *,
    window: MaintenanceWindow,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> None:
    window.delete()


@audit.audits("alerts.alert.acknowledge", lambda kw: {"alert": kw["alert"].pk})
@transaction.atomic
def alert_acknowledge(
    *, alert: Alert, user: User | None, ip_address: str | None = None
) -> Alert:
    if alert.state != AlertState.FIRING:
        raise Conflict("Only a firing alert can be acknowledged.", code="not_firing")
    if alert.acknowledged_at is None:
        alert.acknowledged_at = timezone.now()
        alert.acknowledged_by = user
        alert.save(update_fields=["acknowledged_at", "acknowledged_by"])
        AlertEvent.objects.create(
            alert=alert,
            kind=AlertEventKind.ACKNOWLEDGED,
            at=alert.acknowledged_at,
            value=alert.value,
            actor=user.get_username() if user else "",
        )
    return alert


@audit.audits(
    "alerts.grace.set",
    lambda kw: {"host": host_named(kw["host"]), "tag": kw["tag"]},
    result_key="grace",
)
@transaction.atomic
def grace_set(
    *,
    host: Host | str | None,
    tag: str,
    late_seconds: int,
    down_seconds: int,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> LivenessGrace:
    """Set the late/down grace of one host or one tag (replacing the previous);
    `host` is a Host or a pi host id."""
    host = host_get(host) if host else None
    if (host is None) == (not tag.strip()):
        raise DomainError("Give a host or a tag, not both.", code="invalid_target")
    if not 1 <= late_seconds < down_seconds:
        raise DomainError(
            "Late must be at least 1 s and shorter than down.", code="invalid_grace"
        )
    grace, _ = LivenessGrace.objects.update_or_create(
        host=host,
        tag=tag.strip(),
        defaults={"late_seconds": late_seconds, "down_seconds": down_seconds},
    )
    return grace


@audit.audits("alerts.grace.delete", lambda kw: {"grace": kw["grace"].pk})
@transaction.atomic
def grace_delete(
    *, grace: LivenessGrace, user: audit.Actor = None, ip_address: str | None = None
) -> None:
    grace.delete()


@audit.audits(
    "alerts.tag.add", lambda kw: {"host": host_named(kw["host"]), "tag": kw["tag"]}
)
@transaction.atomic
def host_tag_add(
    *,
    host: Host | str,
    tag: str,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> HostTag:
    host = host_get(host)
    tag = tag.strip()
    if not tag or len(tag) > 64:
        raise DomainError("A tag is 1 to 64 characters.", code="invalid_tag")
    try:
        with transaction.atomic():
            return HostTag.objects.create(host=host, tag=tag)
    except IntegrityError:
        return HostTag.objects.get(host=host, tag=tag)


@audit.audits(
    "alerts.tag.remove",
    lambda kw: {"host": host_named(kw["host"]), "tag": kw["tag"]},
)
@transaction.atomic
def host_tag_remove(
    *,
    host: Host | str,
    tag: str,
    user: audit.Actor = None,
    ip_address: str | None = None,
) -> None:
    host = host_get(host)
    HostTag.objects.filter(host=host, tag=tag).delete()
