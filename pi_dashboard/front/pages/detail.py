"""Model page and host page: one model on every host, one host with every model."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Max, QuerySet

from pi_dashboard.control.models import Command, CommandState
from pi_dashboard.fleet import entry
from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.front.pages.failures import Counts, counts_by_cell

OPEN_STATES = (CommandState.PENDING, CommandState.DELIVERED)


@dataclass
class HostModelRow:
    host_model: HostModel
    counts: Counts
    rate: float
    hostnames: list[str] = field(default_factory=list)

    @property
    def rule_modes(self) -> list[str]:
        return sorted(entry.rule_modes(self.host_model.entry))

    @property
    def protocol_at(self) -> str | None:
        return entry.protocol_at(self.host_model.entry)

    @property
    def calibration(self) -> entry.Calibration:
        return entry.calibration(self.host_model.entry)


def hostnames_by_host(host_ids: list[int]) -> dict[int, list[str]]:
    names: dict[int, list[str]] = defaultdict(list)
    rows = (
        Agent.objects.filter(host_id__in=host_ids)
        .exclude(hostname="")
        .order_by("hostname")
        .values_list("host_id", "hostname")
        .distinct()
    )
    for host_id, hostname in rows:
        names[host_id].append(hostname)
    return names


def model_hosts(
    *, model: Model, since: datetime, until: datetime | None = None, hours: int
) -> tuple[list[HostModelRow], dict[str, list[HostModelRow]]]:
    """Every host running `model`, and which hosts hold a rule for each mode."""
    counts = counts_by_cell(since=since, until=until, model_ids=[model.pk])
    hms = HostModel.objects.filter(model=model).select_related("host")
    rows = []
    for hm in hms.order_by("host__pi_id"):
        c = counts.get((hm.host_id, model.pk), Counts())
        rows.append(HostModelRow(hm, c, c.rate(hours)))
    names = hostnames_by_host([r.host_model.host_id for r in rows])
    by_mode: dict[str, list[HostModelRow]] = defaultdict(list)
    for row in rows:
        row.hostnames = names.get(row.host_model.host_id, [])
        for mode in row.rule_modes:
            by_mode[mode].append(row)
    return rows, dict(sorted(by_mode.items()))


def hosts_with_rule(model: Model, mode: str) -> list[str]:
    """pi ids of the hosts holding a standing `mode` rule for `model`."""
    hms = HostModel.objects.filter(model=model).select_related("host")
    rows = [HostModelRow(hm, Counts(), 0.0) for hm in hms.order_by("host__pi_id")]
    return [r.host_model.host.pi_id for r in rows if mode in r.rule_modes]


def models_list() -> QuerySet[Model]:
    """Every model with how many hosts run it and its newest entry time."""
    return Model.objects.annotate(
        host_count=Count("host_models"), last_entry_at=Max("host_models__entry_at")
    ).order_by("key")


def hosts_list() -> QuerySet[Host]:
    return Host.objects.annotate(
        model_count=Count("host_models", distinct=True),
        agent_count=Count("agents", distinct=True),
    ).order_by("pi_id")


def host_models(
    *, host: Host, since: datetime, until: datetime | None = None, hours: int
) -> list[HostModelRow]:
    counts = counts_by_cell(since=since, until=until, host_ids=[host.pk])
    hms = HostModel.objects.filter(host=host).select_related("model")
    rows = []
    for hm in hms.order_by("model__key"):
        c = counts.get((host.pk, hm.model_id), Counts())
        rows.append(HostModelRow(hm, c, c.rate(hours)))
    return rows


def open_commands(**filters: Any) -> QuerySet[Command]:
    return (
        Command.objects.filter(state__in=OPEN_STATES, **filters)
        .select_related("model", "host", "created_by")
        .order_by("created_at")
    )


def recent_commands(limit: int = 10, **filters: Any) -> list[Command]:
    return list(
        Command.objects.filter(**filters)
        .select_related("model", "host", "created_by")
        .order_by("-created_at")[:limit]
    )
