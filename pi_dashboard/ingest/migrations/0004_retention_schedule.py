"""Schedule the retention sweep every hour (django-celery-beat)."""

from django.db import migrations

TASK_NAME = "ingest: retention"


def schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_hour, _ = IntervalSchedule.objects.get_or_create(every=1, period="hours")
    PeriodicTask.objects.update_or_create(
        name=TASK_NAME,
        defaults={
            "task": "ingest.retention_apply",
            "interval": every_hour,
            "enabled": True,
            "description": (
                "Delete old snapshots, event and corpus lines and rollups "
                "(PI_*_RETENTION_* settings)."
            ),
        },
    )


def unschedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=TASK_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0003_retention"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
