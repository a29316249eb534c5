"""/api/v1/alert-rules and /api/v1/alerts: statuses, validation, roles."""

from datetime import timedelta

import pytest
from django.test import Client

from pi_dashboard.alerts.models import AlertRule
from tests.alerts.conftest import evaluate, pair

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


RULE = {"name": "down", "signal": "agent_down", "fire_after": 2, "resolve_after": 1}


def test_rule_crud(operator) -> None:
    client = logged_in(operator)
    created = client.post("/api/v1/alert-rules", RULE, content_type="application/json")
    assert created.status_code == 201
    rule_id = created.json()["id"]
    assert created.json()["fire_after"] == 2
    patched = client.patch(
        f"/api/v1/alert-rules/{rule_id}",
        {"threshold": 2},
        content_type="application/json",
    )
    assert patched.status_code == 200
    assert patched.json()["threshold"] == 2
    assert patched.json()["fire_after"] == 2
    names = [r["name"] for r in client.get("/api/v1/alert-rules").json()]
    assert "down" in names
    assert client.delete(f"/api/v1/alert-rules/{rule_id}").status_code == 204
    missing = client.get(f"/api/v1/alert-rules/{rule_id}")
    assert missing.status_code == 404
    assert missing.json()["code"] == "unknown_rule"


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"signal": "weather"}, "invalid_signal"),
        ({"scope_kind": "galaxy"}, "invalid_scope"),
        ({"scope_kind": "host"}, "invalid_scope"),
        ({"window_minutes": 0}, "invalid_window"),
        ({"fire_after": 0}, "invalid_hysteresis"),
        ({"channel_ids": [999999]}, "unknown_channel"),
    ],
)
def test_bad_rules_get_a_clear_4xx(operator, change, code) -> None:
    response = logged_in(operator).post(
        "/api/v1/alert-rules", {**RULE, **change}, content_type="application/json"
    )
    assert 400 <= response.status_code < 500
    assert response.json()["code"] == code


def test_duplicate_name_is_409(operator) -> None:
    client = logged_in(operator)
    client.post("/api/v1/alert-rules", RULE, content_type="application/json")
    again = client.post("/api/v1/alert-rules", RULE, content_type="application/json")
    assert again.status_code == 409


def test_viewer_reads_but_cannot_write(viewer) -> None:
    client = logged_in(viewer)
    assert client.get("/api/v1/alert-rules").status_code == 200
    refused = client.post("/api/v1/alert-rules", RULE, content_type="application/json")
    assert refused.status_code == 403


def test_alerts_list_and_acknowledge(operator) -> None:
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    AlertRule.objects.create(name="down", signal="agent_down")
    evaluate()
    client = logged_in(operator)
    firing = client.get("/api/v1/alerts?state=firing").json()
    assert [a["subject"] for a in firing] == ["host:h-gone"]
    acked = client.post(f"/api/v1/alerts/{firing[0]['id']}/ack")
    assert acked.status_code == 200
    assert acked.json()["acknowledged_by"] == operator.username
    assert client.get("/api/v1/alerts?state=nope").json()["code"] == "invalid_state"
    assert client.post("/api/v1/alerts/999999/ack").status_code == 404


def test_alert_changes_made_by_service_calls_are_audited(db: None) -> None:
    """The alerts services audit themselves: no view or API in between."""
    from pi_dashboard.alerts import services as alert_services
    from pi_dashboard.audit.models import AuditEntry, AuditOutcome
    from pi_dashboard.lib.errors import DomainError

    channel = alert_services.channel_save(
        channel=None, name="ops", url="json://127.0.0.1:9/hook", is_enabled=True
    )
    with pytest.raises(DomainError):
        alert_services.channel_save(
            channel=None, name="ops", url="json://127.0.0.1:9/x", is_enabled=True
        )
    channel_id = channel.pk
    alert_services.channel_delete(channel=channel)
    rows = [
        (e.action, e.outcome, e.detail.get("code", ""))
        for e in AuditEntry.objects.filter(action__startswith="alerts.").order_by("id")
    ]
    assert rows == [
        ("alerts.channel.save", AuditOutcome.OK, ""),
        ("alerts.channel.save", AuditOutcome.REFUSED, "duplicate_name"),
        ("alerts.channel.delete", AuditOutcome.OK, ""),
    ]
    created = AuditEntry.objects.filter(action="alerts.channel.save").earliest("id")
    assert created.detail["channel"] == channel_id


def test_a_tag_on_an_unknown_host_is_refused_and_audited(db: None) -> None:
    from pi_dashboard.alerts import services as alert_services
    from pi_dashboard.audit.models import AuditEntry, AuditOutcome
    from pi_dashboard.lib.errors import DomainError

    with pytest.raises(DomainError, match="No host"):
        alert_services.host_tag_add(host="no-such-host", tag="gpu")
    entry = AuditEntry.objects.get(action="alerts.tag.add")
    assert (entry.outcome, entry.detail["code"]) == (
        AuditOutcome.REFUSED,
        "unknown_host",
    )
    assert entry.detail["host"] == "no-such-host"
