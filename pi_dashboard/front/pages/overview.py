"""Fleet overview: the host × model matrix.

Reads current state (HostModel) and rollups only (whole days from daily rows, the
range's first hours from hourly rows), so its cost depends on the size of the fleet
and the range, never on how many events were ever stored. A fixed number of
queries, whatever the number of hosts or models.

Sorting by failures needs every host's total, so one SQL statement sums the range for
the whole (filtered) fleet, per host × model, and returns plain tuples; everything
else — cell details, hostnames — is read for the one page of hosts shown.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse

from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.front.pages.failures import FAILURE_KEYS, outcome_rows

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

    Hundreds of cells are rendered per request; ORM instances would cost most of it.
    """

    model_key: str
    probe_status: str
    probe_grade: str
    protocol_status: str
    rule_count: int
    url: str
    failures: int
    rate: float


@dataclass
class HostRow:
    host: HostInfo
    hostnames: list[str] = field(default_factory=list)
    failures: int = 0
    rules: int = 0
    # The page's cells, in column order (None where the host does not use a model).
    cell_list: list[Cell | None] = field(default_factory=list)

    @property
    def cells(self) -> list[Cell]:
        return [cell for cell in self.cell_list if cell is not None]


@dataclass
class Overview:
    models: list[ModelInfo]
    page: Page[HostRow]
    cell_count: int
    fleet_is_empty: bool
    providers: list[str]
    host_ids: list[str]


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


# The filtered cells with their failures in the range: one row per host × model.
# Rollups (hourly edge, then whole days: failures.outcome_rows) are summed per cell
# first, then joined to the few thousand current cells.
_CELL_TOTALS = """
SELECT hm.host_id, hm.model_id, hm.rule_count, coalesce(f.n, 0)
FROM ({cells}) hm
LEFT JOIN (
    SELECT host_id, model_id, sum(count) AS n FROM ({rows}) r
    GROUP BY host_id, model_id
) f ON f.host_id = hm.host_id AND f.model_id = hm.model_id
"""


def cell_totals(
    filters: dict[str, Any], since: datetime, until: datetime | None = None
) -> list[tuple[int, int, int, int]]:
    """(host id, model id, rule count, failures in range) of every filtered cell."""
    cells = host_models(filters).values("host_id", "model_id", "rule_count")
    cells_sql, cells_params = cells.query.sql_with_params()
    rows_sql, rows_params = outcome_rows(since=since, until=until, keys=FAILURE_KEYS)
    with connection.cursor() as cursor:
        cursor.execute(
            _CELL_TOTALS.format(cells=cells_sql, rows=rows_sql),
            [*cells_params, *rows_params],
        )
        rows: list[tuple[int, int, int, int]] = cursor.fetchall()
    return rows


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
    *,
    filters: dict[str, Any],
    since: datetime,
    until: datetime | None = None,
    hours: int,
    page_number: str | None,
) -> Overview:
    """Everything the overview shows for one page of hosts."""
    totals = cell_totals(filters, since, until)
    hosts = {
        pk: HostInfo(pk, pi_id, contact)
        for pk, pi_id, contact in Host.objects.order_by("pi_id").values_list(
            "pk", "pi_id", "last_contact_at"
        )
    }
    rows: dict[int, HostRow] = {}
    failures: dict[tuple[int, int], int] = {}
    model_ids: set[int] = set()
    for host_id, model_id, rules, n in totals:
        row = rows.get(host_id)
        if row is None:
            row = rows[host_id] = HostRow(host=hosts[host_id])
        row.failures += n
        row.rules += rules
        failures[(host_id, model_id)] = n
        model_ids.add(model_id)
    # Alerts (issue 11): a host without models still shows, with its liveness,
    # unless a filter on models, verdicts or text excludes it.
    if not any(filters.get(k) for k in ("provider", "verdict", "q")):
        wanted = filters.get("host")
        for pk, info in hosts.items():
            if pk not in rows and (not wanted or info.pi_id == wanted):
                rows[pk] = HostRow(host=info)
    ordered = sort_rows(list(rows.values()), filters.get("sort") or "-failures")
    page = Paginator(ordered, HOSTS_PER_PAGE).get_page(page_number)
    columns = [
        ModelInfo(pk, key)
        for pk, key in Model.objects.filter(pk__in=model_ids)
        .order_by("key")
        .values_list("pk", "key")
    ]
    page_cells(filters, list(page.object_list), columns, failures, hours)
    return Overview(
        models=columns,
        page=page,
        cell_count=len(totals),
        fleet_is_empty=not rows and not HostModel.objects.exists(),
        providers=list(
            Model.objects.order_by("provider")
            .values_list("provider", flat=True)
            .distinct()
        ),
        host_ids=[h.pi_id for h in hosts.values()],
    )


CELL_FIELDS = (
    "host_id",
    "model_id",
    "model__key",
    "probe_status",
    "probe_grade",
    "protocol_status",
    "rule_count",
)


def page_cells(
    filters: dict[str, Any],
    rows: list[HostRow],
    columns: list[ModelInfo],
    failures: dict[tuple[int, int], int],
    hours: int,
) -> None:
    """Fill in the cells and hostnames of the hosts on this page (two queries)."""
    by_id = {row.host.pk: row for row in rows}
    prefix = reverse("fleet:hosts")
    cells: dict[int, dict[int, Cell]] = defaultdict(dict)
    values = host_models(filters).filter(host_id__in=by_id).values_list(*CELL_FIELDS)
    for host_id, model_id, key, status, grade, protocol, rule_count in values:
        n = failures.get((host_id, model_id), 0)
        url = cell_url(prefix, by_id[host_id].host.pi_id, key)
        cells[host_id][model_id] = Cell(
            key, status, grade, protocol, rule_count, url, n, n / hours if hours else 0
        )
    for row in rows:
        mine = cells[row.host.pk]
        row.cell_list = [mine.get(m.pk) for m in columns]
    attach_hostnames(rows)


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
