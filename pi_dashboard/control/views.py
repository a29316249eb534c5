"""Control pages: commands with their live state, and the audit log."""

import uuid
from typing import cast

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.control import audit as control_audit
from pi_dashboard.control import export, selectors, services
from pi_dashboard.control.forms import AuditFilterForm, CommandFilterForm
from pi_dashboard.lib.errors import DomainError, NotFound

# htmx stops polling an element whose response has this status (then swaps it in).
HTMX_STOP_POLLING = 286
COMMANDS_SHOWN = 100
AUDIT_PAGE_SIZE = 50


def _wants_partial(request: HttpRequest) -> bool:
    htmx = getattr(request, "htmx", None)
    if not htmx:
        return False
    return not htmx.boosted


@require_GET
@role_required(Role.VIEWER)
def commands(request: HttpRequest) -> HttpResponse:
    form = CommandFilterForm(request.GET)
    data = form.cleaned_data if form.is_valid() else {}
    rows = selectors.command_list(
        host=data.get("host", ""),
        model=data.get("model", ""),
        state=data.get("state", ""),
        kind=data.get("kind", ""),
        limit=COMMANDS_SHOWN,
    )
    template = "control/command_list.html"
    if _wants_partial(request):
        template += "#commands-table"
    context = {"form": form, "commands": rows, "limit": COMMANDS_SHOWN}
    return render(request, template, context)


@require_GET
@role_required(Role.VIEWER)
def command_status(request: HttpRequest, command_id: uuid.UUID) -> HttpResponse:
    """The live state: a partial for htmx (286 once settled), else the full page."""
    try:
        command = selectors.command_get(command_id=command_id)
    except NotFound as missing:
        raise Http404(missing.detail) from missing
    if _wants_partial(request):
        status = HTMX_STOP_POLLING if command.is_settled else 200
        context = {"command": command, "hide_link": "hide_link" in request.GET}
        return render(request, "control/_command_status.html", context, status=status)
    trail = command.audit.select_related("host", "model").order_by("at", "id")
    return render(
        request,
        "control/command_detail.html",
        {"command": command, "trail": list(trail)},
    )


@require_POST
@role_required(Role.OPERATOR)
def command_retry(request: HttpRequest, command_id: uuid.UUID) -> HttpResponse:
    """Queue a reverted, failed or expired command again; show the new one."""
    try:
        command = selectors.command_get(command_id=command_id)
    except NotFound as missing:
        raise Http404(missing.detail) from missing
    try:
        again = services.command_retry(
            actor=cast(User, request.user),
            command=command,
            ip_address=control_audit.client_ip(request),
        )
    except DomainError as error:
        messages.error(request, error.detail)
        return redirect("control:command_status", command_id=command.pk)
    messages.success(request, f"Queued again as command {again.pk}.")
    return redirect("control:command_status", command_id=again.pk)


@require_GET
@role_required(Role.VIEWER)
def audit(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    cursor = form.cleaned_data.get("cursor", "") if form.is_valid() else ""
    try:
        page = selectors.audit_page(
            filters=form.filters(), cursor=cursor, limit=AUDIT_PAGE_SIZE
        )
    except DomainError as error:
        form.add_error("cursor", error.detail)
        page = selectors.audit_page(filters=form.filters(), limit=AUDIT_PAGE_SIZE)
    template = "control/audit_list.html"
    if _wants_partial(request):
        template += "#audit-table"
    context = {
        "form": form,
        "page": page,
        "actions": selectors.audit_actions(),
        "is_first_page": not cursor,
    }
    return render(request, template, context)


@require_GET
@role_required(Role.VIEWER)
def audit_csv(request: HttpRequest) -> HttpResponseBase:
    form = AuditFilterForm(request.GET)
    return export.audit_csv_response(selectors.audit_queryset(filters=form.filters()))
