"""Schedule the command expiry sweep every minute (django-celery-beat)."""

from django.db import migrations

TASK_NAME = "control: expire commands"


def schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_minute, _ = IntervalSchedule.objects.get_or_create(every=60, period="seconds")
    PeriodicTask.objects.update_or_create(
        name=TASK_NAME,
        defaults={
            "task": "control.commands_expire",
            "interval": every_minute,
            "enabled": True,
            "description": "Expire commands no agent acked before their deadline.",
        },
    )


def unschedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=TASK_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("control", "0002_command_baseline"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
