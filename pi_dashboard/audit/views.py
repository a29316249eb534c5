"""The audit page and its CSV export."""

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.views.decorators.http import require_GET

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.audit import export, selectors
from pi_dashboard.audit.forms import AuditFilterForm
from pi_dashboard.lib import dayrange
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.htmx import wants_partial

AUDIT_PAGE_SIZE = 50


@require_GET
@role_required(Role.VIEWER)
def audit(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    cursor = form.cleaned_data.get("cursor", "") if form.is_valid() else ""
    if not form.is_valid():
        # A filter that cannot be read (a bad date) shows its error and no
        # entries: listing everything would look like the filter had applied.
        page = selectors.AuditPage(entries=[], next_cursor=None)
    else:
        try:
            page = selectors.audit_page(
                filters=form.filters(), cursor=cursor, limit=AUDIT_PAGE_SIZE
            )
        except DomainError as error:
            form.add_error("cursor", error.detail)
            page = selectors.AuditPage(entries=[], next_cursor=None)
    template = "control/audit_list.html"
    if wants_partial(request):
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
    if not form.is_valid():
        return dayrange.bad_filter_response(form)
    return export.audit_csv_response(selectors.audit_queryset(filters=form.filters()))
