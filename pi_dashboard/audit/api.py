"""Audit API: the log, paged as JSON or whole as CSV (viewers and up)."""

from typing import Any

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router

from pi_dashboard.accounts.auth import operator_auth, require_role
from pi_dashboard.accounts.models import Role
from pi_dashboard.audit import export, selectors
from pi_dashboard.audit.schemas import AuditFiltersIn, AuditPageOut, AuditQueryIn
from pi_dashboard.lib.schemas import ErrorOut

router = Router(tags=["audit"])


@router.get(
    "/audit",
    auth=operator_auth,
    response={200: AuditPageOut, 400: ErrorOut, 401: ErrorOut, 403: ErrorOut},
)
def list_audit(request: HttpRequest, query: Query[AuditQueryIn]) -> Any:
    """The audit log, newest first; pass `next_cursor` as `cursor` for older entries."""
    require_role(request, Role.VIEWER, action="api:list_audit")
    return selectors.audit_page(
        filters=query.filters(), cursor=query.cursor, limit=query.limit
    )


@router.get(
    "/audit.csv",
    auth=operator_auth,
    response={200: None, 401: ErrorOut, 403: ErrorOut},
)
def export_audit(
    request: HttpRequest, query: Query[AuditFiltersIn]
) -> StreamingHttpResponse:
    """The audit log as CSV, with the same filters as /audit."""
    require_role(request, Role.VIEWER, action="api:export_audit")
    return export.audit_csv_response(selectors.audit_queryset(filters=query.filters()))
