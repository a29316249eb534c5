"""Control pages: commands with their live state."""

import uuid

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.control import selectors
from pi_dashboard.control.forms import CommandFilterForm
from pi_dashboard.lib.errors import NotFound

# htmx stops polling an element whose response has this status (then swaps it in).
HTMX_STOP_POLLING = 286
# The event the fleet pages' live sections reload on (front.actions.CHANGED_EVENT):
# sent when a polled command settles, so its effect shows without waiting.
SETTLED_EVENT = "fleet-changed"
COMMANDS_SHOWN = 100


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
