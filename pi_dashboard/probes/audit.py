"""Audit of probe actions: every one, allowed or refused, lands in the audit log."""

import contextlib
from collections.abc import Iterator
from typing import Any

from django.http import HttpRequest

from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.fleet.models import Model


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
    # audit.audit writes the refusal; it reads `info` when the error arrives, so
    # what the block added is in it.
    with audit.refusals_audited(
        actor=getattr(request, "user", None),
        label=audit.actor_label(request),
        action=action,
        model=model,
        detail=info,
        ip_address=audit.client_ip(request),
    ):
        yield info
    audit.audit_record(
        request=request,
        action=action,
        outcome=AuditOutcome.OK,
        model=model,
        detail=info,
    )
