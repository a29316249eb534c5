"""The audit log. Every control action, allowed or refused, is written here.

`host`, `model` and `command` are typed as any model: every app writes the log, so
the log imports none of them.
"""

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar, cast

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import models
from django.http import HttpRequest

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import DomainError

Actor = AbstractBaseUser | AnonymousUser | None
P = ParamSpec("P")
R = TypeVar("R")


def client_ip(request: HttpRequest) -> str | None:
    return request.META.get("REMOTE_ADDR") or None


def who(request: HttpRequest) -> dict[str, Any]:
    """The `user` and `ip_address` a self-auditing service takes, from a request."""
    user = getattr(request, "user", None)
    return {
        "user": user if isinstance(user, User) and user.is_authenticated else None,
        "ip_address": client_ip(request),
    }


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
        # What a refused request carried is kept, minus what PostgreSQL or an
        # export cannot hold (NUL, lone surrogates; see `jsonsafe.storable`).
        actor_label=jsonsafe.sanitise_text(label[:200]),
        action=action,
        outcome=outcome,
        host_id=_pk(host),
        model_id=_pk(model),
        command_id=_pk(command),
        detail=jsonsafe.storable(detail or {}),
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


@contextlib.contextmanager
def audited(
    *,
    actor: Actor,
    action: str,
    label: str | None = None,
    model: models.Model | None = None,
    ip_address: str | None = None,
    **detail: Any,
) -> Iterator[dict[str, Any]]:
    """Audit the block: ok when it ends, refused (then re-raised) on a DomainError.

    The block may add to the yielded detail (the id of what it created, say). Wrap
    the service's transaction, not the other way round, so a refusal outlives its
    rollback.
    """
    info: dict[str, Any] = dict(detail)
    # refusals_audited reads `info` when the error arrives: what the block added is in.
    with refusals_audited(
        actor=actor,
        label=label,
        action=action,
        model=model,
        detail=info,
        ip_address=ip_address,
    ):
        yield info
    audit_log(
        actor=actor,
        label=label,
        action=action,
        outcome=AuditOutcome.OK,
        model=model,
        detail=info,
        ip_address=ip_address,
    )


def audits(
    action: str | Callable[[dict[str, Any]], str],
    describe: Callable[[dict[str, Any]], dict[str, Any]] = lambda kw: {},
    *,
    result_key: str = "",
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a keyword-only service audit itself, whoever calls it (page, API, task).

    The service takes `user` (the actor; None is the system) and `ip_address`;
    `describe` turns its arguments into the entry's detail, before the call (a
    delete has no pk after it); `result_key` adds what it returned (a row's pk). Put it
    above `@transaction.atomic`, so a refusal is written after the rollback.
    """

    def decorate(service: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(service)
        def audited_service(*args: P.args, **kwargs: P.kwargs) -> R:
            with audited(
                actor=cast(Actor, kwargs.get("user")),
                action=action if isinstance(action, str) else action(kwargs),
                ip_address=cast(str | None, kwargs.get("ip_address")),
                **describe(kwargs),
            ) as info:
                result = service(*args, **kwargs)
                if result_key:
                    info[result_key] = (
                        result.pk if isinstance(result, models.Model) else result
                    )
            return result

        return audited_service

    return decorate


def _pk(row: models.Model | None) -> Any:
    return row.pk if row is not None else None
