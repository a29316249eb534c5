"""Fleet overview: the host × model matrix.

Reads current state (HostModel) and hourly rollups only, so its cost depends on the
size of the fleet and the range, never on how many events were ever stored. A fixed
number of queries, whatever the number of hosts or models.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

from django.core.paginator import Page, Paginator
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse

from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.fleet.pages.failures import Counts, counts_by_cell

HOSTS_PER_PAGE = 25


@dataclass(frozen=True)
class HostInfo:
    pk: int
    pi_id: str
    last_contact_at: datetime | None


@dataclass(frozen=True)
class ModelInfo:
    pk: int
    key: str


@dataclass
class Cell:
    """One host × model of the matrix: plain values, no model instances.

    Thousands of cells are built per request; ORM instances would cost most of it.
    """

    model_key: str
    probe_status: str
    probe_grade: str
    protocol_status: str
    rule_count: int
    url: str
    counts: Counts
    rate: float


@dataclass
class HostRow:
    host: HostInfo
    hostnames: list[str] = field(default_factory=list)
    cells: dict[int, Cell] = field(default_factory=dict)
    failures: int = 0
    rules: int = 0
    # The cells in column order (one per model column; None where not used).
    cell_list: list[Cell | None] = field(default_factory=list)


@dataclass
class Overview:
    models: list[ModelInfo]
    page: Page[HostRow]
    cell_count: int
    fleet_is_empty: bool
    providers: list[str]
    host_ids: list[str]


CELL_FIELDS = (
    "host_id",
    "host__pi_id",
    "host__last_contact_at",
    "model_id",
    "model__key",
    "probe_status",
    "probe_grade",
    "protocol_status",
    "rule_count",
)


def host_models(filters: dict[str, Any]) -> QuerySet[HostModel]:
    """Current host × model rows matching the filters."""
    qs = HostModel.objects.all()
    if filters.get("provider"):
        qs = qs.filter(model__provider=filters["provider"])
    if filters.get("host"):
        qs = qs.filter(host__pi_id=filters["host"])
    verdict = filters.get("verdict")
    if verdict:
        qs = qs.filter(probe_status="" if verdict == "unprobed" else verdict)
    if filters.get("q"):
        q = filters["q"]
        named = Agent.objects.filter(host=OuterRef("host"), hostname__icontains=q)
        qs = qs.filter(
            Q(host__pi_id__icontains=q) | Q(model__key__icontains=q) | Exists(named)
        )
    return qs


def cell_url(hosts_prefix: str, pi_id: str, key: str) -> str:
    """fleet:host_model without a reverse() per cell (hundreds per page)."""
    return f"{hosts_prefix}{quote(pi_id, safe='')}/models/{quote(key)}/"


SORT_KEYS: dict[str, Any] = {
    "host": lambda r: r.host.pi_id,
    "failures": lambda r: r.failures,
    "rules": lambda r: r.rules,
}


def sort_rows(rows: list[HostRow], sort: str) -> list[HostRow]:
    """Sort by the key; ties (and the "-" prefix for descending) stay stable by host."""
    descending = sort.startswith("-")
    name = sort.lstrip("-") or "failures"
    rows = sorted(rows, key=lambda r: r.host.pi_id)
    if name == "host":
        return list(reversed(rows)) if descending else rows
    if name == "contact":
        known = [r for r in rows if r.host.last_contact_at is not None]
        never = [r for r in rows if r.host.last_contact_at is None]
        known.sort(key=lambda r: r.host.last_contact_at, reverse=descending)  # type: ignore[arg-type, return-value]
        return known + never
    key = SORT_KEYS[name]
    return sorted(rows, key=key, reverse=descending)


def overview_build(
    *, filters: dict[str, Any], since: datetime, hours: int, page_number: str | None
) -> Overview:
    """Everything the overview shows for one page of hosts."""
    counts = counts_by_cell(since=since)
    prefix = reverse("fleet:hosts")
    rows: dict[int, HostRow] = {}
    models: dict[int, ModelInfo] = {}
    cell_count = 0
    empty = Counts()
    for values in host_models(filters).values_list(*CELL_FIELDS):
        host_id, pi_id, contact, model_id, key, status, grade, protocol, rules = values
        row = rows.get(host_id)
        if row is None:
            row = rows[host_id] = HostRow(host=HostInfo(host_id, pi_id, contact))
        c = counts.get((host_id, model_id), empty)
        url = cell_url(prefix, pi_id, key)
        row.cells[model_id] = Cell(
            key, status, grade, protocol, rules, url, c, c.rate(hours)
        )
        row.failures += c.failures
        row.rules += rules
        if model_id not in models:
            models[model_id] = ModelInfo(model_id, key)
        cell_count += 1
    ordered = sort_rows(list(rows.values()), filters.get("sort") or "-failures")
    page = Paginator(ordered, HOSTS_PER_PAGE).get_page(page_number)
    columns = sorted(models.values(), key=lambda m: m.key)
    for row in page.object_list:
        row.cell_list = [row.cells.get(m.pk) for m in columns]
    attach_hostnames(list(page.object_list))
    return Overview(
        models=columns,
        page=page,
        cell_count=cell_count,
        fleet_is_empty=not cell_count and not HostModel.objects.exists(),
        providers=list(
            Model.objects.order_by("provider")
            .values_list("provider", flat=True)
            .distinct()
        ),
        host_ids=list(Host.objects.values_list("pi_id", flat=True)),
    )


def attach_hostnames(rows: list[HostRow]) -> None:
    """Hostnames of the agents that reported each host (one query for the page)."""
    by_host: dict[int, list[str]] = defaultdict(list)
    agents = Agent.objects.filter(host_id__in=[r.host.pk for r in rows]).order_by(
        "hostname"
    )
    for host_id, hostname in agents.values_list("host_id", "hostname"):
        if hostname and hostname not in by_host[host_id]:
            by_host[host_id].append(hostname)
    for row in rows:
        row.hostnames = by_host.get(row.host.pk, [])
