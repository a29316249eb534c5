"""Control pages: commands with their live state."""

import uuid
from typing import cast

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.audit import audit
from pi_dashboard.control import selectors, services
from pi_dashboard.control.forms import CommandFilterForm
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.htmx import STOP_POLLING, wants_partial

# The event the fleet pages' live sections reload on (front.actions.CHANGED_EVENT):
# sent when a polled command settles, so its effect shows without waiting.
SETTLED_EVENT = "fleet-changed"
COMMANDS_SHOWN = 100


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
    if wants_partial(request):
        template += "#commands-table"
    context = {"form": form, "commands": rows, "limit": COMMANDS_SHOWN}
    return render(request, template, context)


@require_GET
@role_required(Role.VIEWER)
def command_status(request: HttpRequest, command_id: uuid.UUID) -> HttpResponse:
    """The live state: a partial for htmx (286 once settled), else the full page."""
    command = selectors.command_get(command_id=command_id)
    if wants_partial(request):
        status = STOP_POLLING if command.is_settled else 200
        context = {"command": command, "hide_link": "hide_link" in request.GET}
        response = render(
            request, "control/_command_status.html", context, status=status
        )
        if command.is_settled:
            # The page's live sections (rules, counts, commands) reload at once.
            response["HX-Trigger"] = SETTLED_EVENT
        return response
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
    command = selectors.command_get(command_id=command_id)
    try:
        again = services.command_retry(
            actor=cast(User, request.user),
            command=command,
            ip_address=audit.client_ip(request),
        )
    except DomainError as error:
        messages.error(request, error.detail)
        return redirect("control:command_status", command_id=command.pk)
    messages.success(request, f"Queued again as command {again.pk}.")
    return redirect("control:command_status", command_id=again.pk)
