"""A covering index for the alert evaluation's rollup scan (alerts.measures.Sums).

The scan sums the wanted keys' hourly cells of the longest window per host × model:
    SELECT dimension, key, host_id, model_id, sum(count) FILTER (WHERE bucket >= …)
    FROM ingest_rollup
    WHERE dimension = %s AND key = ANY(%s) AND bucket >= %s AND bucket <= %s
    GROUP BY 1, 2, 3, 4
With host, model and count included it is an index-only scan of just those cells.
Built concurrently: the table is the biggest one ingest writes.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("fleet", "0004_agent_reports_binding_change_command"),
        ("ingest", "0012_snapshot_seq"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="rollup",
            index=models.Index(
                fields=["dimension", "key", "bucket"],
                include=("host", "model", "count"),
                name="rollup_alerts_scan",
            ),
        ),
    ]
