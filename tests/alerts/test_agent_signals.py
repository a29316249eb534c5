"""The agent-reported signals, from data made the way production makes it: the
heartbeat API (store, ingest reports), the command services and the agent's
command API, snapshot ingest (reverted)."""

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from pi_dashboard.alerts import services as alert_services
from pi_dashboard.alerts.models import Alert, AlertRule
from pi_dashboard.control import lifecycle, services
from pi_dashboard.control.models import Command
from tests.alerts.conftest import deliver_queued, evaluate, rule
from tests.control.conftest import AMD, GPT
from tests.control.test_reverts import MODE, removal_applied, send, without_rule
from tests.ingest.support import AgentClient, fingerprint_of

pytestmark = pytest.mark.django_db

UNREADABLE = {
    "status": "unreadable",
    "reason": "invalid JSON at line 3",
    "host_ids": [],
}


@pytest.fixture
def amd(pi_fixtures: Path) -> AgentClient:
    """An agent bound to the AMD host, its store as real pi wrote it."""
    agent = AgentClient.enroll("amd-box")
    assert agent.heartbeat(fingerprint_of(pi_fixtures / AMD)).status_code == 200
    return agent


def heartbeat(agent: AgentClient, pi_fixtures: Path, **reports: Any) -> None:
    fingerprint = fingerprint_of(pi_fixtures / AMD)
    assert agent.heartbeat(fingerprint, **reports).status_code == 200


def alerts_page(user: Any) -> str:
    client = Client()
    client.force_login(user)
    response = client.get("/alerts/")
    assert response.status_code == 200
    return response.content.decode()


def test_an_unreadable_store_fires_an_urgent_alert_and_resolves(
    amd: AgentClient, pi_fixtures: Path, channel: Any, receiver: Any, viewer: Any
) -> None:
    # Asked for non-urgent: this signal is urgent whatever the rule says.
    store_rule = rule("pi store", "store_unreadable", channels=[channel])
    assert store_rule.is_urgent
    heartbeat(amd, pi_fixtures, store={"status": "ok", "host_ids": [AMD]})
    assert not evaluate().fired

    heartbeat(amd, pi_fixtures, store=UNREADABLE)
    assert len(evaluate().fired) == 1
    alert = Alert.objects.get(state="firing")
    assert "invalid JSON at line 3" in alert.label
    assert AMD in alert.label
    deliver_queued()
    [title] = receiver.titles()
    assert title.startswith("[pi-dashboard] URGENT FIRING: pi store: agent amd-box")
    assert "drops every other host's data" in title
    row = alerts_page(viewer).split(f'id="alert-{alert.pk}"')[1].split("</tr>")[0]
    assert 'badge-danger">urgent</span>' in row

    # The agent reads the store again: the alert resolves, with a notice.
    heartbeat(amd, pi_fixtures, store={"status": "ok", "host_ids": [AMD]})
    assert evaluate().resolved == [alert.pk]
    deliver_queued()
    assert receiver.titles()[-1].startswith("[pi-dashboard] RESOLVED: pi store")


def test_an_existing_store_rule_stays_urgent_when_edited() -> None:
    store_rule = rule("pi store", "store_unreadable")
    alert_services.rule_save(
        rule=store_rule, data={"is_urgent": False}, channel_ids=None
    )
    assert AlertRule.objects.get(pk=store_rule.pk).is_urgent


def ingest_report(problem_ago: timedelta, **counts: int) -> dict[str, Any]:
    at = timezone.now() - problem_ago
    return {
        "rejected_lines": counts.get("rejected", 0),
        "quarantined_lines": counts.get("quarantined", 0),
        "spool_dropped": counts.get("dropped", 0),
        "last_problem": "line 7 nested too deep",
        "last_problem_at": at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
    }


def test_ingest_trouble_fires_from_the_heartbeat_report(
    amd: AgentClient, pi_fixtures: Path
) -> None:
    rule("ingest", "ingest_trouble", threshold=3, window_minutes=60)
    heartbeat(amd, pi_fixtures, ingest=ingest_report(timedelta(minutes=10), rejected=1))
    assert not evaluate().fired  # 1 line: under the threshold of 3

    heartbeat(
        amd,
        pi_fixtures,
        ingest=ingest_report(
            timedelta(minutes=5), rejected=2, quarantined=1, dropped=4
        ),
    )
    assert len(evaluate().fired) == 1
    alert = Alert.objects.get(state="firing")
    assert alert.value == 7
    assert "line 7 nested too deep" in alert.label
    assert "2 rejected lines, 1 quarantined lines, 4 spool dropped" in alert.label

    # The last problem is now older than the window: resolved, counters or not.
    heartbeat(
        amd,
        pi_fixtures,
        ingest=ingest_report(timedelta(hours=2), rejected=2, quarantined=1, dropped=4),
    )
    assert evaluate().resolved == [alert.pk]


def test_a_refused_snapshot_alone_is_ingest_trouble(
    amd: AgentClient, pi_fixtures: Path
) -> None:
    rule("ingest", "ingest_trouble")
    report = ingest_report(timedelta(minutes=1))
    report["last_problem"] = "snapshot refused: 413"
    heartbeat(amd, pi_fixtures, ingest=report)
    assert len(evaluate().fired) == 1
    assert Alert.objects.get().value == 1
    # An old agent omits the report: nothing known, nothing firing.
    heartbeat(amd, pi_fixtures)
    assert len(evaluate().resolved) == 1


def _ack(agent: AgentClient, command: Command, body: dict[str, Any]) -> None:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {agent.token}"}
    pulled = Client().get("/api/v1/agent/commands?wait=0", **headers).json()
    assert str(command.pk) in [c["id"] for c in pulled["commands"]]
    response = Client().post(
        f"/api/v1/agent/commands/{command.pk}/ack",
        json.dumps(body),
        content_type="application/json",
        **headers,
    )
    assert response.status_code == 200, response.content


def test_command_trouble_counts_failed_expired_and_reverted(
    amd: AgentClient, pi_fixtures: Path, operator: Any
) -> None:
    shared = json.loads((pi_fixtures / "model-adaptation.json").read_bytes())
    send(amd, shared, seq=1)
    rule("commands", "command_trouble", window_minutes=60)

    # Failed: the agent says pi refused it.
    failed = services.command_create(
        actor=operator, host=AMD, model=GPT, kind="forget_mode", params={"mode": MODE}
    )
    _ack(amd, failed, {"status": "failed", "detail": "pi answered: busy"})
    # Expired: no agent acked it in time.
    expired = services.command_create(
        actor=operator,
        host=AMD,
        model=GPT,
        kind="remove_rule",
        params={"mode": "numberFromString"},
    )
    Command.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert lifecycle.commands_expire(ids=[expired.pk]) == 1
    # Reverted: applied and confirmed 3 h ago, undone by an older copy just now.
    removal = removal_applied(amd, operator)
    send(amd, without_rule(shared), seq=2)
    long_ago = timezone.now() - timedelta(hours=3)
    Command.objects.filter(pk=removal.pk).update(
        finished_at=long_ago, confirmed_at=long_ago
    )
    send(amd, shared, seq=3)
    states = dict(Command.objects.values_list("pk", "state"))
    assert (states[failed.pk], states[expired.pk], states[removal.pk]) == (
        "failed",
        "expired",
        "reverted",
    )
    assert len(evaluate().fired) == 1
    alert = Alert.objects.get()
    assert alert.value == 3
    assert alert.subject == f"host:{AMD}|model:{GPT}"


def test_command_trouble_ignores_an_old_failure_not_yet_past_its_expiry(
    amd: AgentClient, pi_fixtures: Path, operator: Any
) -> None:
    """Failed 3 h ago, its deadline still ahead: outside a 60-min window."""
    shared = json.loads((pi_fixtures / "model-adaptation.json").read_bytes())
    send(amd, shared, seq=1)
    failed = services.command_create(
        actor=operator, host=AMD, model=GPT, kind="forget_mode", params={"mode": MODE}
    )
    _ack(amd, failed, {"status": "failed", "detail": "pi answered: busy"})
    Command.objects.filter(pk=failed.pk).update(
        finished_at=timezone.now() - timedelta(hours=3),
        expires_at=timezone.now() + timedelta(hours=1),
    )
    rule("commands", "command_trouble", window_minutes=60)
    evaluate()
    assert not Alert.objects.exists()
