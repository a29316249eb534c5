"""Fleet pages. Placeholder overview until the dashboard lands (issue #4)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.fleet.models import Host


@require_GET
@role_required(Role.VIEWER)
def overview(request: HttpRequest) -> HttpResponse:
    return render(request, "fleet/overview.html", {"hosts": Host.objects.all()})
