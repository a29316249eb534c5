"""Starting a probe is audited by the service itself, whoever starts it."""

from typing import Any

import pytest

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.lib.errors import Conflict
from pi_dashboard.probes import services
from pi_dashboard.probes.models import SelectionKind, Trigger

pytestmark = pytest.mark.django_db


def test_a_scheduled_fleet_probe_is_audited_once_as_the_system(
    make_endpoint: Any,
) -> None:
    make_endpoint("native-correct")
    kwargs: dict[str, Any] = {
        "trigger": Trigger.SCHEDULE,
        "selection_kind": SelectionKind.ALL,
    }
    # The beat message redelivered: one fleet probe, so one entry.
    fleet = services.fleet_probe_start(key="schedule:1:msg-1", **kwargs)
    services.fleet_probe_start(key="schedule:1:msg-1", **kwargs)
    entry = AuditEntry.objects.get(action="probes.fleet_probe")
    assert (entry.actor_label, entry.outcome) == ("system", AuditOutcome.OK)
    assert entry.detail["fleet"] == fleet.pk


def test_a_refused_probe_request_is_audited_outside_its_rollback(
    make_endpoint: Any,
) -> None:
    endpoint = make_endpoint("native-correct", is_enabled=False)
    with pytest.raises(Conflict):
        services.probe_request(endpoint=endpoint, user=None, trigger=Trigger.SCHEDULE)
    entry = AuditEntry.objects.get(action="probes.probe")
    assert (entry.outcome, entry.detail["code"]) == (AuditOutcome.REFUSED, "disabled")
    assert entry.detail["endpoint"] == endpoint.pk
