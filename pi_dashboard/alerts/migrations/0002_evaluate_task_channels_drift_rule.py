"""Beat's evaluation task; today's drift channels carried over as Apprise channels,
with a "probe verdict drift" rule that sends to them (drift now goes through rules)."""

from urllib.parse import quote, urlsplit

from django.conf import settings
from django.db import migrations

TASK_NAME = "alerts.evaluate"
DRIFT_RULE = "Probe verdict drift"


def apprise_url(kind, target):
    """The Apprise URL of a probes channel (webhook, slack, email)."""
    if kind == "email":
        to = ",".join(a.strip() for a in target.split(",") if a.strip())
        auth = ""
        if settings.EMAIL_HOST_USER:
            auth = f"{quote(settings.EMAIL_HOST_USER, safe='')}:{quote(settings.EMAIL_HOST_PASSWORD, safe='')}@"
        scheme = "mailtos" if settings.EMAIL_USE_TLS else "mailto"
        return (
            f"{scheme}://{auth}{settings.EMAIL_HOST}:{settings.EMAIL_PORT}"
            f"?to={quote(to, safe=',@')}&from={quote(settings.DEFAULT_FROM_EMAIL, safe='@')}"
        )
    if kind == "slack" and urlsplit(target).hostname == "hooks.slack.com":
        return target  # Apprise reads Slack's own webhook URLs
    parts = urlsplit(target)
    scheme = "jsons" if parts.scheme == "https" else "json"
    return f"{scheme}://{target.split('://', 1)[1]}"


def forward(apps, schema_editor):
    from pi_dashboard.probes import crypto

    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(
        every=settings.PI_ALERTS_EVALUATE_SECONDS, period="seconds"
    )
    PeriodicTask.objects.get_or_create(
        name=TASK_NAME,
        defaults={
            "task": "pi_dashboard.alerts.tasks.alerts_evaluate",
            "interval": every,
        },
    )
    Old = apps.get_model("probes", "NotificationChannel")
    Channel = apps.get_model("alerts", "Channel")
    AlertRule = apps.get_model("alerts", "AlertRule")
    carried = []
    for old in Old.objects.all():
        try:
            target = crypto.decrypt(old.target_encrypted)
        except Exception:  # noqa: S112
            continue  # unreadable secret (SECRET_KEY rotated): re-enter it by hand
        url = apprise_url(old.kind, target)
        parts = urlsplit(url)
        channel, _ = Channel.objects.get_or_create(
            name=old.name,
            defaults={
                "url_encrypted": crypto.encrypt(url),
                "url_hint": f"{parts.scheme}://{parts.hostname or ''}/…",
                "is_enabled": old.is_enabled,
            },
        )
        carried.append(channel)
    rule, _ = AlertRule.objects.get_or_create(
        name=DRIFT_RULE,
        defaults={
            "signal": "probe_drift",
            "threshold": 1,
            "window_minutes": 60,
            "is_enabled": True,
        },
    )
    if carried:
        rule.channels.add(*carried)


def backward(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name=TASK_NAME
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("alerts", "0001_initial"),
        ("probes", "0002_sweep_periodic_task"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forward, backward)]
