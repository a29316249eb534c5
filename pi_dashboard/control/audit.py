"""The audit log. Every control action, allowed or refused, is written here."""

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from pi_dashboard.accounts.models import Role
from pi_dashboard.control.models import AuditEntry, AuditOutcome, Command
from pi_dashboard.fleet.models import Host, Model


def client_ip(request: HttpRequest) -> str | None:
    return request.META.get("REMOTE_ADDR") or None


def actor_label(request: HttpRequest) -> str:
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return str(user.get_username())
    return "anonymous"


def audit_record(
    *,
    request: HttpRequest | None,
    action: str,
    outcome: AuditOutcome,
    host: Host | None = None,
    model: Model | None = None,
    command: Command | None = None,
    detail: dict[str, Any] | None = None,
    label: str | None = None,
) -> AuditEntry:
    user = getattr(request, "user", None) if request is not None else None
    return AuditEntry.objects.create(
        actor=user if user is not None and user.is_authenticated else None,
        actor_label=label
        or (actor_label(request) if request is not None else "system"),
        action=action,
        outcome=outcome,
        host=host,
        model=model,
        command=command,
        detail=detail or {},
        ip_address=client_ip(request) if request is not None else None,
    )


def refused_response(request: HttpRequest, *, needed: Role, view: str) -> HttpResponse:
    """Audit a refused page or action and answer 403."""
    audit_record(
        request=request,
        action=f"view:{view}" if request.method == "GET" else f"action:{view}",
        outcome=AuditOutcome.REFUSED,
        detail={
            "needed_role": needed.value,
            "path": request.path,
            "method": request.method,
        },
    )
    body = render_to_string("403.html", {"needed_role": needed.label}, request=request)
    return HttpResponse(body, status=403)
