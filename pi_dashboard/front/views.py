"""Fleet pages: server-rendered, one URL per page; htmx requests get the named partial.

Every view reads through `front/pages/` (rollups and current state, never raw events
for aggregates). Actions live in `front/actions.py`.
"""

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.fleet import entry
from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.front.forms import EventFilterForm, OverviewFilterForm
from pi_dashboard.front.pages import action_specs as specs
from pi_dashboard.front.pages import chart_fit, detail, efficacy, probe_offer
from pi_dashboard.front.pages import host_model as hm_pages
from pi_dashboard.front.pages.failures import FAILURE_RATE_HELP, Counts, counts_by_cell
from pi_dashboard.front.pages.overview import overview_build
from pi_dashboard.front.pages.ranges import range_from_request
from pi_dashboard.ingest.models import Dimension
from pi_dashboard.lib.htmx import htmx_target, wants_partial
from pi_dashboard.probes import disagreement
from pi_dashboard.probes import selectors as probe_selectors

OUTCOME_CHOICES = ["repaired", "bounced", "failed", "rejected"]
SORT_CHOICES = [
    ("-failures", "most failures first"),
    ("host", "host A–Z"),
    ("-contact", "latest contact first"),
    ("contact", "oldest contact first"),
    ("-rules", "most rules first"),
]


def partial_name(request: HttpRequest, template: str, partial: str) -> str:
    return f"{template}#{partial}" if wants_partial(request) else template


def base_context(request: HttpRequest) -> dict[str, Any]:
    time_range = range_from_request(request)
    return {
        "time_range": time_range,
        "now": timezone.now(),
        "failure_rate_help": FAILURE_RATE_HELP,
    }


@require_GET
@role_required(Role.VIEWER)
def overview(request: HttpRequest) -> HttpResponse:
    ctx = base_context(request)
    form = OverviewFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    sort = filters.get("sort") or "-failures"
    ctx.update(
        form=form,
        sort=sort,
        view=filters.get("view") or "matrix",
        sort_choices=SORT_CHOICES,
        overview=overview_build(
            filters={**filters, "sort": sort},
            since=ctx["time_range"].since(),
            until=ctx["time_range"].end,
            hours=ctx["time_range"].hours,
            page_number=request.GET.get("page"),
        ),
    )
    template = partial_name(request, "fleet/overview.html", "matrix")
    return render(request, template, ctx)


@require_GET
@role_required(Role.VIEWER)
def model_list(request: HttpRequest) -> HttpResponse:
    ctx = base_context(request)
    ctx["models"] = detail.models_list()
    return render(request, "fleet/model_list.html", ctx)


@require_GET
@role_required(Role.VIEWER)
def model_detail(request: HttpRequest, key: str) -> HttpResponse:
    ctx = base_context(request)
    model = get_object_or_404(Model, key=key)
    tr = ctx["time_range"]
    rows, by_mode = detail.model_hosts(
        model=model, since=tr.since(), until=tr.end, hours=tr.hours
    )
    ctx.update(
        model=model,
        rows=rows,
        rules_by_mode=[
            (
                mode,
                hosts,
                specs.remove_everywhere_spec(
                    model, mode, [r.host_model.host.pi_id for r in hosts]
                ),
            )
            for mode, hosts in by_mode.items()
        ],
        charts=charts_for(tr, model),
        open_commands=list(detail.open_commands(model=model)),
        **server_probes(model, runs=False, host_models=[r.host_model for r in rows]),
    )
    if htmx_target(request) == "model-state":
        return render(request, "fleet/model_detail.html#state", ctx)
    return render(request, "fleet/model_detail.html", ctx)


def server_probes(
    model: Model, *, runs: bool, host_models: list[HostModel]
) -> dict[str, Any]:
    """The probes app's view of this model: endpoint verdicts, drift, recent runs,
    and where they disagree with the hosts' own verdicts."""
    endpoints = probe_selectors.latest_verdicts([model.key])[model.key]
    return {
        "server_probes": endpoints,
        "disagreements": disagreement.verdict_disagreements(
            endpoints=endpoints, host_models=host_models
        ),
        "drift": probe_selectors.drift_for_models([model.key])[model.key],
        "probe_runs": list(
            probe_selectors.run_list().filter(endpoint__model_key=model.key)[:10]
        )
        if runs
        else [],
    }


CHARTS = [
    ("repair-modes", "Repair modes applied", "repairs", Dimension.REPAIR_MODE),
    ("phases", "Execution failures by phase", "failures", Dimension.PHASE),
    ("codes", "Execution failures by failure code", "failures", Dimension.FAILURE_CODE),
]


def charts_for(
    tr: Any, model: Model, host_id: int | None = None
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The page's charts, fitted to their data, with pi's and operators' markers."""
    data = chart_fit.fitted_charts(
        dimensions=[dimension for *_, dimension in CHARTS],
        time_range=tr,
        model_id=model.pk,
        host_id=host_id,
    )
    return [
        (dom, title, unit, series)
        for (dom, title, unit, _), series in zip(CHARTS, data, strict=True)
    ]


@require_GET
@role_required(Role.VIEWER)
def host_list(request: HttpRequest) -> HttpResponse:
    ctx = base_context(request)
    hosts = list(detail.hosts_list())
    names = detail.hostnames_by_host([h.pk for h in hosts])
    ctx["hosts"] = [(h, names.get(h.pk, [])) for h in hosts]
    return render(request, "fleet/host_list.html", ctx)


@require_GET
@role_required(Role.VIEWER)
def host_detail(request: HttpRequest, host_id: str) -> HttpResponse:
    ctx = base_context(request)
    host = get_object_or_404(Host, pi_id=host_id)
    tr = ctx["time_range"]
    agents = list(Agent.objects.filter(host=host).order_by("hostname", "name"))
    ctx.update(
        host=host,
        agents=agents,
        rows=detail.host_models(
            host=host, since=tr.since(), until=tr.end, hours=tr.hours
        ),
        open_commands=list(detail.open_commands(host=host)),
        recent_commands=detail.recent_commands(host=host),
        # "Probe now…" of any model pi knows, stored here or not (issue 13.5).
        probe_offer=probe_offer.probe_offer(agents),
        probe_models=probe_offer.probe_model_choices(host=host, agents=agents),
    )
    template = partial_name(request, "fleet/host_detail.html", "commands")
    return render(request, template, ctx)


@require_GET
@role_required(Role.VIEWER)
def host_model_detail(request: HttpRequest, host_id: str, key: str) -> HttpResponse:
    ctx = base_context(request)
    hm = get_object_or_404(
        HostModel.objects.select_related("host", "model"),
        host__pi_id=host_id,
        model__key=key,
    )
    form = EventFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    if wants_partial(request) and htmx_target(request) != "hm-state":
        # Filtering or paging the events list: only that part is rendered.
        ctx.update(
            hm=hm,
            event_form=form,
            outcome_choices=OUTCOME_CHOICES,
            events=hm_pages.events_page(
                host_model=hm, filters=filters, cursor=filters.get("cursor") or ""
            ),
            event_options=hm_pages.event_filter_options(hm),
        )
        return render(request, "fleet/host_model_detail.html#events", ctx)
    tr = ctx["time_range"]
    hostnames = detail.hostnames_by_host([hm.host_id]).get(hm.host_id, [])
    counts = counts_by_cell(
        since=tr.since(),
        until=tr.end,
        host_ids=[hm.host_id],
        model_ids=[hm.model_id],
    ).get((hm.host_id, hm.model_id), Counts())
    recent = detail.recent_commands(host=hm.host, model=hm.model)
    offer = probe_offer.probe_offer(hm.host.agents.all())
    ctx.update(
        hm=hm,
        host=hm.host,
        model=hm.model,
        hostnames=hostnames,
        calibration=entry.calibration(hm.entry),
        counts=counts,
        rate=counts.rate(tr.hours),
        rules=[
            {"rule": r, "specs": specs.remove_rule_specs(hm, r.mode, hostnames)}
            for r in efficacy.rules_view(hm.entry, now=ctx["now"])
        ],
        charts=charts_for(tr, hm.model, hm.host_id),
        probe_action=specs.probe_spec(hm, hostnames) if offer.is_offered else None,
        probe_why_not=offer.why_not,
        # "Reset and re-probe" probes too: offered only where "Probe now" is.
        protocol_actions=specs.reset_protocol_specs(hm, hostnames)[
            : None if offer.is_offered else 1
        ]
        if hm.protocol_status
        else [],
        reprobe_why_not=offer.why_not if hm.protocol_status else "",
        teach_stats=efficacy.teach_stats_rows(hm.entry),
        probe_history=hm_pages.probe_history(hm),
        rule_history=hm_pages.rule_history(hm),
        event_form=form,
        outcome_choices=OUTCOME_CHOICES,
        events=hm_pages.events_page(
            host_model=hm, filters=filters, cursor=filters.get("cursor") or ""
        ),
        event_options=hm_pages.event_filter_options(hm),
        recent_commands=recent,
        commands_live=any(not c.is_settled for c in recent),
        **server_probes(hm.model, runs=True, host_models=[hm]),
    )
    if htmx_target(request) == "hm-state":
        return render(request, "fleet/host_model_detail.html#state", ctx)
    return render(request, "fleet/host_model_detail.html", ctx)
