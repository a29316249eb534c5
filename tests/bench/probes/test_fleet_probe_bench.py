"""Fleet probe throughput: 500 endpoints, 300 ms per reply, 50 probes in flight.

Ideal wall time is 500 × 0.3 s / 50 = 3 s; the target is within 1.5× of it. Two worker
processes with 25 threads each (I/O-bound work; prefork cannot hold 50 on 2 cores),
the fleet-wide Redis cap at 50. Run on demand:

    .venv/bin/python -m pytest tests/bench/probes -s -p no:cacheprovider
"""

import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from pi_dashboard.probes import semaphore, services
from pi_dashboard.probes.models import Endpoint, FleetProbe, ProbeRun, RunState, Trigger
from pi_dashboard.probes.scripted_server import ScriptedServer
from tests.support.processes import celery_worker_argv, child_env, running, wait_until

ENDPOINTS = 500
LATENCY = 0.3
CONCURRENCY = 50
WORKERS = 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(180)
def test_500_endpoints_within_one_and_a_half_times_ideal(
    tmp_path: Path, settings: Any
) -> None:
    settings.PI_PROBES_ALLOW_PRIVATE = True
    settings.PI_PROBES_MAX_CONCURRENCY = CONCURRENCY
    semaphore.client().flushdb()
    server = ScriptedServer(0, latency=LATENCY).start()
    Endpoint.objects.bulk_create(
        Endpoint(
            name=f"bench-{i}",
            base_url=server.base_url,
            server_model=f"native-correct#{i}",
            model_key=f"bench/model-{i}",
            provider="bench",
            timeout_seconds=10,
            is_streaming=False,
        )
        for i in range(ENDPOINTS)
    )
    env = child_env(
        REDIS_URL=django_settings.REDIS_URL,
        CELERY_BROKER_URL=django_settings.CELERY_BROKER_URL,
        PI_PROBES_ALLOW_PRIVATE="1",
        PI_PROBES_MAX_CONCURRENCY=str(CONCURRENCY),
    )
    per_worker = CONCURRENCY // WORKERS
    argv = [
        celery_worker_argv("-P", "threads", "-c", str(per_worker), "-n", f"bench{i}@%h")
        for i in range(WORKERS)
    ]
    try:
        with (
            running(argv[0], env=env, log=tmp_path / "w0.log"),
            running(argv[1], env=env, log=tmp_path / "w1.log"),
        ):
            assert wait_until(
                lambda: all(
                    "ready" in (tmp_path / f"w{i}.log").read_text()
                    for i in range(WORKERS)
                ),
                timeout=30,
            )
            started = time.monotonic()
            fleet = services.fleet_probe_start(
                key=None, trigger=Trigger.FLEET, selection_kind="all"
            )
            enqueued = time.monotonic() - started
            done = wait_until(
                lambda: FleetProbe.objects.filter(
                    pk=fleet.pk, finished_at__isnull=False
                ).exists(),
                timeout=120,
                interval=0.05,
            )
            wall = time.monotonic() - started
    finally:
        server.stop()
        semaphore.client().flushdb()
    assert done
    ideal = ENDPOINTS * LATENCY / CONCURRENCY
    verdicts = ProbeRun.objects.filter(
        fleet=fleet, state=RunState.DONE, verdict="native"
    ).count()
    print(  # noqa: T201
        f"\nfleet probe bench: {ENDPOINTS} endpoints × {LATENCY * 1000:.0f} ms, "
        f"concurrency {CONCURRENCY} ({WORKERS} workers × {per_worker} threads)\n"
        f"  enqueue {enqueued:.2f} s | wall {wall:.2f} s | ideal {ideal:.2f} s | "
        f"ratio {wall / ideal:.2f} (target ≤ 1.50) | "
        f"native verdicts {verdicts}/{ENDPOINTS}"
    )
    assert verdicts == ENDPOINTS
    assert wall <= 1.5 * ideal, "slower than 1.5x ideal"
