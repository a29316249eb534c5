"""The audit log. Every control action, allowed or refused, is written here."""

import contextlib
from collections.abc import Iterator
from typing import Any, cast

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from pi_dashboard.accounts.models import Role
from pi_dashboard.control.models import AuditEntry, AuditOutcome, Command
from pi_dashboard.fleet.models import Host, Model
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import DomainError

Actor = AbstractBaseUser | AnonymousUser | None


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
    """Audit an action seen through an HTTP request (actor and IP come from it)."""
    user = getattr(request, "user", None) if request is not None else None
    return audit_log(
        actor=user,
        label=label or (actor_label(request) if request is not None else "system"),
        action=action,
        outcome=outcome,
        host=host,
        model=model,
        command=command,
        detail=detail,
        ip_address=client_ip(request) if request is not None else None,
    )


def audit_log(
    *,
    actor: Actor,
    action: str,
    outcome: AuditOutcome,
    label: str | None = None,
    host: Host | None = None,
    model: Model | None = None,
    command: Command | None = None,
    detail: dict[str, Any] | None = None,
    ip_address: str | None = None,
) -> AuditEntry:
    """Audit an action done by `actor` (a user; None for the system or an agent)."""
    user = cast(User, actor) if actor is not None and actor.is_authenticated else None
    if label is None:
        label = str(user.get_username()) if user is not None else "system"
    return AuditEntry.objects.create(
        actor=user,
        # What a refused request carried is kept, minus what PostgreSQL or an
        # export cannot hold (NUL, lone surrogates; see `jsonsafe.storable`).
        actor_label=jsonsafe.sanitise_text(label[:200]),
        action=action,
        outcome=outcome,
        host=host,
        model=model,
        command=command,
        detail=jsonsafe.storable(detail or {}),
        ip_address=ip_address,
    )


@contextlib.contextmanager
def refusals_audited(
    *,
    actor: Actor,
    action: str,
    label: str | None = None,
    host: Host | None = None,
    model: Model | None = None,
    detail: dict[str, Any] | None = None,
    ip_address: str | None = None,
) -> Iterator[None]:
    """Audit a DomainError raised in the block as a refusal, then re-raise it.

    Wrap the service's transaction in this block (not the other way round) so that
    the refusal is written after the transaction rolled back, and survives it.
    """
    try:
        yield
    except DomainError as exc:
        audit_log(
            actor=actor,
            label=label,
            action=action,
            outcome=AuditOutcome.REFUSED,
            host=host,
            model=model,
            detail={**(detail or {}), "code": exc.code, "reason": exc.detail},
            ip_address=ip_address,
        )
        raise


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
