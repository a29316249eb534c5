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
    assert not (tmp_path / "demo").exists()
