"""Register the sweep that re-sends probe runs whose worker died (every minute)."""

from django.db import migrations

NAME = "probes.sweep-stale-runs"


def add_sweep(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_minute, _ = IntervalSchedule.objects.get_or_create(every=60, period="seconds")
    PeriodicTask.objects.get_or_create(
        name=NAME,
        defaults={
            "task": "pi_dashboard.probes.tasks.runs_sweep",
            "interval": every_minute,
        },
    )


def remove_sweep(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name=NAME
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(add_sweep, remove_sweep)]
