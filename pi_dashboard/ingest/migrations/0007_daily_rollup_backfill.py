"""Fill the daily rollup level from the hourly rows stored before it existed.

One set-based statement: each day's row is the sum of its hourly rows (UTC days),
exactly what ingest would have written (the outcome dimension only, as ingest). Reversing empties the table.
"""

from django.db import migrations

BACKFILL = """
INSERT INTO ingest_dailyrollup (bucket, host_id, model_id, dimension, key, count)
SELECT date_trunc('day', bucket, 'UTC'), host_id, model_id, dimension, key,
       sum(count)
FROM ingest_rollup
WHERE dimension = 'outcome'
GROUP BY 1, 2, 3, 4, 5
ORDER BY 1, 2, 3, 4, 5
ON CONFLICT (bucket, host_id, model_id, dimension, key)
DO UPDATE SET count = EXCLUDED.count
"""


class Migration(migrations.Migration):
    dependencies = [("ingest", "0006_daily_rollup")]

    operations = [
        migrations.RunSQL(BACKFILL, "DELETE FROM ingest_dailyrollup"),
    ]
