"""Audit of probe actions: every one, allowed or refused, lands in the audit log.

Starting probes (`probe_request`, `fleet_probe_start`) audits itself in the
services, whoever starts it (page, API, task, command). The configuration changes
(endpoints, channels, schedules) are still audited here, around the service call.
"""

import contextlib
from collections.abc import Iterator
from typing import Any

from django.http import HttpRequest

from pi_dashboard.audit import audit
from pi_dashboard.fleet.models import Model


def audit_model(model_key: str) -> Model | None:
    """The fleet's model a probe concerns, for the audit entry (None when unknown)."""
    return Model.objects.filter(key=model_key).first() if model_key else None


@contextlib.contextmanager
def audited(
    request: HttpRequest, action: str, *, model_key: str = "", **detail: Any
) -> Iterator[dict[str, Any]]:
    """Audit the block as done by the request's user (see `audit.audited`)."""
    with audit.audited(
        actor=getattr(request, "user", None),
        label=audit.actor_label(request),
        action=action,
        model=audit_model(model_key),
        ip_address=audit.client_ip(request),
        **detail,
    ) as info:
        yield info
