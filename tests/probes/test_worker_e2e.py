"""A real Celery worker (and beat) on real Redis probes the scripted server."""

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from pi_dashboard.probes import semaphore, services
from pi_dashboard.probes.models import (
    TERMINAL_RUN_STATES,
    FleetProbe,
    ProbeRun,
    RunState,
    ScheduleKind,
    SelectionKind,
    Trigger,
)
from tests.probes.conftest import endpoint_for
from tests.support.processes import celery_worker_argv, child_env, running, wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(120),
]


def worker_env(**extra: str) -> dict[str, str]:
    return child_env(
        REDIS_URL=django_settings.REDIS_URL,
        CELERY_BROKER_URL=django_settings.CELERY_BROKER_URL,
        PI_PROBES_ALLOW_PRIVATE="1",
        PI_PROBES_LEASE_GRACE_SECONDS="1",
        **extra,
    )


@pytest.fixture(autouse=True)
def _clean_broker() -> Any:
    # Redis db of this test run only: drop messages left by earlier runs.
    semaphore.client().flushdb()
    yield
    semaphore.client().flushdb()


def test_scheduled_fleet_probe_end_to_end(model_server: Any, tmp_path: Path) -> None:
    behaviours = {
        "native-correct": "native",
        "text-fenced-json": "text-protocol",
        "native-echo-only": "none",
        "garbage": "none",
    }
    for i, b in enumerate(behaviours):
        endpoint_for(model_server, b, stream=bool(i % 2), tags=["e2e"])
    schedule = services.schedule_save(
        schedule=None,
        data=services.ScheduleData(
            name="every 2s",
            kind=ScheduleKind.INTERVAL,
            every_seconds=2,
            selection_kind=SelectionKind.TAG,
            selection_value="e2e",
            jitter_seconds=1,
        ),
        user=None,
    )
    beat = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "pi_dashboard",
        "beat",
        "--loglevel",
        "INFO",
        "-s",
        str(tmp_path / "beat-schedule"),
        "--max-interval",
        "1",
    ]
    env = worker_env()
    with (
        running(
            celery_worker_argv("-P", "threads", "-c", "8"),
            env=env,
            log=tmp_path / "worker.log",
        ),
        running(beat, env=env, log=tmp_path / "beat.log"),
    ):
        done = wait_until(
            lambda: FleetProbe.objects.filter(
                schedule=schedule, finished_at__isnull=False
            ).exists(),
            timeout=60,
        )
        services.schedule_set_paused(schedule=schedule, is_paused=True)
    assert done, (tmp_path / "worker.log").read_text()[-3000:]
    fleet = FleetProbe.objects.filter(
        schedule=schedule, finished_at__isnull=False
    ).earliest("created_at")
    runs = {r.endpoint.server_model: r for r in fleet.runs.select_related("endpoint")}
    assert {m: r.verdict for m, r in runs.items()} == behaviours
    assert all(r.state == RunState.DONE for r in runs.values())
    assert fleet.trigger == Trigger.SCHEDULE
    assert fleet.endpoint_count == 4
    assert fleet.summary["counts"] == {"native": 1, "text-protocol": 1, "none": 2}


def test_killed_worker_still_ends_with_one_result_per_endpoint(
    model_server: Any, tmp_path: Path, settings: Any
) -> None:
    settings.PI_PROBES_STALE_PENDING_SECONDS = 1
    # Seven completions of 0.3 s each: a probe is in flight for about two seconds.
    endpoints = [
        endpoint_for(
            model_server,
            "text-function-xml",
            server_model=f"text-function-xml@300#{i}",
            name=f"slowish-{i}",
            timeout_seconds=1.5,
        )
        for i in range(6)
    ]
    fleet = services.fleet_probe_start(
        key=None, trigger=Trigger.FLEET, selection_kind="all"
    )
    log_a, log_b = tmp_path / "worker-a.log", tmp_path / "worker-b.log"
    with running(
        celery_worker_argv("-P", "threads", "-c", "3"), env=worker_env(), log=log_a
    ) as a:
        in_flight = wait_until(
            lambda: (
                ProbeRun.objects.filter(fleet=fleet, state=RunState.RUNNING).count()
                >= 2
            ),
            timeout=30,
        )
        assert in_flight, log_a.read_text()[-3000:]
        time.sleep(0.8)
        os.killpg(a.pid, signal.SIGKILL)
        a.wait()
    killed_mid_probe = ProbeRun.objects.filter(
        fleet=fleet, state=RunState.RUNNING
    ).count()
    assert killed_mid_probe >= 1
    with running(
        celery_worker_argv("-P", "threads", "-c", "6"), env=worker_env(), log=log_b
    ):

        def all_done() -> bool:
            services.runs_sweep()  # what beat runs every minute, sooner
            return (
                not ProbeRun.objects.filter(fleet=fleet)
                .exclude(state__in=TERMINAL_RUN_STATES)
                .exists()
            )

        finished = wait_until(all_done, timeout=60, interval=1.0)
    assert finished, log_b.read_text()[-3000:]
    runs = list(ProbeRun.objects.filter(fleet=fleet))
    assert sorted(r.endpoint_id for r in runs) == sorted(e.pk for e in endpoints)
    for run in runs:
        assert run.state == RunState.DONE
        assert run.variant == "function-xml"
        assert (
            run.exchanges.count() == run.completions == 7
        )  # no half result left behind
    assert max(r.attempts for r in runs) >= 2  # a probe was taken over after the kill
    fleet.refresh_from_db()
    assert fleet.finished_at is not None
