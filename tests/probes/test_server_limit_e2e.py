"""An endpoint's limit on concurrent probes holds across Celery worker processes.

Two worker processes of four threads each probe six endpoints that share one scripted
server; the server counts the completions it answers at once (issue 13 item 8).
"""

from pathlib import Path

import pytest
from django.conf import settings as django_settings

from pi_dashboard.demo.scripted_server import ScriptedServer
from pi_dashboard.probes import semaphore, services
from pi_dashboard.probes.models import FleetProbe, ProbeRun, RunState, Trigger
from tests.probes.conftest import endpoint_for
from tests.support.processes import celery_worker_argv, child_env, running, wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(120),
]


def fleet_max_in_flight(
    server: ScriptedServer, tmp_path: Path, limit: int | None
) -> tuple[int, list[str]]:
    for i in range(6):
        endpoint_for(
            server,
            "native-correct",
            server_model=f"native-correct@300#limit-{limit}-{i}",
            name=f"shared-{limit}-{i}",
            max_concurrent_probes=limit,
        )
    server.max_in_flight = 0
    semaphore.client().flushdb()
    env = child_env(
        REDIS_URL=django_settings.REDIS_URL,
        CELERY_BROKER_URL=django_settings.CELERY_BROKER_URL,
        PI_PROBES_ALLOW_PRIVATE="1",
    )
    argv = celery_worker_argv("-P", "threads", "-c", "4")
    with (
        running([*argv, "-n", "a@%h"], env=env, log=tmp_path / "worker-a.log"),
        running([*argv, "-n", "b@%h"], env=env, log=tmp_path / "worker-b.log"),
    ):
        fleet = services.fleet_probe_start(
            key=None, trigger=Trigger.FLEET, selection_kind="all"
        )
        done = wait_until(
            lambda: FleetProbe.objects.filter(
                pk=fleet.pk, finished_at__isnull=False
            ).exists(),
            timeout=60,
        )
    assert done, (tmp_path / "worker-a.log").read_text()[-3000:]
    runs = ProbeRun.objects.filter(fleet=fleet)
    assert all(r.state == RunState.DONE for r in runs)
    return server.max_in_flight, [r.verdict for r in runs]


def test_a_server_limited_to_one_probe_never_sees_two(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    most, verdicts = fleet_max_in_flight(model_server, tmp_path, 1)
    assert verdicts == ["native"] * 6
    assert most == 1


def test_without_a_limit_the_same_fleet_overlaps(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    # The contrast shows the test above can fail: eight threads, six probes.
    most, _ = fleet_max_in_flight(model_server, tmp_path, None)
    assert most > 1
