"""Drift: a changed verdict, grade or variant is recorded."""

from typing import Any

import pytest

from pi_dashboard.probes import services
from pi_dashboard.probes.models import Drift, ProbeRun, Trigger

pytestmark = pytest.mark.django_db


def probe(endpoint: Any, slot: str) -> None:
    run = ProbeRun.objects.create(endpoint=endpoint, slot=slot, trigger=Trigger.API)
    services.probe_run_execute(run_id=run.pk, final_attempt=True)


def test_verdict_change_is_drift(make_endpoint: Any) -> None:
    """Recorded here; announced by the alerts app's drift rule (tests/alerts)."""
    endpoint = make_endpoint("drifting", server_model="drifting#drift-test")
    probe(endpoint, "one")
    assert not Drift.objects.exists()  # a first verdict is not drift
    probe(endpoint, "two")
    probe(endpoint, "three")
    drifts = list(Drift.objects.order_by("at"))
    assert [d.summary for d in drifts] == [
        "native/task → text-protocol/absent",
        "text-protocol/absent → native/task",
    ]
    assert drifts[0].variant == "tool-tag"
