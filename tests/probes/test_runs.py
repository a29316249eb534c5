"""Idempotency, leases and fleet fan-out, through the services the tasks call."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from pi_dashboard.accounts.models import Role
from pi_dashboard.probes import algorithm, services
from pi_dashboard.probes.models import (
    Drift,
    FleetProbe,
    ProbeRun,
    RunState,
    SelectionKind,
    Trigger,
)
from tests.conftest import make_user
from tests.probes.conftest import logged_in

pytestmark = pytest.mark.django_db


def new_run(endpoint: Any, slot: str = "s") -> ProbeRun:
    return ProbeRun.objects.create(endpoint=endpoint, slot=slot, trigger=Trigger.API)


def test_executing_twice_gives_one_result(make_endpoint: Any) -> None:
    run = new_run(make_endpoint("text-tool-tag"))
    assert (
        services.probe_run_execute(run_id=run.pk, final_attempt=False)
        == "text-protocol"
    )
    assert (
        services.probe_run_execute(run_id=run.pk, final_attempt=False)
        == "nothing to do"
    )
    run.refresh_from_db()
    assert run.attempts == 1
    assert run.exchanges.count() == 4


def test_second_claim_fails_until_the_lease_expires(make_endpoint: Any) -> None:
    run = new_run(make_endpoint("native-correct"))
    first = services.run_claim(run=run)
    assert first is not None
    assert services.run_claim(run=run) is None
    ProbeRun.objects.filter(pk=run.pk).update(
        lease_until=timezone.now() - timedelta(seconds=1)
    )
    second = services.run_claim(run=run)
    assert second is not None
    assert second != first
    # The first worker comes back late: its result is discarded, nothing half-written.
    outcome = algorithm.ProbeOutcome(
        verdict="native", native_grade="task", tool_probe={"x": 1}
    )
    assert services.run_finish(run_id=run.pk, token=first, outcome=outcome) is False
    run.refresh_from_db()
    assert run.state == RunState.RUNNING
    assert run.tool_probe is None
    assert services.run_finish(run_id=run.pk, token=second, outcome=outcome) is True


def test_abandoned_run_is_resent_by_the_sweep_and_completes(make_endpoint: Any) -> None:
    run = new_run(make_endpoint("native-correct"))
    assert services.run_claim(run=run)  # a worker claimed it, then died
    ProbeRun.objects.filter(pk=run.pk).update(
        lease_until=timezone.now() - timedelta(seconds=1)
    )
    sent: list[int] = []
    from pi_dashboard.probes.services import runs

    original = runs.run_enqueue
    runs.run_enqueue = lambda r, countdown=0: sent.append(r.pk)  # type: ignore[assignment]
    try:
        assert services.runs_sweep() == {"resent": 1, "gave_up": 0}
    finally:
        runs.run_enqueue = original
    assert sent == [run.pk]
    assert services.probe_run_execute(run_id=run.pk, final_attempt=False) == "native"
    run.refresh_from_db()
    assert run.state == RunState.DONE
    assert run.attempts == 2


def test_sweep_gives_up_after_max_attempts(make_endpoint: Any) -> None:
    run = new_run(make_endpoint("native-correct"))
    ProbeRun.objects.filter(pk=run.pk).update(
        state=RunState.RUNNING,
        attempts=4,
        lease_until=timezone.now() - timedelta(seconds=1),
    )
    assert services.runs_sweep() == {"resent": 0, "gave_up": 1}
    run.refresh_from_db()
    assert run.state == RunState.FAILED
    assert "Gave up after 4 attempts" in run.error


def test_unreachable_endpoint_retries_then_fails_without_verdict(
    make_endpoint: Any,
) -> None:
    endpoint = make_endpoint("native-correct", base_url="http://127.0.0.1:9/v1")
    run = new_run(endpoint)
    from pi_dashboard.probes.chat import Unreachable

    with pytest.raises(Unreachable):
        services.probe_run_execute(run_id=run.pk, final_attempt=False)
    run.refresh_from_db()
    assert run.state == RunState.PENDING  # released for the retry
    assert (
        services.probe_run_execute(run_id=run.pk, final_attempt=True)
        == "failed: unreachable"
    )
    run.refresh_from_db()
    assert run.state == RunState.FAILED
    assert "Cannot connect" in run.error
    assert run.verdict == ""
    assert not Drift.objects.exists()


def test_fleet_start_is_idempotent_and_summarises_changes(
    make_endpoint: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # A model id of its own: the server counts probes per model id.
    a = make_endpoint("drifting", tags=["blue"], server_model="drifting#fleet-test")
    b = make_endpoint("native-correct", tags=["blue"])
    make_endpoint("empty", tags=["red"])
    kwargs: dict[str, Any] = {
        "trigger": Trigger.FLEET,
        "selection_kind": SelectionKind.TAG,
        "selection_value": "blue",
    }
    for key in ("k1", "k2"):
        fleet = services.fleet_probe_start(key=key, **kwargs)
        assert services.fleet_probe_start(key=key, **kwargs).pk == fleet.pk
        for run in fleet.runs.all():
            with django_capture_on_commit_callbacks(execute=True):
                services.probe_run_execute(run_id=run.pk, final_attempt=True)
        fleet.refresh_from_db()
        assert fleet.endpoint_count == 2
        assert fleet.finished_at is not None
    assert FleetProbe.objects.count() == 2
    assert ProbeRun.objects.filter(fleet=fleet).count() == 2
    changed = fleet.summary["changed"]
    assert [c["endpoint"] for c in changed] == [a.name]
    assert changed[0]["before"]["verdict"] == "native"
    assert changed[0]["after"]["verdict"] == "text-protocol"
    assert fleet.summary["counts"] == {"native": 1, "text-protocol": 1}
    assert b.runs.filter(state=RunState.DONE).count() == 2
    # The page says what changed, read from the drift rows in our spelling.
    viewer = make_user("fleet-viewer", Role.VIEWER)
    body = logged_in(viewer).get(f"/probes/fleet/{fleet.pk}/").content.decode()
    assert f"({a.model_key}): native/task → text-protocol/absent (tool-tag)" in body


def test_manual_probe_is_not_doubled_by_a_second_click(
    make_endpoint: Any, operator: Any
) -> None:
    endpoint = make_endpoint("native-correct")
    first = services.probe_request(
        endpoint=endpoint, user=operator, trigger=Trigger.MANUAL
    )
    again = services.probe_request(
        endpoint=endpoint, user=operator, trigger=Trigger.MANUAL
    )
    assert first.pk == again.pk


def test_jitter_is_capped_to_a_tenth_of_the_expected_wall_time(settings: Any) -> None:
    settings.PI_PROBES_MAX_CONCURRENCY = 50
    jitter = services.fleet.fleet_jitter_seconds
    # 500 endpoints in rounds of 50, about a second each: 10 s expected, 1 s of jitter.
    assert jitter(10, endpoint_count=500, schedule=None) == pytest.approx(1.0)
    assert jitter(0.5, endpoint_count=500, schedule=None) == 0.5
    assert jitter(10, endpoint_count=0, schedule=None) == 0
    assert jitter(0, endpoint_count=500, schedule=None) == 0
