"""Probe drift goes through the alert rules; old channels carry over by migration."""

import importlib

import pytest
from django.utils import timezone

from pi_dashboard.alerts.models import Alert, AlertRule
from pi_dashboard.probes.models import Drift, Endpoint, ProbeRun, Trigger
from tests.alerts.conftest import deliver_queued, evaluate
from tests.alerts.receivers import HttpReceiver

migration = importlib.import_module(
    "pi_dashboard.alerts.migrations.0002_evaluate_task_channels_drift_rule"
)


@pytest.mark.django_db
def test_drift_fires_the_migrated_drift_rule(channel, receiver: HttpReceiver) -> None:
    rule = AlertRule.objects.get(name="Probe verdict drift")
    rule.channels.add(channel)
    endpoint = Endpoint.objects.create(
        name="ep",
        base_url="http://127.0.0.1:9/v1",
        server_model="m",
        model_key="scripted/m",
        provider="scripted",
    )
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger=Trigger.API)
    Drift.objects.create(
        endpoint=endpoint,
        run=run,
        model_key="scripted/m",
        previous_verdict="native",
        verdict="none",
        at=timezone.now(),
    )
    evaluate()
    alert = Alert.objects.get()
    assert alert.evidence_url == f"/probes/runs/{run.pk}/"
    deliver_queued()
    assert receiver.titles() == [
        "[pi-dashboard] FIRING: Probe verdict drift: scripted/m via ep: "
        f"{Drift.objects.get().summary}"
    ]


@pytest.mark.parametrize(
    ("kind", "target", "url"),
    [
        (
            "webhook",
            "https://hooks.example.test/x?token=t",
            "jsons://hooks.example.test/x?token=t",
        ),
        ("webhook", "http://10.0.0.5:8080/h", "json://10.0.0.5:8080/h"),
        (
            "slack",
            "https://hooks.slack.com/services/A/B/C",
            "https://hooks.slack.com/services/A/B/C",
        ),
        (
            "email",
            "a@x.test, b@x.test",
            "mailto://localhost:25?to=a@x.test,b@x.test&from=pi-dashboard@localhost",
        ),
    ],
)
def test_old_channels_become_apprise_urls(kind: str, target: str, url: str) -> None:
    assert migration.apprise_url(kind, target) == url
