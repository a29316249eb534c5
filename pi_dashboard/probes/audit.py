"""Audit of probe actions: every one, allowed or refused, lands in the audit log."""

import contextlib
from collections.abc import Iterator
from typing import Any

from django.http import HttpRequest

from pi_dashboard.control.audit import audit_record
from pi_dashboard.control.models import AuditOutcome
from pi_dashboard.fleet.models import Model
from pi_dashboard.lib.errors import DomainError


@contextlib.contextmanager
def audited(
    request: HttpRequest, action: str, *, model_key: str = "", **detail: Any
) -> Iterator[dict[str, Any]]:
    """Audit the block: ok when it ends, refused (then re-raised) on a DomainError.

    The block may add to the yielded detail (e.g. the id of what it created). Wrap the
    service call, not the other way round, so a refusal outlives its rollback.
    """
    info: dict[str, Any] = dict(detail)
    model = Model.objects.filter(key=model_key).first() if model_key else None
    try:
        yield info
    except DomainError as exc:
        info.update(code=exc.code, reason=exc.detail)
        audit_record(
            request=request,
            action=action,
            outcome=AuditOutcome.REFUSED,
            model=model,
            detail=info,
        )
        raise
    audit_record(
        request=request,
        action=action,
        outcome=AuditOutcome.OK,
        model=model,
        detail=info,
    )
