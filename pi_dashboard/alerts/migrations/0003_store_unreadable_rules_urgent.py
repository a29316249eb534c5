"""Rules on `store_unreadable` are always urgent (services.URGENT_SIGNALS): mark the
ones created before that was enforced."""

from typing import Any

from django.db import migrations


def urgent(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "AlertRule").objects.filter(
        signal="store_unreadable"
    ).update(is_urgent=True)


class Migration(migrations.Migration):
    dependencies = [("alerts", "0002_evaluate_task_channels_drift_rule")]

    operations = [migrations.RunPython(urgent, migrations.RunPython.noop)]
