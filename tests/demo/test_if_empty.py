"""`python -m pi_dashboard.demo --if-empty` never touches a fleet with real hosts."""

import subprocess
import sys
from pathlib import Path

import pytest

from pi_dashboard.fleet import services as fleet_services
from tests.support.processes import ROOT, child_env


def heartbeat(host_id: str) -> None:
    agent, _ = fleet_services.agent_issue(name=f"agent-{host_id}", actor="test")
    fleet_services.agent_heartbeat(
        agent=agent,
        beat={
            "hostname": "build-07",
            "host": {"id": host_id, "cpu": "Some CPU", "cores": 8, "totalMemGb": 32},
            "agent_version": "0.1.0",
            "state_dir": "/home/dev/.pi/agent/state",
        },
    )


def run_demo(var: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_dashboard.demo", "--if-empty", "--var", str(var)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.django_db(transaction=True)
def test_a_fleet_with_real_hosts_gets_no_demo(tmp_path: Path) -> None:
    heartbeat("real-host-8c-32g")
    result = run_demo(tmp_path / "demo")
    assert result.returncode == 0, result.stderr
    assert "already has real hosts; no demo" in result.stdout
    assert "Beside the real hosts: `PI_DEMO=always make run`." in result.stdout
    assert not (tmp_path / "demo").exists()


def demo_probes() -> None:
    from pi_dashboard.demo import setup
    from pi_dashboard.probes import services as probe_services

    for model_key, behaviour in setup.ENDPOINTS[:2]:
        probe_services.endpoint_create(
            data=probe_services.EndpointData(
                name=setup.endpoint_name(model_key),
                base_url="http://127.0.0.1:9/v1",
                server_model=behaviour,
                model_key=model_key,
                tags=[setup.TAG],
            )
        )
    probe_services.schedule_save(
        schedule=None,
        data=probe_services.ScheduleData(
            name=setup.SCHEDULE_NAME,
            every_seconds=180,
            selection_kind="tag",
            selection_value=setup.TAG,
        ),
        user=None,
    )


@pytest.mark.django_db(transaction=True)
def test_real_hosts_pause_the_demos_probes(tmp_path: Path) -> None:
    """Issue 12 item 7: the demo's model server is gone, so its schedule must not
    keep probing it."""
    from django_celery_beat.models import PeriodicTask

    from pi_dashboard.probes.models import Endpoint, ProbeSchedule

    demo_probes()
    mine = Endpoint.objects.get(name="demo openai/gpt-5.1")
    heartbeat("real-host-8c-32g")
    result = run_demo(tmp_path / "demo")
    assert result.returncode == 0, result.stderr
    assert "paused its probes: 3 endpoints/schedules" in result.stdout
    assert not Endpoint.objects.filter(is_enabled=True).exists()
    schedule = ProbeSchedule.objects.get()
    assert schedule.is_paused
    assert not PeriodicTask.objects.get(pk=schedule.periodic_task_id).enabled
    mine.refresh_from_db()
    assert mine.base_url == "http://127.0.0.1:9/v1"  # settings kept, only paused


@pytest.mark.django_db(transaction=True)
def test_demo_off_pauses_its_probes(tmp_path: Path) -> None:
    from pi_dashboard.probes.models import Endpoint, ProbeSchedule

    demo_probes()
    result = subprocess.run(
        [sys.executable, "-m", "pi_dashboard.demo", "--pause"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "paused its probes (3 endpoints/schedules)" in result.stdout
    assert not Endpoint.objects.filter(is_enabled=True).exists()
    assert ProbeSchedule.objects.get().is_paused
