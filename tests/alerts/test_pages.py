"""Alerts pages (rules, channels with "send test", silences, maintenance, alerts
with acknowledge) and the overview's attention header."""

from datetime import timedelta

import pytest
from django.test import Client

from pi_dashboard.alerts.models import (
    Alert,
    AlertRule,
    Channel,
    MaintenanceWindow,
    Silence,
)
from pi_dashboard.fleet.models import HostModel
from tests.alerts.conftest import evaluate, pair
from tests.alerts.receivers import smtp_receiver

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_operator_creates_a_rule_and_a_channel_then_sends_a_test_email(
    operator,
) -> None:
    client = logged_in(operator)
    with smtp_receiver() as smtp:
        made = client.post(
            "/alerts/channels/new/",
            {"name": "ops-mail", "url": smtp.url(), "is_enabled": "on"},
        )
        assert made.status_code == 302
        channel = Channel.objects.get(name="ops-mail")
        listing = client.get("/alerts/channels/").content.decode()
        assert "mailto://127.0.0.1/…" in listing
        assert smtp.url() not in listing  # the URL may hold credentials
        client.post(f"/alerts/channels/{channel.pk}/test/")
        assert [m["Subject"] for m in smtp.messages] == [
            "[pi-dashboard] test notification"
        ]
        assert smtp.messages[0]["To"] == "ops@example.test"
    rule = client.post(
        "/alerts/rules/new/",
        {
            "name": "exec failures",
            "signal": "failure_rate",
            "scope_kind": "provider",
            "scope_value": "openai",
            "param": "execution",
            "threshold": "5",
            "window_minutes": "30",
            "fire_after": "2",
            "resolve_after": "3",
            "remind_minutes": "60",
            "is_enabled": "on",
            "channels": [channel.pk],
        },
    )
    assert rule.status_code == 302
    page = client.get("/alerts/rules/").content.decode()
    assert "exec failures" in page
    assert "2 / 3" in page
    assert "ops-mail" in page


def test_a_broken_channel_shows_its_failure(operator) -> None:
    client = logged_in(operator)
    client.post(
        "/alerts/channels/new/",
        {"name": "dead", "url": "json://127.0.0.1:1/x", "is_enabled": "on"},
    )
    channel = Channel.objects.get()
    client.post(f"/alerts/channels/{channel.pk}/test/")
    page = client.get("/alerts/channels/").content.decode()
    assert "A Connection error occurred sending JSON notification" in page


def test_a_bad_url_or_rule_is_a_400_with_the_reason(operator) -> None:
    client = logged_in(operator)
    bad = client.post("/alerts/channels/new/", {"name": "x", "url": "nope"})
    assert bad.status_code == 400
    assert "Apprise does not understand this URL" in bad.content.decode()
    rule = client.post(
        "/alerts/rules/new/",
        {
            "name": "r",
            "signal": "agent_down",
            "scope_kind": "host",
            "threshold": "1",
            "window_minutes": "5",
            "fire_after": "1",
            "resolve_after": "1",
            "remind_minutes": "0",
        },
    )
    assert rule.status_code == 400
    assert "A host scope needs a value." in rule.content.decode()


def test_viewers_see_but_cannot_change(viewer) -> None:
    client = logged_in(viewer)
    assert client.get("/alerts/").status_code == 200
    assert client.get("/alerts/rules/new/").status_code == 403
    assert (
        client.post(
            "/alerts/silences/", {"scope_kind": "fleet", "hours": "1"}
        ).status_code
        == 403
    )
    assert not Silence.objects.exists()


def test_silences_and_maintenance_pages(operator) -> None:
    client = logged_in(operator)
    made = client.post(
        "/alerts/silences/",
        {
            "scope_kind": "host",
            "scope_value": "h1",
            "hours": "2",
            "reason": "rack move",
        },
    )
    assert made.status_code == 302
    silence = Silence.objects.get()
    assert silence.created_by == operator.username
    client.post(
        "/alerts/maintenance/",
        {
            "name": "patch tuesday",
            "scope_kind": "fleet",
            "weekdays": "2",
            "start_time": "02:00",
            "duration_minutes": "90",
        },
    )
    assert MaintenanceWindow.objects.get().weekdays == [2]
    page = client.get("/alerts/silences/").content.decode()
    assert "rack move" in page
    assert "weekdays 2 at 02:00 for 90 min" in page
    client.post(f"/alerts/silences/{silence.pk}/end/")
    silence.refresh_from_db()
    assert "End now" not in client.get("/alerts/silences/").content.decode()


def test_alerts_page_firing_history_ack_and_evidence(operator) -> None:
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    AlertRule.objects.create(name="host down", signal="agent_down")
    evaluate()
    client = logged_in(operator)
    page = client.get("/alerts/").content.decode()
    firing = page.split('id="firing"', 1)[1].split("</table>", 1)[0]
    assert "h-gone down since" in firing
    assert 'href="/hosts/h-gone/"' in firing
    alert = Alert.objects.get()
    client.post(f"/alerts/{alert.pk}/ack/")
    page = client.get("/alerts/").content.decode()
    assert f"by {operator.username}" in page
    history = page.split('id="history"', 1)[1].split("</table>", 1)[0]
    assert "acknowledged by " + operator.username in history
    assert "fired" in history


def test_overview_opens_with_what_needs_attention(viewer) -> None:
    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=1))
    hm = pair("h-up", "anthropic/claude")
    HostModel.objects.filter(pk=hm.pk).update(probe_status="none")
    AlertRule.objects.create(name="host down", signal="agent_down", is_urgent=True)
    evaluate()
    page = logged_in(viewer).get("/").content.decode()
    head = page.split('id="attention"', 1)[1].split("</section>", 1)[0]
    assert page.index('id="attention"') < page.index('id="fleet-matrix"')
    assert "1 host down" in head
    assert 'href="/hosts/h-gone/"' in head
    assert "1 alert firing" in head
    assert "host down: h-gone down since" in head
    assert "1 pair degraded" in head
    assert 'href="/hosts/h-up/models/anthropic/claude/"' in head


def test_overview_is_calm_when_nothing_is_wrong(viewer) -> None:
    pair("h-up", "openai/gpt-5.1")
    page = logged_in(viewer).get("/").content.decode()
    assert 'data-attention="calm"' in page


def test_operator_sets_grace_per_tag_and_host_from_the_page(operator) -> None:
    pair("h-sat", "openai/gpt-5.1", contact_ago=timedelta(minutes=20))
    client = logged_in(operator)
    client.post("/alerts/tags/", {"host": "h-sat", "tag": "satellite"})
    client.post(
        "/alerts/grace/",
        {"tag": "satellite", "late_seconds": "1800", "down_seconds": "3600"},
    )
    hosts = client.get("/hosts/").content.decode()
    assert 'data-liveness="up"' in hosts  # 20 min is within the tag's grace
    page = client.get("/alerts/silences/").content.decode()
    assert "tag satellite" in page
    assert "1800 s" in page
    unknown = client.post(
        "/alerts/grace/",
        {"host": "nope", "late_seconds": "10", "down_seconds": "20"},
        follow=True,
    )
    assert "No host &#x27;nope&#x27;." in unknown.content.decode()
