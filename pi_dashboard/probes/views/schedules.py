"""Schedules (interval or cron, selection, pause/resume, next run) and fleet probes."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import has_role, refused_response, role_required
from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.probes import selectors, services
from pi_dashboard.probes.forms import ScheduleForm
from pi_dashboard.probes.models import FleetProbe, ProbeSchedule, SelectionKind, Trigger
from pi_dashboard.probes.views.common import page, user_of

MAX_ROW_ID = 2**63 - 1  # PostgreSQL bigint


def _schedules_page(
    request: HttpRequest, form: ScheduleForm, status: int = 200
) -> HttpResponse:
    schedules = [(s, selectors.schedule_next_run(s)) for s in selectors.schedule_list()]
    return page(
        request,
        "probes/schedule_list.html",
        {
            "schedules": schedules,
            "form": form,
            "fleets": selectors.fleet_list()[:20],
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
@role_required(Role.VIEWER)
def schedule_list(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _schedules_page(
            request, ScheduleForm(initial={"kind": "interval", "every_seconds": 3600})
        )
    return _save(request, None)


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def schedule_edit(request: HttpRequest, schedule_id: int) -> HttpResponse:
    schedule = get_object_or_404(ProbeSchedule, pk=schedule_id)
    if request.method == "POST":
        return _save(request, schedule)
    form = ScheduleForm(
        initial={
            "name": schedule.name,
            "kind": schedule.kind,
            "every_seconds": schedule.every_seconds,
            "cron": schedule.cron,
            "selection_kind": schedule.selection_kind,
            "selection_value": schedule.selection_value,
            "jitter_seconds": schedule.jitter_seconds,
            "is_paused": schedule.is_paused,
        }
    )
    return page(
        request, "probes/schedule_form.html", {"form": form, "schedule": schedule}
    )


def _save(request: HttpRequest, schedule: ProbeSchedule | None) -> HttpResponse:
    if not has_role(request.user, Role.OPERATOR):
        return refused_response(request, needed=Role.OPERATOR, view="schedule_save")
    form = ScheduleForm(request.POST)
    if form.is_valid():
        try:
            saved = services.schedule_save(
                schedule=schedule,
                data=form.data_for_service(),
                **audit.who(request),
            )
            messages.success(request, f"Saved schedule {saved.name}.")
            return redirect("probes:schedules")
        except DomainError as exc:
            form.add_error(None, exc.detail)
    else:
        # A save the form refuses is as much a refused action as one the service does.
        audit.audit_record(
            request=request,
            action="probes.schedule.save",
            outcome=AuditOutcome.REFUSED,
            # What was posted may hold what PostgreSQL's JSON cannot (NUL).
            detail=jsonsafe.sanitise(
                {
                    "name": request.POST.get("name", "")[:200],
                    "code": "invalid_form",
                    "reason": form.errors.as_text()[:500],
                }
            ),
        )
    if schedule is not None:
        return page(
            request,
            "probes/schedule_form.html",
            {"form": form, "schedule": schedule},
            status=400,
        )
    return _schedules_page(request, form, status=400)


@require_POST
@role_required(Role.OPERATOR)
def schedule_pause(
    request: HttpRequest, schedule_id: int, paused: bool
) -> HttpResponse:
    schedule = get_object_or_404(ProbeSchedule, pk=schedule_id)
    services.schedule_set_paused(
        schedule=schedule,
        is_paused=paused,
        **audit.who(request),
    )
    messages.success(request, f"{'Paused' if paused else 'Resumed'} {schedule.name}.")
    return redirect("probes:schedules")


@require_POST
@role_required(Role.OPERATOR)
def schedule_delete(request: HttpRequest, schedule_id: int) -> HttpResponse:
    schedule = get_object_or_404(ProbeSchedule, pk=schedule_id)
    services.schedule_delete(schedule=schedule, **audit.who(request))
    messages.success(request, f"Deleted schedule {schedule.name}.")
    return redirect("probes:schedules")


@require_POST
@role_required(Role.OPERATOR)
def fleet_start(request: HttpRequest) -> HttpResponse:
    """Probe the selected endpoints now (a schedule's selection, or all)."""
    raw_id = request.POST.get("schedule", "").strip()
    schedule = None
    if raw_id:
        if not raw_id.isdigit() or int(raw_id) > MAX_ROW_ID:
            return HttpResponse(
                "Bad request: schedule must be a schedule id.",
                status=400,
                content_type="text/plain",
            )
        schedule = get_object_or_404(ProbeSchedule, pk=int(raw_id))
    kind = schedule.selection_kind if schedule else SelectionKind.ALL
    value = schedule.selection_value if schedule else ""
    fleet = services.fleet_probe_start(
        key=None,
        trigger=Trigger.FLEET,
        selection_kind=kind,
        selection_value=value,
        schedule=schedule,
        user=user_of(request),
        jitter_seconds=schedule.jitter_seconds if schedule else 0,
        ip_address=audit.client_ip(request),
    )
    return redirect("probes:fleet", fleet_id=fleet.pk)


@require_GET
@role_required(Role.VIEWER)
def fleet_detail(request: HttpRequest, fleet_id: int) -> HttpResponse:
    fleet = get_object_or_404(FleetProbe, pk=fleet_id)
    runs = selectors.run_list(fleet_id=fleet.pk)
    # What changed, from the Drift rows its summary was made of (named as ours).
    changed = selectors.drift_list().filter(run__fleet=fleet).order_by("at", "id")
    return page(
        request,
        "probes/fleet_detail.html",
        {"fleet": fleet, "runs": runs, "changed": changed},
    )
