"""End to end with real processes: gunicorn, a Celery worker, Celery beat evaluating
every second, a real agent, and a loopback HTTP receiver for the notifications.

An agent ships fresh execution failures: the failure-rate rule fires from the
ingested lines. The agent stops: its host goes late, then down; the down rule fires
once (hysteresis 2) and its notification reaches the receiver; a silenced twin rule
fires too, but nothing of it is delivered. The agent returns: a resolved notice.
"""

import json
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from pi_dashboard.agent.config import config_write
from pi_dashboard.alerts import liveness, services
from pi_dashboard.alerts.models import Alert, Notification
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Host
from tests.agent.conftest import AMD, seed_state_dir
from tests.agent.e2e_support import Server, agent_argv, free_port, pi_append
from tests.alerts.conftest import rule
from tests.alerts.receivers import HttpReceiver, http_receiver
from tests.support.processes import celery_worker_argv, child_env, running, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

GRACE = {"PI_LIVENESS_LATE_SECONDS": "3", "PI_LIVENESS_DOWN_SECONDS": "6"}
FAILURES = 4


def beat_argv() -> list[str]:
    import sys

    return [
        sys.executable, "-m", "celery", "-A", "pi_dashboard", "beat",
        "--loglevel", "INFO", "--max-interval", "1", "--pidfile=",
    ]  # fmt: skip


def evaluate_every_second() -> None:
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    every, _ = IntervalSchedule.objects.get_or_create(every=1, period="seconds")
    # Created by a data migration, which an earlier transactional test's flush
    # removes: make sure it is there, not only that it would be changed.
    PeriodicTask.objects.update_or_create(
        name="alerts.evaluate",
        defaults={
            "task": "pi_dashboard.alerts.tasks.alerts_evaluate",
            "interval": every,
            "enabled": True,
        },
    )


def fresh_failures(template: Path, count: int) -> list[bytes]:
    """Execution failures stamped now (the fixture's are months old)."""
    first = next(
        json.loads(line)
        for line in template.read_text().splitlines()
        if '"tool_execution_failure"' in line and '"phase":"execution"' in line
    )
    now = datetime.now(UTC)
    out = []
    for i in range(count):
        record = {**first, "recordId": f"{first['sessionId']}:e2e-{i}"}
        record["ts"] = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{i:03d}Z"
        out.append(json.dumps(record, separators=(",", ":")).encode())
    return out


def titles(receiver: HttpReceiver, prefix: str) -> list[str]:
    return [t for t in receiver.titles() if t.startswith(prefix)]


def host_state() -> str:
    host = Host.objects.filter(pi_id=AMD).first()
    if host is None:
        return "missing"
    return liveness.liveness_of(
        host.last_contact_at, liveness.Grace(3, 6), timezone.now()
    ).status


def readyz(server: Server) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(f"{server.url}/readyz", timeout=5) as r:  # noqa: S310
            return dict(json.loads(r.read()))
    except urllib.error.HTTPError as exc:
        return dict(json.loads(exc.read()))


def test_down_fires_once_notifies_silence_holds_and_resolves(
    transactional_db: None, tmp_path: Path, pi_fixtures: Path
) -> None:
    state = seed_state_dir(pi_fixtures, AMD, tmp_path / "pi")
    _agent, token = fleet_services.agent_issue(name="e2e-alerts", actor="test")
    env = child_env(**GRACE)
    server = Server(free_port(), tmp_path / "server.log")
    fp = json.loads((pi_fixtures / AMD / "model-adaptation.json").read_text())
    config = tmp_path / "agent.json"
    config_write(
        config,
        {
            "server": server.url,
            "token": token,
            "state_dir": str(state),
            "data_dir": str(tmp_path / "agent-data"),
            "host_override": next(iter(fp["hosts"][AMD].values()))["host"],
            "scan_interval": 0.2,
            "heartbeat_interval": 1,
        },
    )
    evaluate_every_second()
    agent_log = tmp_path / "agent.log"
    with http_receiver() as receiver:
        channel = services.channel_save(
            channel=None, name="hook", url=receiver.url(), is_enabled=True
        )
        rule("host down", "agent_down", fire_after=2, channels=[channel])
        quiet = rule("host down (silenced)", "agent_down", channels=[channel])
        services.silence_create(
            rule=quiet, scope_kind="fleet", scope_value="",
            ends_at=timezone.now() + timezone.timedelta(hours=1),
            reason="e2e", actor="test",
        )  # fmt: skip
        rule(
            "exec failures", "failure_rate", param="execution",
            threshold=FAILURES, channels=[channel],
        )  # fmt: skip
        server.start()
        try:
            with (
                running(celery_worker_argv("-P", "threads", "-c", "4", "--purge"),
                        env=env, log=tmp_path / "worker.log"),
                running(beat_argv(), env=env, log=tmp_path / "beat.log"),
            ):  # fmt: skip
                _journey(server, config, state, env, agent_log, receiver, tmp_path)
        finally:
            server.stop()


def _journey(  # type: ignore[no-untyped-def]
    server, config, state, env, agent_log, receiver, tmp_path
) -> None:
    logs = f"see {tmp_path}/*.log"
    with running(agent_argv(config), env=env, log=agent_log):
        assert wait_until(lambda: host_state() == "up", timeout=40), logs
        pi_append(
            state / "tool-recovery-events.jsonl",
            fresh_failures(state / "tool-recovery-events.jsonl", FAILURES),
        )
        assert wait_until(
            lambda: titles(receiver, "[pi-dashboard] FIRING: exec failures"),
            timeout=60,
        ), logs
        assert readyz(server)["status"] == "ready", readyz(server)
    # The agent is gone: late, then down, then the rule fires (2 evaluations).
    assert wait_until(lambda: host_state() == "late", timeout=20), logs
    assert wait_until(
        lambda: titles(receiver, "[pi-dashboard] FIRING: host down:"), timeout=40
    ), logs
    time.sleep(3)  # more evaluations while down: no second notification
    assert len(titles(receiver, "[pi-dashboard] FIRING: host down:")) == 1
    down = Alert.objects.get(rule__name="host down")
    assert down.state == "firing"
    assert down.label.startswith(f"{AMD} down since ")
    silenced = Alert.objects.get(rule__name="host down (silenced)")
    assert silenced.state == "firing"  # the silence holds delivery, not state
    assert set(
        Notification.objects.filter(alert=silenced).values_list("state", flat=True)
    ) == {"suppressed"}
    assert not titles(receiver, "[pi-dashboard] FIRING: host down (silenced)")
    # The agent returns: resolved, and the notice arrives.
    with running(agent_argv(config), env=env, log=agent_log):
        assert wait_until(
            lambda: titles(receiver, "[pi-dashboard] RESOLVED: host down:"),
            timeout=40,
        ), logs
    down.refresh_from_db()
    assert down.state == "resolved"
    body = next(
        b
        for b in receiver.bodies
        if b["title"].startswith("[pi-dashboard] FIRING: host down:")
    )
    assert f"/hosts/{AMD}/" in body["message"]
