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


def test_configuration_changed_by_a_service_call_is_audited(
    make_endpoint: Any,
) -> None:
    """No view in between (a command, the demo, a task): the services audit."""
    endpoint = make_endpoint("native-correct")
    endpoint_id = endpoint.pk
    services.endpoint_set_enabled(endpoint=endpoint, is_enabled=False)
    schedule = services.schedule_save(
        schedule=None, data=services.ScheduleData(name="nightly"), user=None
    )
    services.schedule_set_paused(schedule=schedule, is_paused=True)
    with pytest.raises(Conflict):
        services.schedule_save(
            schedule=None, data=services.ScheduleData(name="nightly"), user=None
        )
    services.schedule_delete(schedule=schedule)
    services.endpoint_delete(endpoint=endpoint)
    rows = [
        (e.action, e.outcome, e.actor_label)
        for e in AuditEntry.objects.filter(action__startswith="probes.").order_by("id")
    ]
    assert rows == [
        ("probes.endpoint.create", AuditOutcome.OK, "system"),
        ("probes.endpoint.disable", AuditOutcome.OK, "system"),
        ("probes.schedule.save", AuditOutcome.OK, "system"),
        ("probes.schedule.pause", AuditOutcome.OK, "system"),
        # Refused, and kept although the save's transaction rolled back.
        ("probes.schedule.save", AuditOutcome.REFUSED, "system"),
        ("probes.schedule.delete", AuditOutcome.OK, "system"),
        ("probes.endpoint.delete", AuditOutcome.OK, "system"),
    ]
    deleted = AuditEntry.objects.get(action="probes.endpoint.delete")
    assert deleted.detail["endpoint"] == endpoint_id
