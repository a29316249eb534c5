"""The audit log. Every control action, allowed or refused, is written here.

`host`, `model` and `command` are typed as any model: every app writes the log, so
the log imports none of them.
"""

import contextlib
from collections.abc import Iterator
from typing import Any, cast

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import models
from django.http import HttpRequest

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
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
    host: models.Model | None = None,
    model: models.Model | None = None,
    command: models.Model | None = None,
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
    host: models.Model | None = None,
    model: models.Model | None = None,
    command: models.Model | None = None,
    detail: dict[str, Any] | None = None,
    ip_address: str | None = None,
) -> AuditEntry:
    """Audit an action done by `actor` (a user; None for the system or an agent)."""
    user = cast(User, actor) if actor is not None and actor.is_authenticated else None
    if label is None:
        label = str(user.get_username()) if user is not None else "system"
    return AuditEntry.objects.create(
        actor=user,
        actor_label=label[:200],
        action=action,
        outcome=outcome,
        host_id=_pk(host),
        model_id=_pk(model),
        command_id=_pk(command),
        detail=detail or {},
        ip_address=ip_address,
    )


@contextlib.contextmanager
def refusals_audited(
    *,
    actor: Actor,
    action: str,
    label: str | None = None,
    host: models.Model | None = None,
    model: models.Model | None = None,
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


def _pk(row: models.Model | None) -> Any:
    return row.pk if row is not None else None
