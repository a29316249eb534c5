"""The alerts' rollup index without `count`, so ingest's upserts stay HOT updates.

An index that holds `count` must be rewritten on every increment, and PostgreSQL can
then no longer update the row in place (a HOT update, what `0005_rollup_fillfactor`
leaves room for). Built concurrently: the table is the biggest one ingest writes.
"""

from django.contrib.postgres.operations import (
    AddIndexConcurrently,
    RemoveIndexConcurrently,
)
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("ingest", "0013_rollup_alerts_scan_index"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="rollup",
            index=models.Index(
                fields=["dimension", "key", "bucket"],
                include=("host", "model"),
                name="rollup_alerts_scan_hot",
            ),
        ),
        RemoveIndexConcurrently(model_name="rollup", name="rollup_alerts_scan"),
    ]
