"""Leave room in rollup pages so count updates are HOT (no index writes).

Every ingest batch bumps a few hundred rollup cells. `count` is in no index, so an
update can stay on its page (heap-only tuple) and skip all four indexes, but only if
the page has free space; at the default fillfactor (100) pages are full and every
bump writes a new entry into each index.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ingest", "0004_retention_schedule")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE ingest_rollup SET (fillfactor = 50)",
            "ALTER TABLE ingest_rollup RESET (fillfactor)",
        )
    ]
